/**
 * The schema, as ordered migrations. Both backends (PGlite and PostgreSQL) run exactly these
 * statements. Never edit an applied migration; add the next one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'foundation',
    sql: `
CREATE TABLE environments (
  id          text PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE gateway_clients (
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name            text NOT NULL,
  secret_hash     text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz
);

-- client_secret holds a sealed value (see secrets/keyring.ts), never plaintext.
CREATE TABLE connections (
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name            text NOT NULL,
  provider        text NOT NULL,
  client_id       text NOT NULL,
  client_secret   text NOT NULL,
  scopes          text[] NOT NULL DEFAULT '{}',
  sandbox         boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, name)
);
`,
  },
  {
    version: 2,
    name: 'connected_accounts',
    sql: `
-- access_token and refresh_token hold sealed values. token_version grows on every change of the
-- token set, so a refresh can tell whether another process got there first.
CREATE TABLE connected_accounts (
  id                text PRIMARY KEY,
  environment_id    text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  connection_id     text NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  identifier        text NOT NULL,
  status            text NOT NULL CHECK (status IN ('PENDING_AUTH', 'ACTIVE', 'EXPIRED', 'DISCONNECTED')),
  status_reason     text,
  access_token      text,
  refresh_token     text,
  token_expires_at  timestamptz,
  token_version     integer NOT NULL DEFAULT 0,
  scopes            text[] NOT NULL DEFAULT '{}',
  provider_metadata jsonb NOT NULL DEFAULT '{}',
  last_used_at      timestamptz,
  last_refreshed_at timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (connection_id, identifier)
);

CREATE INDEX connected_accounts_identifier ON connected_accounts (environment_id, identifier);

-- Only a hash of the link token is kept: the link itself is a bearer credential.
CREATE TABLE authorization_links (
  token_hash    text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES connected_accounts(id) ON DELETE CASCADE,
  redirect_url  text,
  caller_state  text,
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per trip to the provider: the OAuth state (hashed) and the PKCE verifier (sealed).
CREATE TABLE authorization_requests (
  id             text PRIMARY KEY,
  state_hash     text NOT NULL UNIQUE,
  account_id     text NOT NULL REFERENCES connected_accounts(id) ON DELETE CASCADE,
  connection_id  text NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  code_verifier  text,
  redirect_url   text,
  caller_state   text,
  expires_at     timestamptz NOT NULL,
  used_at        timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 3,
    name: 'executions',
    sql: `
-- One row per tool execution: what ran, for whom, how it ended. Never inputs, outputs or secrets.
CREATE TABLE executions (
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tool_name       text NOT NULL,
  tool_version    text,
  account_id      text REFERENCES connected_accounts(id) ON DELETE SET NULL,
  connection_name text,
  identifier      text,
  status          text NOT NULL CHECK (status IN ('success', 'error')),
  error_code      text,
  upstream_calls  integer NOT NULL DEFAULT 0,
  duration_ms     integer NOT NULL,
  started_at      timestamptz NOT NULL,
  finished_at     timestamptz NOT NULL
);
`,
  },
  {
    version: 4,
    name: 'authorization-browser-binding',
    sql: `
-- The browser that opened the link: a hash of the value of a cookie set there, checked at the callback.
ALTER TABLE authorization_requests ADD COLUMN browser_hash text;
`,
  },
  {
    version: 5,
    name: 'refresh-lease',
    sql: `
-- Who is refreshing an account's token, until when: the provider call runs outside any transaction,
-- and a claimant that dies leaves a lease that simply runs out.
ALTER TABLE connected_accounts ADD COLUMN refresh_lease_owner text;
ALTER TABLE connected_accounts ADD COLUMN refresh_lease_until timestamptz;
`,
  },
  {
    version: 6,
    name: 'connection-settings',
    sql: `
-- Microsoft's directory (tenant) the connection signs users in with; the app's name on Portico's pages.
ALTER TABLE connections ADD COLUMN tenant text;
ALTER TABLE connections ADD COLUMN display_name text;
`,
  },
  {
    version: 7,
    name: 'events-and-webhooks',
    sql: `
-- The transactional outbox: one row per state change, written in the change's own transaction.
-- seq orders events (listing, per-subject delivery order); subject is the account or connection
-- whose events must arrive in order. data is the resource as the API shows it, never a secret.
CREATE TABLE events (
  seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  type            text NOT NULL,
  subject         text,
  data            jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX events_environment_seq ON events (environment_id, seq);

CREATE INDEX events_created_at ON events (created_at);

-- secret and previous_secret hold sealed values; the previous one signs too until it runs out.
CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  environment_id              text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  url                         text NOT NULL,
  description                 text,
  events                      text[] NOT NULL,
  enabled                     boolean NOT NULL DEFAULT true,
  disabled_reason             text,
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);

-- One row per (endpoint, event) to send. next_attempt_at is also the claim's lease: a claimed
-- delivery is pushed past the attempt's timeout, so one whose worker died comes due again.
CREATE TABLE webhook_deliveries (
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id         text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  event_seq        bigint NOT NULL,
  subject          text,
  status           text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  claimed_by       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  delivered_at     timestamptz,
  PRIMARY KEY (endpoint_id, event_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE INDEX webhook_deliveries_subject ON webhook_deliveries (endpoint_id, subject, event_seq) WHERE status = 'pending';

CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- The delivery log: what each attempt got back (a receiver's body is kept to 1 KiB).
CREATE TABLE webhook_attempts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id  text NOT NULL,
  event_id     text NOT NULL,
  attempt      integer NOT NULL,
  status_code  integer,
  duration_ms  integer NOT NULL,
  error        text,
  response_body text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (endpoint_id, event_id) REFERENCES webhook_deliveries (endpoint_id, event_id) ON DELETE CASCADE
);

CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
`,
  },
  {
    version: 8,
    name: 'mcp-tokens',
    sql: `
-- Tokens an application mints for one end user's MCP client: only the hash is kept. A null list
-- allows every connection (or tool) of the environment.
CREATE TABLE mcp_tokens (
  id                text PRIMARY KEY,
  environment_id    text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  client_id         text NOT NULL,
  identifier        text NOT NULL,
  token_hash        text NOT NULL UNIQUE,
  connection_names  text[],
  tools             text[],
  expires_at        timestamptz,
  revoked_at        timestamptz,
  last_used_at      timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_tokens_identifier ON mcp_tokens (environment_id, identifier);
`,
  },
  {
    version: 10,
    name: 'dashboard-admins',
    sql: `
-- Operators of the dashboard. password_hash is scrypt (salt and cost in the value); failed_attempts
-- and locked_until slow down password guessing per account.
CREATE TABLE admin_users (
  id               text PRIMARY KEY,
  environment_id   text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  username         text NOT NULL UNIQUE,
  password_hash    text NOT NULL,
  failed_attempts  integer NOT NULL DEFAULT 0,
  locked_until     timestamptz,
  last_sign_in_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- Signed-in browsers: only the hash of the session cookie's value is kept; the CSRF token is a
-- second random value the page sends back in a header.
CREATE TABLE admin_sessions (
  token_hash   text PRIMARY KEY,
  admin_id     text NOT NULL REFERENCES admin_users(id) ON DELETE CASCADE,
  csrf_token   text NOT NULL,
  expires_at   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX admin_sessions_admin ON admin_sessions (admin_id);
`,
  },
  {
    version: 11,
    name: 'user-verification-and-redirect-allowlist',
    sql: `
-- A link may ask the application to verify its user before the account becomes ACTIVE: the browser
-- then goes to user_verify_url after consent, and the token set waits here (sealed) until the
-- application confirms the identifier; expires_at is then the end of the verification window.
ALTER TABLE authorization_links ADD COLUMN user_verify_url text;
ALTER TABLE authorization_requests ADD COLUMN user_verify_url text;
ALTER TABLE authorization_requests ADD COLUMN pending_tokens text;
ALTER TABLE authorization_requests ADD COLUMN verified_at timestamptz;

-- Places an environment's links may send the browser back to, on top of PORTICO_REDIRECT_URL_ALLOWLIST.
-- NULL or empty: only the global list applies.
ALTER TABLE environments ADD COLUMN redirect_url_allowlist text[];
`,
  },
  {
    version: 12,
    name: 'admin-session-csrf-hash',
    sql: `
-- A session's CSRF token is no longer kept as it is, only its SHA-256: the token is now derived from
-- the session cookie's value, which the store never held. Sessions signed in before cannot be
-- carried over, so they are signed out: their browsers are sent back to the sign-in page.
DELETE FROM admin_sessions;
ALTER TABLE admin_sessions RENAME COLUMN csrf_token TO csrf_token_hash;
`,
  },
  {
    version: 13,
    name: 'custom-providers',
    sql: `
-- An environment's own provider definitions (JSON, validated against providers/provider.schema.json
-- before they are stored); a connection names a built-in provider or one of these by key.
CREATE TABLE custom_providers (
  environment_id text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  key            text NOT NULL,
  definition     jsonb NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (environment_id, key)
);
-- Values of the provider's connection parameters (a subdomain, a shop), as {"name": "value"}.
ALTER TABLE connections ADD COLUMN parameters jsonb;
`,
  },
  {
    version: 14,
    name: 'environment-branding',
    sql: `
-- The application's name and look on Portico's pages for this environment's end users:
-- {display_name, logo_url, accent_color, support_url}, every field optional.
ALTER TABLE environments ADD COLUMN branding jsonb;
`,
  },
  {
    version: 15,
    name: 'mcp-oauth',
    sql: `
-- MCP clients that connect with OAuth (the MCP authorization specification). Where an environment's
-- application signs its end users in: the authorization endpoint sends the browser there.
CREATE TABLE mcp_oauth_settings (
  environment_id  text PRIMARY KEY REFERENCES environments(id) ON DELETE CASCADE,
  sign_in_url     text NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Clients registered dynamically (RFC 7591); only the hash of a secret is kept. A client named by
-- its metadata document's URL is not stored: the document is fetched (and cached briefly) instead.
CREATE TABLE mcp_oauth_clients (
  id                          text PRIMARY KEY,
  secret_hash                 text,
  client_name                 text,
  redirect_uris               text[] NOT NULL,
  token_endpoint_auth_method  text NOT NULL,
  metadata                    jsonb NOT NULL,
  last_used_at                timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_oauth_clients_unused ON mcp_oauth_clients (created_at) WHERE last_used_at IS NULL;

-- One authorization request: pending until the application approves or denies it. Approved, it holds
-- the hash of its authorization code and what was granted; exchanged, the grant the code became.
CREATE TABLE mcp_oauth_requests (
  id                text PRIMARY KEY,
  environment_id    text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  client_id         text NOT NULL,
  redirect_uri      text NOT NULL,
  state             text,
  code_challenge    text NOT NULL,
  resource          text NOT NULL,
  status            text NOT NULL DEFAULT 'pending',
  expires_at        timestamptz NOT NULL,
  identifier        text,
  connection_names  text[],
  tools             text[],
  approved_by       text,
  code_hash         text UNIQUE,
  code_expires_at   timestamptz,
  code_used_at      timestamptz,
  grant_id          text,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_oauth_requests_created ON mcp_oauth_requests (created_at);

-- What one approval allows one client, for as long as its refresh tokens are used: a token family.
CREATE TABLE mcp_oauth_grants (
  id                text PRIMARY KEY,
  environment_id    text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  client_id         text NOT NULL,
  identifier        text NOT NULL,
  connection_names  text[],
  tools             text[],
  resource          text NOT NULL,
  approved_by       text NOT NULL,
  revoked_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now()
);

-- Every refresh token a grant issued (hashes), with the access token (mcp_tokens) issued beside it. A
-- rotated one presented again revokes the grant and every access token it issued.
CREATE TABLE mcp_oauth_refresh_tokens (
  token_hash       text PRIMARY KEY,
  grant_id         text NOT NULL REFERENCES mcp_oauth_grants(id) ON DELETE CASCADE,
  access_token_id  text NOT NULL,
  expires_at       timestamptz NOT NULL,
  rotated_at       timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_oauth_refresh_tokens_grant ON mcp_oauth_refresh_tokens (grant_id);
CREATE INDEX mcp_oauth_refresh_tokens_access ON mcp_oauth_refresh_tokens (access_token_id);
`,
  },
  {
    version: 16,
    name: 'proxy-tokens',
    sql: `
-- Proxy tokens: bound to one connection and one end user, so a provider SDK with nothing but a token
-- option reaches that account through the proxy. Only the hash of the token is kept.
CREATE TABLE proxy_tokens (
  id               text PRIMARY KEY,
  environment_id   text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  client_id        text NOT NULL,
  connection_name  text NOT NULL,
  identifier       text NOT NULL,
  token_hash       text NOT NULL UNIQUE,
  expires_at       timestamptz NOT NULL,
  revoked_at       timestamptz,
  last_used_at     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX proxy_tokens_environment_identifier ON proxy_tokens (environment_id, identifier);
`,
  },
  {
    version: 17,
    name: 'guardrails',
    sql: `
-- Policies: what agents may do with an environment's tools (guardrails/policy.ts validates them).
CREATE TABLE policies (
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name            text NOT NULL,
  definition      jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, name)
);

-- Calls counted against a policy's budget, per end user and window: one row per window, shared by
-- every replica.
CREATE TABLE policy_usage (
  policy_id     text NOT NULL REFERENCES policies(id) ON DELETE CASCADE,
  identifier    text NOT NULL,
  window_start  timestamptz NOT NULL,
  calls         integer NOT NULL,
  PRIMARY KEY (policy_id, identifier, window_start)
);
CREATE INDEX policy_usage_window ON policy_usage (window_start);

-- Calls held for a person's decision, with the exact input that runs once approved.
CREATE TABLE approvals (
  id               text PRIMARY KEY,
  environment_id   text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  policy_name      text NOT NULL,
  tool_name        text NOT NULL,
  connection_name  text NOT NULL,
  identifier       text NOT NULL,
  input            jsonb NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'used')),
  requested_by     text NOT NULL,
  decided_by       text,
  decided_at       timestamptz,
  reason           text,
  expires_at       timestamptz NOT NULL,
  used_at          timestamptz,
  execution_id     text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX approvals_environment_created ON approvals (environment_id, created_at DESC, id DESC);
CREATE INDEX approvals_live_expiry ON approvals (expires_at) WHERE status IN ('pending', 'approved');
`,
  },
  {
    version: 18,
    name: 'executions-at-scale',
    sql: `
-- IF NOT EXISTS: on a large existing table an operator may build these first with CREATE INDEX
-- CONCURRENTLY (same names) instead of blocking writes while the migration builds them.
-- The listing (newest first, keyset on started_at, id) and retention (oldest first) without a scan.
CREATE INDEX IF NOT EXISTS executions_environment_started ON executions (environment_id, started_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS executions_environment_identifier ON executions (environment_id, identifier, started_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS executions_started ON executions (started_at);
-- Deleting an account sets its executions' account_id to NULL: without this, a scan of them all.
CREATE INDEX IF NOT EXISTS executions_account ON executions (account_id) WHERE account_id IS NOT NULL;

-- Lists and background jobs over connected accounts, each on an index at a million accounts.
CREATE INDEX IF NOT EXISTS connected_accounts_environment ON connected_accounts (environment_id, id);
CREATE INDEX IF NOT EXISTS connected_accounts_idle_refresh ON connected_accounts ((COALESCE(last_refreshed_at, updated_at)))
  WHERE status = 'ACTIVE' AND refresh_token IS NOT NULL;
CREATE INDEX IF NOT EXISTS connected_accounts_pending ON connected_accounts (updated_at) WHERE status = 'PENDING_AUTH';
CREATE INDEX IF NOT EXISTS connected_accounts_expired ON connected_accounts (environment_id, updated_at)
  WHERE status = 'EXPIRED';
-- Foreign keys that cascade from a deleted account or event: otherwise each deletion scans the table.
CREATE INDEX IF NOT EXISTS authorization_links_account ON authorization_links (account_id);
CREATE INDEX IF NOT EXISTS authorization_requests_account ON authorization_requests (account_id);
CREATE INDEX IF NOT EXISTS webhook_attempts_delivery ON webhook_attempts (endpoint_id, event_id);

-- The dashboard's statistics, kept up to date with every batch of execution records instead of
-- aggregated from the executions table on each request. Durations are counted in buckets a quarter
-- of a power of two wide, enough for p50/p95 within about 10 %.
CREATE TABLE execution_rollups (
  environment_id   text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  hour             timestamptz NOT NULL,
  tool_name        text NOT NULL,
  status           text NOT NULL,
  error_code       text NOT NULL,
  duration_bucket  integer NOT NULL,
  count            bigint NOT NULL,
  PRIMARY KEY (environment_id, hour, tool_name, status, error_code, duration_bucket)
);
CREATE INDEX execution_rollups_hour ON execution_rollups (hour);

INSERT INTO execution_rollups
SELECT environment_id, date_trunc('hour', started_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', tool_name, status, coalesce(error_code, ''),
  floor(ln(greatest(duration_ms, 0) + 1) / ln(2) * 4)::integer, count(*)
FROM executions GROUP BY 1, 2, 3, 4, 5, 6;
`,
  },
  {
    version: 19,
    name: 'client-scopes',
    sql: `
-- What a gateway client may do (NULL: everything, as every client could before) and which
-- connections it may reach (NULL: all); who created it.
ALTER TABLE gateway_clients ADD COLUMN scopes text[];
ALTER TABLE gateway_clients ADD COLUMN connection_names text[];
ALTER TABLE gateway_clients ADD COLUMN created_by text;
`,
  },
  {
    version: 20,
    name: 'audit-log',
    sql: `
-- Who did what, when and from where: one row per operator or application action. Append-only: the
-- trigger below refuses UPDATE, DELETE and TRUNCATE, and there is no retention (export it to archive
-- it). No foreign key to environments: the record outlives what it describes.
CREATE TABLE audit_log (
  id             text PRIMARY KEY,
  environment_id text NOT NULL,
  at             timestamptz NOT NULL DEFAULT now(),
  actor_type     text NOT NULL CHECK (actor_type IN ('client', 'admin', 'cli', 'link', 'system')),
  actor_id       text NOT NULL,
  credential     text,
  action         text NOT NULL,
  resource_type  text,
  resource_id    text,
  ip             text,
  user_agent     text,
  request_id     text,
  status_code    integer,
  details        jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_environment_at ON audit_log (environment_id, at DESC, id DESC);
CREATE INDEX audit_log_actor ON audit_log (environment_id, actor_id, at DESC, id DESC);
CREATE INDEX audit_log_action ON audit_log (environment_id, action text_pattern_ops, at DESC, id DESC);
CREATE INDEX audit_log_resource ON audit_log (environment_id, resource_type, resource_id, at DESC, id DESC);
-- Written on one line: migrations are split into statements at a semicolon ending a line.
CREATE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = '42501'; END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change();

-- Dashboard roles: an admin changes everything; a viewer reads (never secrets).
ALTER TABLE admin_users ADD COLUMN role text NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'viewer'));
`,
  },
  {
    version: 21,
    name: 'execution-detail',
    sql: `
-- Enough of a call to debug it from its record alone: the problem's detail and field errors, the
-- input (secrets masked, capped near 8 KB), a summary of the output (never its body), what the
-- provider answered and how often it was asked, whether a token was refreshed, where the time went.
ALTER TABLE executions ADD COLUMN error_detail text;
ALTER TABLE executions ADD COLUMN error_fields jsonb;
ALTER TABLE executions ADD COLUMN input jsonb;
ALTER TABLE executions ADD COLUMN output_summary jsonb;
ALTER TABLE executions ADD COLUMN upstream_status integer;
ALTER TABLE executions ADD COLUMN attempts integer;
ALTER TABLE executions ADD COLUMN token_refreshed boolean;
ALTER TABLE executions ADD COLUMN timings jsonb;
`,
  },
  {
    version: 22,
    name: 'account-counts',
    sql: `
-- How many accounts each connection has in each status, for the dashboard's overview and the
-- /metrics gauge, without counting a million accounts on each page view or scrape. Triggers append
-- each change (exact, whatever path made it, in the same transaction) to account_count_deltas, an
-- append-only table no two transactions contend on (a shared counter row would be locked by every
-- account change on its connection until commit, and two transactions changing accounts in
-- different orders could deadlock on them); the gateway folds the deltas into account_counts every
-- few seconds. A reading sums both, so it is exact at any time.
-- No foreign keys: a deleted connection's accounts go by cascade and their trigger still records
-- them; emptied counts are removed when folded.
CREATE TABLE account_counts (
  connection_id  text NOT NULL,
  status         text NOT NULL,
  environment_id text NOT NULL,
  count          bigint NOT NULL,
  PRIMARY KEY (connection_id, status)
);
CREATE TABLE account_count_deltas (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  connection_id  text NOT NULL,
  status         text NOT NULL,
  environment_id text NOT NULL,
  delta          bigint NOT NULL
);
INSERT INTO account_counts (connection_id, status, environment_id, count)
  SELECT connection_id, status, min(environment_id), count(*) FROM connected_accounts GROUP BY 1, 2;
-- Each function is written on one line: migrations are split into statements at a semicolon ending a line.
CREATE FUNCTION account_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO account_count_deltas (connection_id, status, environment_id, delta) SELECT connection_id, status, min(environment_id), count(*) FROM new_rows GROUP BY 1, 2; RETURN NULL; END $$;
CREATE FUNCTION account_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO account_count_deltas (connection_id, status, environment_id, delta) SELECT connection_id, status, min(environment_id), -count(*) FROM old_rows GROUP BY 1, 2; RETURN NULL; END $$;
CREATE FUNCTION account_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO account_count_deltas (connection_id, status, environment_id, delta) VALUES (OLD.connection_id, OLD.status, OLD.environment_id, -1), (NEW.connection_id, NEW.status, NEW.environment_id, 1); RETURN NULL; END $$;
CREATE TRIGGER account_counts_insert AFTER INSERT ON connected_accounts
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION account_counts_inserted();
CREATE TRIGGER account_counts_delete AFTER DELETE ON connected_accounts
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION account_counts_deleted();
CREATE TRIGGER account_counts_update AFTER UPDATE OF status, connection_id ON connected_accounts
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.connection_id IS DISTINCT FROM NEW.connection_id)
  EXECUTE FUNCTION account_counts_moved();
`,
  },
  {
    version: 23,
    name: 'executions-errors-index',
    sql: `
-- The failed calls, newest first (the dashboard's and the API's status=error filter): errors are
-- rare in a healthy deployment, and finding 50 of them along the all-executions index read
-- thousands of rows per page at 0.1 %. Partial, so it holds only the errors. On a big table create
-- it CONCURRENTLY first under this name (see the scaling guide).
CREATE INDEX IF NOT EXISTS executions_environment_errors ON executions (environment_id, started_at DESC, id DESC)
  WHERE status = 'error';
`,
  },
  {
    version: 24,
    name: 'sandbox-state',
    sql: `
-- The embedded sandbox emulators' grants and tokens, so a restart keeps every sandbox account
-- refreshable (they lived only in memory). One sealed JSON document per emulator set.
CREATE TABLE sandbox_state (
  id         text PRIMARY KEY,
  state      text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 25,
    name: 'link-resume',
    sql: `
-- A link's first "Continue" spends it for everyone but the browser that pressed it: that browser
-- holds a cookie whose hash is resume_hash and may start the trip again until the link expires or
-- an authorization begun from it succeeds (which clears resume_hash through the request's link_hash).
ALTER TABLE authorization_links ADD COLUMN resume_hash text;
ALTER TABLE authorization_requests ADD COLUMN link_hash text;
`,
  },
  {
    version: 26,
    name: 'connections-mcp-server',
    sql: `
-- A connection to a remote MCP server keeps what Portico discovered from it when the connection
-- was created (protected-resource and authorization-server metadata, how the client registered):
-- per connection, since a URL template and the registration are the connection's.
ALTER TABLE connections ADD COLUMN IF NOT EXISTS mcp_server jsonb;
`,
  },
  {
    version: 27,
    name: 'triggers',
    sql: `
-- Trigger subscriptions: what to watch at a provider for one connected account, where its change
-- cursor stands and how healthy it is. The poller of whichever replica claims a due row holds it
-- for lease_until (next_poll_at is pushed there too, so a killed replica's row comes due again when
-- its lease runs out). A paused row waits at next_poll_at 'infinity' until resumed, or, when its
-- account stopped being ACTIVE, until the account moves again (the trigger below).
CREATE TABLE trigger_subscriptions (
  id                    text PRIMARY KEY,
  environment_id        text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  connection_id         text NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  account_id            text NOT NULL REFERENCES connected_accounts(id) ON DELETE CASCADE,
  identifier            text NOT NULL,
  trigger_type          text NOT NULL,
  config                jsonb NOT NULL DEFAULT '{}',
  config_key            text NOT NULL,
  interval_seconds      integer NOT NULL,
  cursor                jsonb,
  state                 text NOT NULL CHECK (state IN ('active', 'degraded', 'failing', 'paused')),
  pause_reason          text CHECK (pause_reason IN ('requested', 'account_not_active')),
  consecutive_failures  integer NOT NULL DEFAULT 0,
  last_success_at       timestamptz,
  last_error            text,
  last_error_at         timestamptz,
  last_event_at         timestamptz,
  next_poll_at          timestamptz NOT NULL DEFAULT now(),
  lease_owner           text,
  lease_until           timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, trigger_type, config_key)
);
CREATE INDEX trigger_subscriptions_due ON trigger_subscriptions (next_poll_at);
CREATE INDEX trigger_subscriptions_environment ON trigger_subscriptions (environment_id, id);
CREATE INDEX trigger_subscriptions_account ON trigger_subscriptions (account_id);

-- What a subscription has seen of each item (a calendar event, a file, a CRM record) and in which
-- version: a change is reported once however often the provider lists it, an item it has not seen
-- is "created", and a full resync after an expired cursor reports only what differs.
CREATE TABLE trigger_items (
  subscription_id  text NOT NULL REFERENCES trigger_subscriptions(id) ON DELETE CASCADE,
  item_id          text NOT NULL,
  version          text NOT NULL,
  PRIMARY KEY (subscription_id, item_id)
);

-- An account that changes status has its triggers looked at now: one that stopped being ACTIVE
-- pauses them (with its event), one authorized again resumes those it paused. Written on one line:
-- migrations are split into statements at a semicolon ending a line.
CREATE FUNCTION trigger_subscriptions_account_moved() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE trigger_subscriptions SET next_poll_at = now() WHERE account_id = NEW.id AND (pause_reason IS NULL OR pause_reason = 'account_not_active'); RETURN NULL; END $$;
CREATE TRIGGER trigger_subscriptions_account_status AFTER UPDATE OF status ON connected_accounts
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION trigger_subscriptions_account_moved();
`,
  },
  {
    version: 28,
    name: 'link-credential-entries',
    sql: `
-- Credentials entered on the hosted form of one link (each may be a user-info request to the
-- provider): bounded, after which the link is locked.
ALTER TABLE authorization_links ADD COLUMN IF NOT EXISTS credential_entries integer NOT NULL DEFAULT 0;
`,
  },
  {
    version: 29,
    name: 'audit-failed-sign-in-retention',
    sql: `
-- Failed dashboard sign-ins are recorded for anyone who tries, signed in or not: they are kept for
-- PORTICO_FAILED_SIGN_IN_RETENTION_DAYS, then deleted. Every other entry stays append-only
-- (UPDATE, DELETE and TRUNCATE still refused). Written on one line: migrations are split into
-- statements at a semicolon ending a line.
CREATE OR REPLACE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'DELETE' THEN IF OLD.action = 'admin.sign_in_failed' THEN RETURN OLD; END IF; END IF; RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = '42501'; END $$;
CREATE INDEX IF NOT EXISTS audit_log_failed_sign_ins ON audit_log (at) WHERE action = 'admin.sign_in_failed';
`,
  },
  {
    version: 30,
    name: 'toolsets',
    sql: `
-- Named sets of tools per environment (toolsets/definition.ts says what the definition holds):
-- what a listing, an adapter or an MCP URL of its own (/mcp/t/{name}) offers.
CREATE TABLE toolsets (
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name            text NOT NULL,
  definition      jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, name)
);
`,
  },
  {
    version: 31,
    name: 'trigger-channels',
    sql: `
-- Push channels of trigger subscriptions: a Google watch channel or a Graph subscription per
-- subscription whose type has one. The provider's change notifications wake the subscription's
-- poll (its cursor stays the one source of events); the replica holding the subscription's lease
-- opens and renews the channel. secret is the channel token (Google) or clientState (Graph),
-- sealed. channel_state on the subscription says whether push is working (NULL: the type has none,
-- or it has not been tried yet); channel_due_at when the channel next needs opening or renewing.
-- woken_at is set by a notification and cleared by the claim that polls for it: a notification
-- arriving during a poll brings the next poll forward to now.
CREATE TABLE trigger_channels (
  id               text PRIMARY KEY,
  subscription_id  text NOT NULL UNIQUE REFERENCES trigger_subscriptions(id) ON DELETE CASCADE,
  resource_id      text,
  secret           text NOT NULL,
  expires_at       timestamptz NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE trigger_subscriptions ADD COLUMN IF NOT EXISTS channel_state text CHECK (channel_state IN ('active', 'lapsed'));
ALTER TABLE trigger_subscriptions ADD COLUMN IF NOT EXISTS channel_error text;
ALTER TABLE trigger_subscriptions ADD COLUMN IF NOT EXISTS channel_due_at timestamptz;
ALTER TABLE trigger_subscriptions ADD COLUMN IF NOT EXISTS woken_at timestamptz;

-- The verification token Notion sent to a connection's webhook URL (the key of X-Notion-Signature),
-- sealed; one per connection, as Notion has one webhook subscription per integration.
CREATE TABLE trigger_push_secrets (
  id             text PRIMARY KEY,
  connection_id  text NOT NULL UNIQUE REFERENCES connections(id) ON DELETE CASCADE,
  secret         text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 32,
    name: 'executions-environment-unchecked',
    sql: `
-- An execution record's environment is the authenticated caller's, and environments are never
-- deleted (no route or job removes one), so the foreign key only checked what is always true, once
-- per record: a query of its own per row, about a sixth of the embedded store's CPU per record.
-- Were environments ever deleted, their executions would have to be deleted with them explicitly.
ALTER TABLE executions DROP CONSTRAINT IF EXISTS executions_environment_id_fkey;
`,
  },
];
