import type { McpServerRecord } from './connections.js';
import { PLAN_ONCE, type Queryable } from './db.js';
import { newId } from './ids.js';

export type AccountStatus = 'PENDING_AUTH' | 'ACTIVE' | 'EXPIRED' | 'DISCONNECTED';
export const ACCOUNT_STATUSES: AccountStatus[] = ['PENDING_AUTH', 'ACTIVE', 'EXPIRED', 'DISCONNECTED'];

/** A connected account as stored; `access_token` and `refresh_token` are sealed. */
export interface AccountRow {
  id: string;
  environment_id: string;
  connection_id: string;
  identifier: string;
  status: AccountStatus;
  status_reason: string | null;
  access_token: string | null;
  refresh_token: string | null;
  token_expires_at: Date | null;
  token_version: number;
  refresh_lease_owner: string | null;
  refresh_lease_until: Date | null;
  scopes: string[];
  provider_metadata: Record<string, unknown>;
  last_used_at: Date | null;
  last_refreshed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** An account with the connection facts every caller needs alongside it. */
export interface AccountWithConnection extends AccountRow {
  connection_name: string;
  provider: string;
  sandbox: boolean;
  /** The connection's place at the provider: its tenant and parameter values. */
  tenant: string | null;
  connection_parameters: Record<string, string> | null;
  /** A remote MCP server's discovered authorization facts (null for other providers). */
  mcp_server: McpServerRecord | null;
}

const CONNECTION_FACTS = `c.name AS connection_name, c.provider, c.sandbox, c.tenant,
  c.parameters AS connection_parameters, c.mcp_server`;
const SELECT_WITH_CONNECTION = `
  SELECT a.*, ${CONNECTION_FACTS}
  FROM connected_accounts a JOIN connections c ON c.id = a.connection_id`;

/**
 * The account for (connection, identifier), created as PENDING_AUTH when missing; `inserted` says
 * which (a row the statement inserted has no deleting transaction yet: xmax 0).
 */
export async function upsertPendingAccount(
  db: Queryable,
  environmentId: string,
  connectionId: string,
  identifier: string,
): Promise<AccountRow & { inserted: boolean }> {
  const rows = await db.query<AccountRow & { inserted: boolean }>(
    `INSERT INTO connected_accounts (id, environment_id, connection_id, identifier, status)
     VALUES ($1, $2, $3, $4, 'PENDING_AUTH')
     ON CONFLICT (connection_id, identifier) DO UPDATE SET updated_at = connected_accounts.updated_at
     RETURNING *, (xmax::text = '0') AS inserted`,
    [newId('ca'), environmentId, connectionId, identifier],
  );
  return rows[0]!;
}

export async function findAccount(db: Queryable, id: string): Promise<AccountWithConnection | undefined> {
  const rows = await db.query<AccountWithConnection>(`${SELECT_WITH_CONNECTION} WHERE a.id = $1`, [id]);
  return rows[0];
}

/** Same as findAccount, holding the row lock until the transaction ends. */
export async function lockAccount(tx: Queryable, id: string): Promise<AccountRow | undefined> {
  const rows = await tx.query<AccountRow>('SELECT * FROM connected_accounts WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

export async function findAccountByIdentifier(
  db: Queryable,
  environmentId: string,
  connectionName: string,
  identifier: string,
): Promise<AccountWithConnection | undefined> {
  const rows = await db.query<AccountWithConnection>(
    `${SELECT_WITH_CONNECTION} WHERE a.environment_id = $1 AND c.name = $2 AND a.identifier = $3`,
    [environmentId, connectionName, identifier],
  );
  return rows[0];
}

export interface AccountFilter {
  connectionName?: string;
  /** Only accounts on these connections (a caller limited to some: auth/access.ts). */
  connectionNames?: readonly string[];
  identifier?: string;
  status?: AccountStatus;
  provider?: string;
  /** Keyset pagination: ids strictly greater than this. */
  after?: string;
  limit: number;
}

/** What a listing shows of an account: never its sealed tokens or refresh lease, only what views read. */
export type AccountListing = Omit<
  AccountWithConnection,
  | 'access_token'
  | 'refresh_token'
  | 'refresh_lease_owner'
  | 'refresh_lease_until'
  | 'environment_id'
  | 'token_version'
  | 'last_refreshed_at'
  | 'tenant'
  | 'connection_parameters'
  | 'mcp_server'
  | 'sandbox'
>;

/** The accounts of a page, with their tokens (the token lifecycle's own reads). */
export async function listAccounts(
  db: Queryable,
  environmentId: string,
  filter: AccountFilter,
): Promise<AccountWithConnection[]> {
  const { where, params } = listQuery(environmentId, filter);
  return db.query<AccountWithConnection>(`${SELECT_WITH_CONNECTION} ${where}`, params);
}

/**
 * The accounts of a page as listings show them: without the sealed tokens, which were most of
 * each row's bytes and which the embedded store's driver decoded for nothing (a page of 20 cost a
 * third less without them), nor the columns no listing shows: the embedded store's driver copies
 * and decodes each field in JavaScript. Scopes come as JSON, which the drivers parse natively, not
 * as text[] (store/connections.ts LISTED_COLUMNS).
 */
export async function listAccountListings(
  db: Queryable,
  environmentId: string,
  filter: AccountFilter,
): Promise<AccountListing[]> {
  const { where, params } = listQuery(environmentId, filter);
  return db.query<AccountListing>(
    `${PLAN_ONCE}SELECT a.id, a.connection_id, a.identifier, a.status, a.status_reason, a.token_expires_at,
       to_json(a.scopes) AS scopes, a.provider_metadata, a.last_used_at, a.created_at, a.updated_at,
       c.name AS connection_name, c.provider
     FROM connected_accounts a JOIN connections c ON c.id = a.connection_id
     ${where}`,
    params,
  );
}

/**
 * A page's WHERE with only the filters given: each combination is a statement of its own, whose
 * one plan fits every call (PLAN_ONCE). Optional filters written as "$n IS NULL OR …" need a plan
 * per call, made for its values; on the embedded store that planning was most of a page of 20.
 */
function listQuery(environmentId: string, filter: AccountFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [environmentId];
  const conditions = ['a.environment_id = $1'];
  const where = (condition: (param: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(condition(`$${params.length}`));
  };
  if (filter.connectionName != null) where((p) => `c.name = ${p}`, filter.connectionName);
  if (filter.identifier != null) where((p) => `a.identifier = ${p}`, filter.identifier);
  if (filter.status != null) where((p) => `a.status = ${p}`, filter.status);
  if (filter.provider != null) where((p) => `c.provider = ${p}`, filter.provider);
  if (filter.after != null) where((p) => `a.id > ${p}`, filter.after);
  if (filter.connectionNames) where((p) => `c.name = ANY(${p}::text[])`, [...filter.connectionNames]);
  params.push(filter.limit);
  return { where: `WHERE ${conditions.join(' AND ')} ORDER BY a.id LIMIT $${params.length}`, params };
}

/**
 * Stores a new token set and releases any refresh lease; returns the new token version. With
 * `expectedVersion`, only if the row is still at that version (compare-and-swap): undefined when
 * another change came first.
 */
export async function storeTokens(
  db: Queryable,
  id: string,
  sealed: {
    accessToken: string;
    refreshToken: string | null;
    expiresAt: Date | null;
    scopes: string[];
    metadata?: Record<string, unknown>;
  },
  opts: { refreshed: boolean; expectedVersion?: number },
): Promise<number | undefined> {
  const rows = await db.query<{ token_version: number }>(
    `UPDATE connected_accounts SET
       status = 'ACTIVE', status_reason = NULL,
       access_token = $2, refresh_token = $3, token_expires_at = $4, scopes = $5,
       provider_metadata = COALESCE($6::jsonb, provider_metadata),
       token_version = token_version + 1,
       last_refreshed_at = CASE WHEN $7 THEN now() ELSE last_refreshed_at END,
       refresh_lease_owner = NULL, refresh_lease_until = NULL,
       updated_at = now()
     WHERE id = $1 AND ($8::integer IS NULL OR token_version = $8) RETURNING token_version`,
    [
      id,
      sealed.accessToken,
      sealed.refreshToken,
      sealed.expiresAt,
      sealed.scopes,
      sealed.metadata ? JSON.stringify(sealed.metadata) : null,
      opts.refreshed,
      opts.expectedVersion ?? null,
    ],
  );
  return rows[0]?.token_version;
}

/**
 * Takes the refresh lease of a (locked) account for `owner` unless another owner holds one that has
 * not run out; true when taken. Times are the database's, so replicas' clocks do not matter.
 */
export async function claimRefreshLease(
  tx: Queryable,
  id: string,
  owner: string,
  leaseMs: number,
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE connected_accounts
       SET refresh_lease_owner = $2, refresh_lease_until = now() + make_interval(secs => $3::double precision / 1000)
     WHERE id = $1 AND (refresh_lease_until IS NULL OR refresh_lease_until <= now() OR refresh_lease_owner = $2)
     RETURNING id`,
    [id, owner, leaseMs],
  );
  return rows.length > 0;
}

export async function releaseRefreshLease(db: Queryable, id: string, owner: string): Promise<void> {
  await db.query(
    `UPDATE connected_accounts SET refresh_lease_owner = NULL, refresh_lease_until = NULL
     WHERE id = $1 AND refresh_lease_owner = $2`,
    [id, owner],
  );
}

export async function deactivateAccount(
  db: Queryable,
  id: string,
  status: 'EXPIRED' | 'DISCONNECTED',
  reason: string,
): Promise<AccountRow | undefined> {
  const rows = await db.query<AccountRow>(
    `UPDATE connected_accounts SET status = $2, status_reason = $3, access_token = NULL, refresh_token = NULL,
       token_expires_at = NULL, token_version = token_version + 1, updated_at = now()
     WHERE id = $1 RETURNING *`,
    [id, status, reason],
  );
  return rows[0];
}

/** Writes a batch of last-used times in one statement. */
export async function touchAccounts(db: Queryable, lastUsed: Map<string, Date>): Promise<void> {
  if (!lastUsed.size) return;
  await db.query(
    `UPDATE connected_accounts a SET last_used_at = GREATEST(COALESCE(a.last_used_at, u.at), u.at)
     FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at) WHERE a.id = u.id`,
    [[...lastUsed.keys()], [...lastUsed.values()]],
  );
}

export async function accountsOfConnection(db: Queryable, connectionId: string): Promise<AccountRow[]> {
  return db.query<AccountRow>('SELECT * FROM connected_accounts WHERE connection_id = $1', [connectionId]);
}

/**
 * Deletes accounts that never finished authorization and can no longer: PENDING_AUTH with no link
 * and no trip to the provider still valid, the oldest `limit` at most per call (a backlog goes over
 * several runs instead of one long statement). Returns the accounts that went.
 */
export async function deleteAbandonedPendingAccounts(
  db: Queryable,
  limit = 1000,
): Promise<AccountWithConnection[]> {
  return db.query<AccountWithConnection>(
    // The oldest pending accounts first (on their index), then their links and trips probed one by
    // one (OFFSET 0 keeps each NOT EXISTS a per-row index lookup): an anti-join of the pending
    // accounts with all links would read the link tables whole.
    `WITH candidates AS MATERIALIZED (
       SELECT id FROM connected_accounts WHERE status = 'PENDING_AUTH'
       ORDER BY updated_at LIMIT $1 * 4
     ), abandoned AS MATERIALIZED (
       SELECT p.id FROM candidates p
       WHERE NOT EXISTS (
           SELECT 1 FROM authorization_links l WHERE l.account_id = p.id AND l.expires_at > now() OFFSET 0)
         AND NOT EXISTS (
           SELECT 1 FROM authorization_requests r WHERE r.account_id = p.id AND r.expires_at > now() OFFSET 0)
       LIMIT $1
     )
     DELETE FROM connected_accounts a USING connections c
     WHERE c.id = a.connection_id AND a.status = 'PENDING_AUTH' AND a.id = ANY(ARRAY(SELECT id FROM abandoned))
     RETURNING a.*, c.name AS connection_name, c.provider, c.sandbox, c.tenant, c.parameters AS connection_parameters, c.mcp_server`,
    [limit],
  );
}

/**
 * Active accounts whose refresh token has gone unused for `idleDays` of their provider (from
 * `byProvider`), oldest first: those at risk of the provider expiring it.
 */
export async function accountsWithIdleRefreshTokens(
  db: Queryable,
  byProvider: Array<{ provider: string; idleDays: number }>,
  limit: number,
): Promise<string[]> {
  if (!byProvider.length) return [];
  const rows = await db.query<{ id: string }>(
    `SELECT a.id FROM connected_accounts a
     JOIN connections c ON c.id = a.connection_id
     JOIN unnest($1::text[], $2::integer[]) AS p(provider, idle_days) ON p.provider = c.provider
     WHERE a.status = 'ACTIVE' AND a.refresh_token IS NOT NULL
       AND COALESCE(a.last_refreshed_at, a.updated_at) < now() - make_interval(days => p.idle_days)
     ORDER BY COALESCE(a.last_refreshed_at, a.updated_at)
     LIMIT $3`,
    [byProvider.map((p) => p.provider), byProvider.map((p) => p.idleDays), limit],
  );
  return rows.map((r) => r.id);
}

export interface AccountCount {
  connection_name: string;
  provider: string;
  status: AccountRow['status'];
  count: number;
}

/**
 * How many accounts each connection has in each status (the dashboard's overview, the /metrics
 * gauge): the folded counts plus the deltas not folded yet (migration 22), a few rows whatever the
 * number of accounts, where counting connected_accounts would read all of them on every page view
 * and scrape. Exact: both are read in one snapshot.
 */
export async function countAccounts(db: Queryable, environmentId?: string): Promise<AccountCount[]> {
  const rows = await db.query<AccountCount>(
    `SELECT c.name AS connection_name, c.provider, k.status, sum(k.count)::int AS count
     FROM (
       SELECT connection_id, status, environment_id, count FROM account_counts
       UNION ALL
       SELECT connection_id, status, environment_id, delta FROM account_count_deltas
     ) k JOIN connections c ON c.id = k.connection_id
     WHERE $1::text IS NULL OR k.environment_id = $1
     GROUP BY c.name, c.provider, k.status HAVING sum(k.count) > 0 ORDER BY c.name, k.status`,
    [environmentId ?? null],
  );
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}

/**
 * Folds up to `batch` of the oldest account count deltas into the counts, in one statement (the
 * counts' rows updated in key order, so concurrent folds on several replicas wait for one another
 * instead of deadlocking), then removes counts that came to zero (a deleted connection's). Returns
 * how many deltas were folded.
 */
export async function foldAccountCounts(db: Queryable, batch: number): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `WITH moved AS (
       DELETE FROM account_count_deltas WHERE id = ANY(ARRAY(
         SELECT id FROM account_count_deltas ORDER BY id LIMIT $1
       )) RETURNING connection_id, status, environment_id, delta
     ), upserted AS (
       INSERT INTO account_counts AS c (connection_id, status, environment_id, count)
       SELECT connection_id, status, min(environment_id), sum(delta) FROM moved
       GROUP BY 1, 2 ORDER BY 1, 2
       ON CONFLICT (connection_id, status) DO UPDATE SET count = c.count + excluded.count
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM moved)::int AS n, (SELECT count(*) FROM upserted)::int AS upserted`,
    [batch],
  );
  const folded = Number(rows[0]?.n ?? 0);
  if (folded) await db.query('DELETE FROM account_counts WHERE count = 0');
  return folded;
}

/** Accounts that became EXPIRED since `since`, most recent first. */
export async function recentlyExpiredAccounts(
  db: Queryable,
  environmentId: string,
  since: Date,
  limit: number,
  connectionNames: readonly string[] | null = null,
): Promise<AccountWithConnection[]> {
  return db.query<AccountWithConnection>(
    `${SELECT_WITH_CONNECTION}
     WHERE a.environment_id = $1 AND a.status = 'EXPIRED' AND a.updated_at >= $2
       AND ($4::text[] IS NULL OR c.name = ANY($4::text[]))
     ORDER BY a.updated_at DESC LIMIT $3`,
    [environmentId, since, limit, connectionNames ? [...connectionNames] : null],
  );
}
