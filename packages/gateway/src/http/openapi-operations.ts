import { ERROR_CODES, type ErrorCode, PROBLEM_CONTENT_TYPE, problemType } from '../errors/problem.js';

/**
 * What the OpenAPI document says about each operation beyond the routes' own request schemas:
 * a stable operationId (clients generated from the document name their methods after it, so it
 * must never change once published), a tag, a summary, a description, the success response and
 * the problem codes it can answer. Kept apart from the route files so the description of the API
 * reads as one piece and a test can check that every route has an entry.
 */
export interface OperationInfo {
  id: string;
  tag: Tag;
  summary: string;
  description: string;
  /** Success status and what it carries; a 204 or a redirect carries nothing; null: never succeeds. */
  success?: SuccessResponse | null;
  /** Other success answers the operation gives (a form page beside a redirect, a 202). */
  otherSuccesses?: SuccessResponse[];
  /** For routes that parse their body themselves (no body schema to generate it from). */
  requestBody?: object;
  /** Problem codes this operation can answer with, beyond the ones every operation can. */
  codes?: ErrorCode[];
  /** No gateway credential (public endpoints), or another credential than the gateway token. */
  security?: Array<Record<string, string[]>>;
}

export interface SuccessResponse {
  status: number;
  description: string;
  schema?: object;
  example?: unknown;
  /** What the body is when it is not JSON (HTML pages, streams); JSON when only a schema is given. */
  contentType?: string;
}

export const TAGS = [
  [
    'Authorization',
    'The gateway token (client credentials), hosted authorization pages and OAuth callbacks.',
  ],
  ['Connected accounts', 'End users’ accounts at providers: authorization links, imports and their state.'],
  ['Connections', 'An application’s OAuth app or credential settings for one provider.'],
  ['Providers', 'Built-in and custom provider definitions.'],
  ['Tools', 'Tool definitions in LLM formats and their execution.'],
  ['Proxy', 'Calls to a provider’s own API with the end user’s credential injected, and proxy tokens.'],
  ['Executions', 'The record of tool calls.'],
  ['Policies', 'Guardrails on tool calls: policies and the approvals they hold calls for.'],
  ['Events', 'What happened to connected accounts and tool calls.'],
  ['Webhooks', 'Endpoints that receive events, signed with Standard Webhooks.'],
  [
    'Triggers',
    'Subscriptions to changes at a provider (a calendar, a folder, CRM records), delivered as events.',
  ],
  ['MCP', 'The Model Context Protocol endpoint, its tokens and its OAuth authorization server.'],
  ['Environment', 'Per-environment settings: redirect allow-list and branding.'],
  ['Clients', 'Gateway clients (client_id and secret pairs) and the dashboard session.'],
  ['Audit', 'The append-only audit log and the dashboard’s admin accounts and roles.'],
  ['Sandbox', 'Controls of the built-in provider emulators (sandbox mode only).'],
  ['Health', 'Liveness and readiness probes.'],
] as const;

export type Tag = (typeof TAGS)[number][0];

const PUBLIC: Array<Record<string, string[]>> = [];

const obj = (
  description: string,
  properties?: Record<string, object>,
  example?: unknown,
  required?: string[],
) => ({
  type: 'object',
  description,
  ...(properties ? { properties } : {}),
  ...(required ? { required } : {}),
  additionalProperties: true,
  ...(example === undefined ? {} : { examples: [example] }),
});
const list = (item: string, example?: unknown) =>
  obj(`A page of ${item}.`, { data: { type: 'array', items: { type: 'object' } } }, example);

export const TOKEN_REQUEST = {
  type: 'object',
  description: 'The client_credentials grant (RFC 6749 §4.4) with the client’s credentials in the body.',
  required: ['grant_type', 'client_id', 'client_secret'],
  properties: {
    grant_type: { type: 'string', const: 'client_credentials' },
    client_id: { type: 'string', description: 'A gateway client’s id (cli_…).' },
    client_secret: { type: 'string', description: 'Its secret (pcs_…), shown once when it was created.' },
  },
};

const TOKEN_RESPONSE = obj(
  'An OAuth 2.0 access token response (RFC 6749 §5.1).',
  {
    access_token: { type: 'string', description: 'The gateway token: send it as `Authorization: Bearer …`.' },
    token_type: { type: 'string', const: 'Bearer' },
    expires_in: { type: 'integer', description: 'Seconds until the token expires.' },
  },
  { access_token: 'eyJhbGciOi…', token_type: 'Bearer', expires_in: 3600 },
  ['access_token', 'token_type', 'expires_in'],
);
const TOOL = obj(
  'A tool definition in the format asked for (json_schema by default).',
  {
    name: { type: 'string' },
    description: { type: 'string' },
    input_schema: { type: 'object' },
    tags: {
      type: 'array',
      items: { type: 'string' },
      description:
        'json_schema only: where the tool comes from (specification, compiled, remote-mcp), what it does (read-only or writes, destructive) and its provider’s category.',
    },
    score: {
      type: 'number',
      description:
        'json_schema with query only: how well the tool fits the query (compare within one answer).',
    },
  },
  {
    name: 'notes_data_fetch',
    description: 'Search the workspace’s pages and databases.',
    input_schema: { type: 'object' },
  },
  ['name'],
);
const EXECUTE_RESPONSE = obj(
  'What the tool returned, and the id of the execution record.',
  {
    data: { type: 'object', additionalProperties: true },
    execution_id: { type: 'string' },
  },
  { data: { id: '101', email: 'ada@example.com' }, execution_id: 'exe_01J…' },
  ['data', 'execution_id'],
);
const CONNECTION = obj('A connection (its secrets are never returned).', undefined, {
  name: 'google',
  provider: 'google',
  auth_type: 'OAUTH2',
  created_at: '2026-01-01T00:00:00.000Z',
});
const ACCOUNT = obj('A connected account.', undefined, {
  id: 'ca_01J…',
  connection_name: 'google',
  identifier: 'user-42',
  status: 'ACTIVE',
});
const LINK = obj('An authorization link to send the end user to.', {
  link: { type: 'string', format: 'uri' },
  expires_at: { type: 'string', format: 'date-time' },
});

const NULLABLE_STRING = { type: ['string', 'null'] };
const NULLABLE_INTEGER = { type: ['integer', 'null'] };
const EXECUTION_DETAIL = obj(
  'An execution record with what it takes to debug the call: the problem, the input (secrets masked, cut near 8 KB), the shape of the output (never its body), the provider’s last status, the attempts, whether a token was refreshed, and where the time went.',
  {
    id: { type: 'string' },
    tool_name: { type: 'string' },
    tool_version: NULLABLE_STRING,
    connected_account_id: NULLABLE_STRING,
    connection_name: NULLABLE_STRING,
    identifier: NULLABLE_STRING,
    status: { type: 'string', enum: ['success', 'error'] },
    error_code: NULLABLE_STRING,
    upstream_calls: { type: 'integer' },
    duration_ms: { type: 'integer' },
    started_at: { type: 'string', format: 'date-time' },
    finished_at: { type: 'string', format: 'date-time' },
    error: {
      type: ['object', 'null'],
      description: 'The problem the call answered with; null on success.',
      properties: {
        code: { type: 'string' },
        detail: NULLABLE_STRING,
        errors: {
          type: 'array',
          items: {
            type: 'object',
            properties: { path: { type: 'string' }, message: { type: 'string' } },
            required: ['path', 'message'],
          },
        },
      },
    },
    input: {
      description:
        'The tool input as sent: values under secret-looking keys and bearer tokens/JWTs are "[masked]"; past about 8 KB, "…truncated".',
    },
    output_summary: {
      type: ['object', 'null'],
      description:
        'On success: the output’s type, byte size, top-level keys, array item counts, and whether it names a next page.',
      properties: {
        type: { type: 'string' },
        bytes: { type: 'integer' },
        keys: { type: 'array', items: { type: 'string' } },
        item_counts: { type: 'object', additionalProperties: { type: 'integer' } },
        has_next_page: { type: 'boolean' },
      },
    },
    upstream_status: { ...NULLABLE_INTEGER, description: 'The provider’s last HTTP status.' },
    attempts: { ...NULLABLE_INTEGER, description: 'Requests sent to the provider, retries included.' },
    token_refreshed: {
      type: ['boolean', 'null'],
      description: 'Whether an access token was refreshed during the call.',
    },
    timings: {
      type: ['object', 'null'],
      description: 'Milliseconds per step: validation_ms, credential_ms, policy_ms, upstream_ms, total_ms.',
      additionalProperties: { type: 'number' },
    },
    links: {
      type: 'object',
      properties: {
        account: { ...NULLABLE_STRING, description: '/api/v1/connected-accounts/{id}' },
        connection: { ...NULLABLE_STRING, description: '/api/v1/connections/{name}' },
      },
    },
  },
  {
    id: 'exec_01J…',
    tool_name: 'notes_page_get',
    status: 'error',
    error_code: 'upstream_not_found',
    error: { code: 'upstream_not_found', detail: 'Notion has no such page…', errors: [] },
    input: { page_id: '59833787-2cf9-4fdf-8782-e53db20768a5', api_key: '[masked]' },
    output_summary: null,
    upstream_status: 404,
    attempts: 1,
    token_refreshed: false,
    timings: { validation_ms: 0.4, credential_ms: 0.2, policy_ms: 0.1, upstream_ms: 12.5, total_ms: 13.3 },
    links: { account: '/api/v1/connected-accounts/ca_01J…', connection: '/api/v1/connections/notion' },
  },
  ['id', 'tool_name', 'status', 'error', 'input', 'output_summary', 'links'],
);

const TRIGGER = obj('A trigger subscription and its health.', undefined, {
  id: 'trg_01J…',
  trigger_type: 'calendar_events',
  provider: 'google_calendar',
  connection_name: 'calendar',
  identifier: 'user-42',
  connected_account_id: 'ca_01J…',
  config: { calendar_id: 'primary' },
  interval_seconds: 60,
  state: 'active',
  pause_reason: null,
  consecutive_failures: 0,
  last_success_at: '2026-01-01T00:01:00.000Z',
  last_error: null,
  last_error_at: null,
  last_event_at: null,
  push: { state: 'active', error: null },
  next_poll_at: '2026-01-01T00:02:00.000Z',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:01:00.000Z',
});
const TRIGGER_TYPE = obj('A trigger type.', undefined, {
  name: 'calendar_events',
  provider: 'google_calendar',
  description: 'An event of a calendar was created, updated or cancelled.',
  changes: ['created', 'updated', 'cancelled'],
  mechanism: 'Calendar sync tokens',
  config_schema: { type: 'object' },
});
const ok = (description: string, schema?: object, example?: unknown) => ({
  status: 200,
  description,
  ...(schema ? { schema } : {}),
  ...(example === undefined ? {} : { example }),
});
const created = (description: string, schema?: object) => ({
  status: 201,
  description,
  ...(schema ? { schema } : {}),
});
const noContent = { status: 204, description: 'Done; no body.' };
const htmlPage = (description: string, status = 200): SuccessResponse => ({
  status,
  description,
  contentType: 'text/html',
  schema: { type: 'string', description: 'An HTML page for a person.' },
});
const EVENT_STREAM: SuccessResponse = {
  status: 200,
  description: 'An event stream (text/event-stream) of JSON-RPC notifications.',
  contentType: 'text/event-stream',
  schema: {
    type: 'string',
    description:
      'Server-sent events, each `data:` a JSON-RPC notification such as {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}.',
  },
};
const MCP_ACCEPTED: SuccessResponse = {
  status: 202,
  description: 'A JSON-RPC notification or response was accepted; no body.',
};

/** Keyed by the router's method and path (`:name` parameters, `*` for the proxy's rest of path). */
export const OPERATIONS: Record<string, OperationInfo> = {
  'GET /healthz': {
    id: 'getLiveness',
    tag: 'Health',
    summary: 'Liveness probe',
    description: 'Answers 200 while the process serves requests; checks nothing else.',
    success: ok('The process is up.', obj('Liveness.', { status: { type: 'string' } }, { status: 'ok' })),
    security: PUBLIC,
  },
  'GET /readyz': {
    id: 'getReadiness',
    tag: 'Health',
    summary: 'Readiness probe',
    description: 'Answers 200 when the store answers and migrations are applied, 503 otherwise.',
    success: ok('Ready for traffic.', obj('Readiness.', { status: { type: 'string' } }, { status: 'ok' })),
    codes: ['service_unavailable'],
    security: PUBLIC,
  },
  'POST /oauth/token': {
    id: 'createGatewayToken',
    tag: 'Authorization',
    summary: 'Get a gateway token (client credentials)',
    description:
      'The OAuth 2.0 client_credentials grant: send grant_type, client_id and client_secret as a form or JSON body (an Authorization header is ignored). The access token authorizes every /api/v1 call and the proxy.',
    success: ok('A gateway token.', TOKEN_RESPONSE),
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/TokenRequest' } },
        'application/json': {
          schema: { $ref: '#/components/schemas/TokenRequest' },
          example: { grant_type: 'client_credentials', client_id: 'cli_…', client_secret: 'pcs_…' },
        },
      },
    },
    codes: ['unsupported_grant_type', 'invalid_client', 'rate_limited'],
    security: PUBLIC,
  },
  'POST /push/google': {
    id: 'receiveGooglePush',
    tag: 'Triggers',
    summary: 'Google watch channel notifications',
    description:
      'Where Google Calendar and Drive watch channels of trigger subscriptions notify (no body; X-Goog-Channel-ID, X-Goog-Channel-Token, X-Goog-Resource-State). A notification whose channel token is not the channel’s is refused; one that is wakes the subscription’s poll.',
    success: { status: 204, description: 'Notification taken.' },
    codes: ['unauthenticated'],
    security: PUBLIC,
  },
  'POST /push/microsoft': {
    id: 'receiveGraphPush',
    tag: 'Triggers',
    summary: 'Microsoft Graph change notifications',
    description:
      'Where Graph subscriptions of trigger subscriptions notify: ?validationToken= is echoed as text/plain (the validation handshake); a notification batch whose clientState is not its subscription’s is refused. Lifecycle notifications renew (reauthorizationRequired) or reopen (subscriptionRemoved) the subscription.',
    success: { status: 202, description: 'Notifications taken.' },
    otherSuccesses: [
      { status: 200, description: 'The validation token, echoed.', contentType: 'text/plain' },
    ],
    codes: ['unauthenticated'],
    security: PUBLIC,
  },
  'POST /push/hubspot/:connection_id': {
    id: 'receiveHubSpotWebhook',
    tag: 'Triggers',
    summary: 'HubSpot webhook deliveries',
    description:
      'The target URL of a HubSpot app’s webhooks (the connection’s app). X-HubSpot-Signature-v3 is checked with the app’s client secret and X-HubSpot-Request-Timestamp must be within five minutes; each event’s portalId wakes the matching CRM trigger subscriptions of that account.',
    success: { status: 204, description: 'Delivery taken.' },
    codes: ['unauthenticated', 'invalid_input'],
    security: PUBLIC,
  },
  'POST /push/notion/:connection_id': {
    id: 'receiveNotionWebhook',
    tag: 'Triggers',
    summary: 'Notion webhook deliveries',
    description:
      'The webhook URL of a Notion integration (the connection’s). The first request’s verification_token is kept (sealed) and signs every event after (X-Notion-Signature: sha256= HMAC-SHA256 of the body); each event’s workspace_id and entity wake the matching subscriptions.',
    success: { status: 204, description: 'Delivery taken.' },
    codes: ['unauthenticated', 'invalid_input'],
    security: PUBLIC,
  },
  'GET /connect/:token': {
    id: 'showAuthorizationPage',
    tag: 'Authorization',
    summary: 'Hosted authorization page',
    description:
      'Where an authorization link leads the end user: an HTML page whose button starts the consent (opening it spends nothing); a link that cannot be used answers an HTML page saying why.',
    success: htmlPage('The landing page.'),
    codes: ['link_invalid'],
    security: PUBLIC,
  },
  'POST /connect/:token': {
    id: 'submitAuthorizationPage',
    tag: 'Authorization',
    summary: 'Submit the hosted authorization page',
    description:
      'The hosted page’s form: starts the provider consent (303 to the provider) or stores an API key or user name and password.',
    success: {
      status: 303,
      description: 'To the provider’s consent page or the application’s redirect_url.',
    },
    otherSuccesses: [htmlPage('The form for an API key or a user name and password.')],
    codes: ['link_invalid', 'credentials_invalid'],
    security: PUBLIC,
  },
  'GET /sso/v1/oauth/:connection_id/client-metadata.json': {
    id: 'getClientMetadataDocument',
    tag: 'Authorization',
    summary: 'Client ID metadata document',
    description:
      'The client ID metadata document of a remote MCP server connection, served under an https public URL: its URL is the client_id Portico presents to an authorization server that takes such documents, which fetches it with no credential (cacheable for five minutes).',
    success: ok(
      'The document (client_id, client_name, redirect_uris, grant types, token endpoint authentication).',
      { type: 'object', additionalProperties: true },
    ),
    codes: ['not_found'],
    security: PUBLIC,
  },
  'GET /sso/v1/oauth/:connection_id/callback': {
    id: 'handleOAuthCallback',
    tag: 'Authorization',
    summary: 'OAuth redirect URI',
    description:
      'Where the provider sends the end user back after consent; Portico exchanges the code and redirects to the application’s redirect_url.',
    success: { status: 302, description: 'To the application’s redirect_url.' },
    codes: ['link_invalid'],
    security: PUBLIC,
  },
  'POST /sso/v1/oauth/:connection_id/callback': {
    id: 'handleOAuthFormPostCallback',
    tag: 'Authorization',
    summary: 'OAuth redirect URI (form_post)',
    description: 'The same callback for providers that answer with response_mode=form_post.',
    success: { status: 302, description: 'To the application’s redirect_url.' },
    codes: ['link_invalid'],
    security: PUBLIC,
  },
  'POST /api/v1/admin/session': {
    id: 'createAdminSession',
    tag: 'Clients',
    summary: 'Sign in to the dashboard',
    description: 'Checks the admin user name and password and sets the HttpOnly session cookie.',
    codes: ['invalid_credentials', 'rate_limited'],
    security: PUBLIC,
  },
  'GET /api/v1/admin/session': {
    id: 'getAdminSession',
    tag: 'Clients',
    summary: 'The dashboard session',
    description: 'The signed-in admin and the session’s CSRF token (cookie only).',
    security: [{ dashboardSession: [] }],
  },
  'DELETE /api/v1/admin/session': {
    id: 'deleteAdminSession',
    tag: 'Clients',
    summary: 'Sign out of the dashboard',
    description: 'Ends the session; needs the X-CSRF-Token header.',
    success: noContent,
    codes: ['csrf_failed'],
    security: [{ dashboardSession: [], csrfToken: [] }],
  },
  'GET /api/v1/admin/admins': {
    id: 'listAdmins',
    tag: 'Audit',
    summary: 'List dashboard accounts',
    description:
      'The environment’s dashboard accounts with their role (admin or viewer); from a dashboard session only.',
    success: ok(
      'The accounts.',
      list('dashboard accounts', {
        data: [
          { username: 'admin', role: 'admin', created_at: '2026-01-01T00:00:00.000Z', last_sign_in_at: null },
        ],
      }),
    ),
    security: [{ dashboardSession: [], csrfToken: [] }],
  },
  'POST /api/v1/admin/admins': {
    id: 'createAdmin',
    tag: 'Audit',
    summary: 'Create a dashboard account',
    description:
      'An admin (every change) or a viewer (reads only). Without a password one is generated and returned once.',
    success: created(
      'The account; `password` only when the gateway generated it.',
      obj('A new dashboard account.', {
        username: { type: 'string' },
        role: { type: 'string', enum: ['admin', 'viewer'] },
        password: { type: 'string' },
      }),
    ),
    codes: ['admin_exists', 'insufficient_scope'],
    security: [{ dashboardSession: [], csrfToken: [] }],
  },
  'PATCH /api/v1/admin/admins/:username': {
    id: 'updateAdmin',
    tag: 'Audit',
    summary: 'Change a dashboard account’s role',
    description: 'Sets the role to admin or viewer; the environment’s last admin cannot become a viewer.',
    success: ok('The account.', obj('A dashboard account.')),
    codes: ['not_found', 'last_admin', 'insufficient_scope'],
    security: [{ dashboardSession: [], csrfToken: [] }],
  },
  'DELETE /api/v1/admin/admins/:username': {
    id: 'deleteAdmin',
    tag: 'Audit',
    summary: 'Delete a dashboard account',
    description: 'Deletes the account and its sessions; never one’s own, never the last admin.',
    success: noContent,
    codes: ['not_found', 'last_admin', 'insufficient_scope'],
    security: [{ dashboardSession: [], csrfToken: [] }],
  },
  'GET /api/v1/audit': {
    id: 'listAuditEntries',
    tag: 'Audit',
    summary: 'List audit entries',
    description:
      'Every change made through the API, dashboard sign-ins and CLI actions, newest first; filter by actor, action (or a prefix ending with "."), resource and time; paged with page_token. Needs the audit:read scope.',
    success: ok(
      'Audit entries.',
      list('audit entries', {
        data: [
          {
            id: 'aud_4fQ…',
            at: '2026-01-01T00:00:00.000Z',
            actor_type: 'admin',
            actor_id: 'admin',
            credential: 'session',
            action: 'connection.created',
            resource_type: 'connection',
            resource_id: 'google',
            ip: '203.0.113.7',
            user_agent: 'Mozilla/5.0 …',
            request_id: 'req_0a1b2c3d',
            status_code: 201,
            details: { provider: 'google' },
          },
        ],
        next_page_token: null,
      }),
    ),
    codes: ['insufficient_scope'],
  },
  'GET /api/v1/audit/export': {
    id: 'exportAuditEntries',
    tag: 'Audit',
    summary: 'Export audit entries as JSON lines',
    description:
      'The entries the filters select (as GET /api/v1/audit takes them, without paging), newest first, streamed as `application/x-ndjson`: one JSON object per line.',
    success: {
      status: 200,
      description: 'One audit entry (as listed) per line, as an attachment (portico-audit.jsonl).',
      contentType: 'application/x-ndjson',
      schema: {
        type: 'string',
        description: 'Newline-delimited JSON: each line one audit entry as GET /api/v1/audit lists it.',
      },
    },
    codes: ['insufficient_scope'],
  },
  'POST /api/v1/connections': {
    id: 'createConnection',
    tag: 'Connections',
    summary: 'Create a connection',
    description:
      'Stores an OAuth app (client id and secret, scopes) or another credential setting for a provider.',
    success: created('The connection.', CONNECTION),
    codes: ['connection_exists', 'provider_not_found'],
  },
  'GET /api/v1/connections': {
    id: 'listConnections',
    tag: 'Connections',
    summary: 'List connections',
    description: 'The connections of the caller’s environment.',
    success: ok('Connections.', list('connections')),
  },
  'GET /api/v1/connections/:name': {
    id: 'getConnection',
    tag: 'Connections',
    summary: 'Get a connection',
    description: 'One connection by name.',
    success: ok('The connection.', CONNECTION),
    codes: ['connection_not_found'],
  },
  'PATCH /api/v1/connections/:name': {
    id: 'updateConnection',
    tag: 'Connections',
    summary: 'Update a connection',
    description: 'Changes the given fields only; secrets can be replaced, never read.',
    success: ok('The updated connection.', CONNECTION),
    codes: ['connection_not_found'],
  },
  'DELETE /api/v1/connections/:name': {
    id: 'deleteConnection',
    tag: 'Connections',
    summary: 'Delete a connection',
    description: 'Deletes the connection and its connected accounts.',
    success: noContent,
    codes: ['connection_not_found'],
  },
  'POST /api/v1/connected-accounts/authorization-link': {
    id: 'createAuthorizationLink',
    tag: 'Connected accounts',
    summary: 'Create an authorization link',
    description:
      'A single-use link to send the end user to; their consent creates (or refreshes) the connected account for this identifier.',
    success: created('The link.', LINK),
    codes: ['connection_not_found'],
  },
  'POST /api/v1/connected-accounts/import': {
    id: 'importConnectedAccount',
    tag: 'Connected accounts',
    summary: 'Import a connected account',
    description:
      'Create (or update) an ACTIVE account from a credential the application already holds: OAuth tokens, an API key, or a user name and password.',
    success: created('The account.', ACCOUNT),
    codes: ['connection_not_found', 'credentials_invalid'],
  },
  'POST /api/v1/connected-accounts/verify': {
    id: 'verifyConnectedAccount',
    tag: 'Connected accounts',
    summary: 'Verify the user of a consent',
    description:
      'Confirms who consented when the link used user_verify_url; the account then becomes ACTIVE.',
    success: ok('The account.', ACCOUNT),
    codes: ['verification_not_found', 'verification_expired', 'verification_failed'],
  },
  'GET /api/v1/connected-accounts': {
    id: 'listConnectedAccounts',
    tag: 'Connected accounts',
    summary: 'List connected accounts',
    description: 'Filter by connection, identifier or status; paged.',
    success: ok('Accounts.', list('connected accounts')),
  },
  'GET /api/v1/connected-accounts/summary': {
    id: 'summarizeConnectedAccounts',
    tag: 'Connected accounts',
    summary: 'Summary of connected accounts',
    description: 'Accounts by status and connection, and those that expired in the last 7 days.',
    success: ok('Counts.', obj('Counts by status and connection.')),
  },
  'GET /api/v1/connected-accounts/:id': {
    id: 'getConnectedAccount',
    tag: 'Connected accounts',
    summary: 'Get a connected account',
    description: 'One account by id (never its tokens).',
    success: ok('The account.', ACCOUNT),
    codes: ['account_not_found'],
  },
  'DELETE /api/v1/connected-accounts/:id': {
    id: 'disconnectConnectedAccount',
    tag: 'Connected accounts',
    summary: 'Disconnect a connected account',
    description:
      'Revokes the grant at the provider where it can, deletes the tokens, and answers the account as it was.',
    success: ok('The account.', ACCOUNT),
    codes: ['account_not_found'],
  },
  'GET /api/v1/tools': {
    id: 'listTools',
    tag: 'Tools',
    summary: 'List or search tools',
    description:
      'Every tool seen from the environment, in the format asked for: json_schema (default), openai, anthropic, mcp, ready to hand to an LLM. With query, the tools that fit a task described in plain words, best first (an in-process index of names, descriptions, parameter names and providers); provider, connection, read_only, tags and toolset filter either way, and page_size with page_token page through them (a page token works only with the query and filters it came from).',
    success: ok(
      'Tools.',
      obj(
        'A page of tools.',
        {
          data: { type: 'array', items: TOOL },
          total: { type: 'integer', description: 'How many tools match in all.' },
          next_page_token: {
            type: ['string', 'null'],
            description: 'Pass it as page_token for the next page; null on the last.',
          },
          notice: { type: 'string' },
        },
        {
          data: [
            {
              name: 'gmail_users_messages_send',
              description:
                'Sends an email: body.raw is the whole RFC 2822 message, base64url-encoded; userId "me". …',
              provider: 'gmail',
              input_schema: { type: 'object' },
              tags: ['compiled', 'writes', 'e-mail'],
              score: 21.4,
            },
          ],
          total: 212,
          next_page_token: 'dDE6MjA6…',
        },
      ),
    ),
    codes: ['invalid_input', 'connection_not_found', 'insufficient_scope', 'toolset_not_found'],
  },
  'GET /api/v1/tools/:name': {
    id: 'getTool',
    tag: 'Tools',
    summary: 'Get a tool',
    description: 'One tool’s definition in the format asked for.',
    success: ok('The tool.', TOOL),
    codes: ['unknown_tool'],
  },
  'POST /api/v1/tools/execute': {
    id: 'executeTool',
    tag: 'Tools',
    summary: 'Execute a tool',
    description:
      'Runs a tool as the end user named by identifier, with their connected account’s credential; the input is validated against the tool’s schema first.',
    success: ok('What the tool returned.', EXECUTE_RESPONSE),
    codes: [
      'unknown_tool',
      'account_not_found',
      'account_not_active',
      'ambiguous_account',
      'policy_denied',
      'policy_constraint',
      'policy_budget_exceeded',
      'approval_required',
      'upstream_unauthorized',
      'upstream_not_found',
      'upstream_validation',
      'upstream_forbidden',
      'upstream_rate_limited',
      'upstream_error',
      'upstream_timeout',
      'upstream_unavailable',
    ],
  },
  'GET /api/v1/executions': {
    id: 'listExecutions',
    tag: 'Executions',
    summary: 'List executions',
    description:
      'Tool calls, newest first; filter by tool, identifier, status and time; paged with page_token.',
    success: ok('Executions.', list('executions')),
  },
  'GET /api/v1/executions/stats': {
    id: 'getExecutionStats',
    tag: 'Executions',
    summary: 'Execution statistics',
    description: 'Executions per hour by outcome, top error codes, p50/p95 duration per provider.',
    success: ok('Statistics.', obj('Statistics.')),
  },
  'GET /api/v1/executions/:id': {
    id: 'getExecution',
    tag: 'Executions',
    summary: 'Get an execution',
    description:
      'One tool call’s record with its detail: the problem and field errors, the masked input, the output’s shape, the provider’s status, attempts, token refresh, timings and links.',
    success: ok('The execution.', EXECUTION_DETAIL),
    codes: ['execution_not_found'],
  },
  'GET /api/v1/events': {
    id: 'listEvents',
    tag: 'Events',
    summary: 'List events',
    description: 'Events of the environment, newest first, paged.',
    success: ok('Events.', list('events')),
  },
  'POST /api/v1/webhooks': {
    id: 'createWebhook',
    tag: 'Webhooks',
    summary: 'Create a webhook endpoint',
    description: 'Registers a URL for events; the signing secret is returned once.',
    success: created('The endpoint, with its secret.', obj('A webhook endpoint.')),
  },
  'GET /api/v1/webhooks': {
    id: 'listWebhooks',
    tag: 'Webhooks',
    summary: 'List webhook endpoints',
    description: 'The environment’s webhook endpoints (never their secrets).',
    success: ok('Endpoints.', list('webhook endpoints')),
  },
  'GET /api/v1/webhooks/:id': {
    id: 'getWebhook',
    tag: 'Webhooks',
    summary: 'Get a webhook endpoint',
    description: 'One endpoint by id.',
    success: ok('The endpoint.', obj('A webhook endpoint.')),
    codes: ['webhook_not_found'],
  },
  'PATCH /api/v1/webhooks/:id': {
    id: 'updateWebhook',
    tag: 'Webhooks',
    summary: 'Update a webhook endpoint',
    description: 'Changes its URL, event types or enabled state.',
    success: ok('The endpoint.', obj('A webhook endpoint.')),
    codes: ['webhook_not_found'],
  },
  'DELETE /api/v1/webhooks/:id': {
    id: 'deleteWebhook',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    description: 'Stops deliveries and deletes the endpoint.',
    success: noContent,
    codes: ['webhook_not_found'],
  },
  'POST /api/v1/webhooks/:id/rotate-secret': {
    id: 'rotateWebhookSecret',
    tag: 'Webhooks',
    summary: 'Rotate a webhook signing secret',
    description: 'A new secret, returned once; the old one keeps signing for a grace period.',
    success: ok('The new secret.', obj('The endpoint with its new secret.')),
    codes: ['webhook_not_found'],
  },
  'GET /api/v1/webhooks/:id/deliveries': {
    id: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: 'List deliveries',
    description: 'Delivery attempts to this endpoint, newest first.',
    success: ok('Deliveries.', list('deliveries')),
    codes: ['webhook_not_found'],
  },
  'POST /api/v1/webhooks/:id/deliveries/:event_id/retry': {
    id: 'retryWebhookDelivery',
    tag: 'Webhooks',
    summary: 'Retry a delivery',
    description: 'Queues the event for delivery again.',
    success: { status: 202, description: 'Queued.', schema: obj('The queued delivery.') },
    codes: ['webhook_not_found', 'event_not_found', 'webhook_disabled'],
  },
  'GET /api/v1/trigger-types': {
    id: 'listTriggerTypes',
    tag: 'Triggers',
    summary: 'List trigger types',
    description:
      'What can be watched at each provider: the changes each type reports, how it learns of them and the JSON Schema of its config.',
    success: ok('Trigger types.', list('trigger types')),
  },
  'GET /api/v1/trigger-types/:name': {
    id: 'getTriggerType',
    tag: 'Triggers',
    summary: 'Get a trigger type',
    description: 'One trigger type with its config schema.',
    success: ok('The trigger type.', TRIGGER_TYPE),
    codes: ['trigger_type_unknown'],
  },
  'POST /api/v1/triggers': {
    id: 'createTrigger',
    tag: 'Triggers',
    summary: 'Create a trigger',
    description:
      'Subscribes to changes of a trigger type for one connected account. The subscription starts from the provider’s current state: every change after it is delivered as a trigger.fired event.',
    success: created('The trigger.', TRIGGER),
    codes: [
      'trigger_type_unknown',
      'trigger_exists',
      'connection_not_found',
      'account_not_found',
      'account_not_active',
      'upstream_not_found',
      'upstream_forbidden',
      'upstream_error',
      'upstream_rate_limited',
    ],
  },
  'GET /api/v1/triggers': {
    id: 'listTriggers',
    tag: 'Triggers',
    summary: 'List triggers',
    description: 'Trigger subscriptions with their health; filter by connection, identifier, type and state.',
    success: ok('Triggers.', list('triggers')),
  },
  'GET /api/v1/triggers/summary': {
    id: 'getTriggerSummary',
    tag: 'Triggers',
    summary: 'Triggers by health state',
    description: 'How many subscriptions are active, degraded, failing and paused.',
    success: ok(
      'Counts.',
      obj('Counts by state.', undefined, { states: { active: 3, degraded: 0, failing: 1, paused: 0 } }),
    ),
  },
  'GET /api/v1/triggers/:id': {
    id: 'getTrigger',
    tag: 'Triggers',
    summary: 'Get a trigger',
    description: 'One subscription: its config, state, last success, last error and next poll.',
    success: ok('The trigger.', TRIGGER),
    codes: ['trigger_not_found'],
  },
  'PATCH /api/v1/triggers/:id': {
    id: 'updateTrigger',
    tag: 'Triggers',
    summary: 'Pause, resume or re-time a trigger',
    description:
      'paused: true pauses it, false resumes it (each recorded as trigger.state_changed); interval_seconds changes how often it polls.',
    success: ok('The trigger.', TRIGGER),
    codes: ['trigger_not_found'],
  },
  'DELETE /api/v1/triggers/:id': {
    id: 'deleteTrigger',
    tag: 'Triggers',
    summary: 'Delete a trigger',
    description: 'Stops watching; events already recorded stay.',
    success: noContent,
    codes: ['trigger_not_found'],
  },
  'POST /api/v1/sandbox/connections/:name/expire-tokens': {
    id: 'expireSandboxTokens',
    tag: 'Sandbox',
    summary: 'Expire a sandbox connection’s tokens',
    description: 'Makes the emulator reject the current access tokens, to exercise refresh.',
    success: ok('Done.', obj('What was expired.')),
    codes: ['connection_not_found'],
  },
  'POST /api/v1/sandbox/connections/:name/revoke-grants': {
    id: 'revokeSandboxGrants',
    tag: 'Sandbox',
    summary: 'Revoke a sandbox connection’s grants',
    description: 'Makes the emulator forget every grant, so accounts go EXPIRED on their next call.',
    success: ok('Done.', obj('What was revoked.')),
    codes: ['connection_not_found'],
  },
  'POST /api/v1/sandbox/reset': {
    id: 'resetSandbox',
    tag: 'Sandbox',
    summary: 'Reset the sandbox emulators',
    description: 'Back to the seeded data.',
    success: ok('Done.', obj('Reset.')),
  },
  'POST /api/v1/mcp/tokens': {
    id: 'createMcpToken',
    tag: 'MCP',
    summary: 'Mint an MCP token',
    description:
      'A bearer token for /mcp bound to one identifier and optionally a tool allow-list; returned once.',
    success: created('The token.', obj('An MCP token and its id.')),
  },
  'GET /api/v1/mcp/tokens': {
    id: 'listMcpTokens',
    tag: 'MCP',
    summary: 'List MCP tokens',
    description: 'MCP tokens of the environment (never the tokens themselves).',
    success: ok('Tokens.', list('MCP tokens')),
  },
  'DELETE /api/v1/mcp/tokens/:id': {
    id: 'revokeMcpToken',
    tag: 'MCP',
    summary: 'Revoke an MCP token',
    description: 'The token stops working at once.',
    success: noContent,
    codes: ['mcp_token_not_found'],
  },
  'POST /api/v1/proxy/tokens': {
    id: 'createProxyToken',
    tag: 'Proxy',
    summary: 'Mint a proxy token',
    description: 'A bearer token for /proxy limited to one connection and identifier; returned once.',
    success: created('The token.', obj('A proxy token and its id.')),
  },
  'GET /api/v1/proxy/tokens': {
    id: 'listProxyTokens',
    tag: 'Proxy',
    summary: 'List proxy tokens',
    description: 'Proxy tokens of the environment (never the tokens themselves).',
    success: ok('Tokens.', list('proxy tokens')),
  },
  'DELETE /api/v1/proxy/tokens/:id': {
    id: 'revokeProxyToken',
    tag: 'Proxy',
    summary: 'Revoke a proxy token',
    description: 'The token stops working at once.',
    success: noContent,
    codes: ['proxy_token_not_found'],
  },
  'GET /api/v1/policies': {
    id: 'listPolicies',
    tag: 'Policies',
    summary: 'List policies',
    description: 'The environment’s tool-call policies.',
    success: ok('Policies.', list('policies')),
  },
  'POST /api/v1/policies': {
    id: 'createPolicy',
    tag: 'Policies',
    summary: 'Create a policy',
    description: 'Allow or deny tools, constrain their input, budget calls or require approval.',
    success: created('The policy.', obj('A policy.')),
    codes: ['policy_exists'],
  },
  'GET /api/v1/policies/:name': {
    id: 'getPolicy',
    tag: 'Policies',
    summary: 'Get a policy',
    description: 'One policy by name.',
    success: ok('The policy.', obj('A policy.')),
    codes: ['policy_not_found'],
  },
  'PUT /api/v1/policies/:name': {
    id: 'replacePolicy',
    tag: 'Policies',
    summary: 'Replace a policy',
    description: 'Replaces the whole policy.',
    success: ok('The policy.', obj('A policy.')),
    codes: ['policy_not_found'],
  },
  'DELETE /api/v1/policies/:name': {
    id: 'deletePolicy',
    tag: 'Policies',
    summary: 'Delete a policy',
    description: 'Deletes the policy.',
    success: noContent,
    codes: ['policy_not_found'],
  },
  'GET /api/v1/toolsets': {
    id: 'listToolsets',
    tag: 'Tools',
    summary: 'List toolsets',
    description: 'The environment’s toolsets (named sets of tools), by name, a page at a time.',
    success: ok('Toolsets.', list('toolsets')),
  },
  'POST /api/v1/toolsets': {
    id: 'createToolset',
    tag: 'Tools',
    summary: 'Create a toolset',
    description:
      'A named set of tools: by name (tools), name pattern with * (patterns), provider, connection, narrowed by tags. Every tool listing (GET /api/v1/tools?toolset=), SDK adapter and LLM format takes it, and it has an MCP URL of its own (mcp_url, /mcp/t/{name}) for the same per-user tokens as /mcp.',
    success: created(
      'The toolset.',
      obj('A toolset.', undefined, {
        name: 'calendar-readers',
        providers: ['google_calendar'],
        tags: ['read-only'],
        mcp_mode: 'full',
        mcp_url: 'https://portico.example.com/mcp/t/calendar-readers',
        created_at: '2026-01-05T10:00:00.000Z',
        updated_at: '2026-01-05T10:00:00.000Z',
      }),
    ),
    codes: ['toolset_exists', 'connection_not_found', 'insufficient_scope'],
  },
  'GET /api/v1/toolsets/:name': {
    id: 'getToolset',
    tag: 'Tools',
    summary: 'Get a toolset',
    description: 'One toolset by name.',
    success: ok('The toolset.', obj('A toolset.')),
    codes: ['toolset_not_found'],
  },
  'PATCH /api/v1/toolsets/:name': {
    id: 'updateToolset',
    tag: 'Tools',
    summary: 'Change a toolset',
    description: 'The fields given replace the toolset’s; null clears one.',
    success: ok('The toolset.', obj('A toolset.')),
    codes: ['toolset_not_found', 'connection_not_found', 'insufficient_scope'],
  },
  'DELETE /api/v1/toolsets/:name': {
    id: 'deleteToolset',
    tag: 'Tools',
    summary: 'Delete a toolset',
    description: 'Deletes the toolset; its MCP URL answers toolset_not_found from then on.',
    success: noContent,
    codes: ['toolset_not_found'],
  },
  'GET /api/v1/approvals': {
    id: 'listApprovals',
    tag: 'Policies',
    summary: 'List approvals',
    description: 'Calls held for approval, newest first.',
    success: ok('Approvals.', list('approvals')),
  },
  'GET /api/v1/approvals/:id': {
    id: 'getApproval',
    tag: 'Policies',
    summary: 'Get an approval',
    description: 'One held call and its decision.',
    success: ok('The approval.', obj('An approval.')),
    codes: ['approval_not_found'],
  },
  'POST /api/v1/approvals/:id/approve': {
    id: 'approveApproval',
    tag: 'Policies',
    summary: 'Approve a held call',
    description: 'The call can then run once with approval_id.',
    success: ok('The approval.', obj('An approval.')),
    codes: ['approval_not_found', 'approval_expired', 'approval_used'],
  },
  'POST /api/v1/approvals/:id/deny': {
    id: 'denyApproval',
    tag: 'Policies',
    summary: 'Deny a held call',
    description: 'The call will not run.',
    success: ok('The approval.', obj('An approval.')),
    codes: ['approval_not_found', 'approval_expired', 'approval_used'],
  },
  'GET /approvals/decide/:token': {
    id: 'showApprovalDecisionPage',
    tag: 'Policies',
    summary: 'One-time approval decision page',
    description:
      'Where the decision_url of an approval.requested event leads: an HTML page showing the held call and its exact input, with Approve and Deny buttons. Opening it decides nothing.',
    success: htmlPage('The decision page.'),
    codes: ['approval_not_found'],
    security: PUBLIC,
  },
  'POST /approvals/decide/:token': {
    id: 'submitApprovalDecision',
    tag: 'Policies',
    summary: 'Approve or deny through a one-time link',
    description:
      'The decision page’s form (decision=approve|deny, optional reason). Only a pending approval can be decided, so the link works once.',
    success: htmlPage('An HTML page with the decision.'),
    codes: ['approval_not_found', 'approval_expired', 'approval_used', 'invalid_input'],
    security: PUBLIC,
  },
  'GET /api/v1/mcp/oauth/settings': {
    id: 'getMcpOAuthSettings',
    tag: 'MCP',
    summary: 'MCP OAuth settings',
    description: 'This environment’s MCP OAuth sign-in URL and the MCP URL its OAuth clients use.',
    success: ok('The settings.', obj('MCP OAuth settings.')),
  },
  'PUT /api/v1/mcp/oauth/settings': {
    id: 'setMcpOAuthSettings',
    tag: 'MCP',
    summary: 'Set the MCP OAuth sign-in URL',
    description: 'Set (or, with null, remove) the MCP OAuth sign-in URL.',
    success: ok('The settings.', obj('MCP OAuth settings.')),
  },
  'POST /api/v1/mcp/oauth/approve': {
    id: 'approveMcpAuthorization',
    tag: 'MCP',
    summary: 'Approve an MCP authorization request',
    description: 'For a signed-in end user; answers where to send the browser.',
    success: ok('Where to send the browser.', obj('A redirect target.')),
    codes: ['mcp_auth_request_not_found', 'mcp_auth_request_expired', 'mcp_auth_request_used'],
  },
  'POST /api/v1/mcp/oauth/deny': {
    id: 'denyMcpAuthorization',
    tag: 'MCP',
    summary: 'Deny an MCP authorization request',
    description: 'Answers where to send the browser.',
    success: ok('Where to send the browser.', obj('A redirect target.')),
    codes: ['mcp_auth_request_not_found', 'mcp_auth_request_expired', 'mcp_auth_request_used'],
  },
  'GET /api/v1/clients': {
    id: 'listClients',
    tag: 'Clients',
    summary: 'List gateway clients',
    description: 'Gateway clients of the environment (never their secrets).',
    success: ok('Clients.', list('gateway clients')),
  },
  'POST /api/v1/clients': {
    id: 'createClient',
    tag: 'Clients',
    summary: 'Create a gateway client',
    description: 'A new client_id and client_secret; the secret is returned once.',
    success: created('The client with its secret.', obj('A gateway client.')),
  },
  'DELETE /api/v1/clients/:client_id': {
    id: 'revokeClient',
    tag: 'Clients',
    summary: 'Revoke a gateway client',
    description: 'Its tokens stop working at once.',
    success: noContent,
    codes: ['client_not_found'],
  },
  'GET /api/v1/providers': {
    id: 'listProviders',
    tag: 'Providers',
    summary: 'List providers',
    description:
      'The providers (built-in and custom), their default and common scopes, and the setup steps at the provider ({redirect_uri} stands for the connection’s).',
    success: ok('Providers.', list('providers')),
  },
  'POST /api/v1/providers': {
    id: 'createProvider',
    tag: 'Providers',
    summary: 'Create a custom provider',
    description: 'From a provider definition (see docs/providers/definition-format.md).',
    success: created('The provider.', obj('A provider.')),
    codes: ['provider_exists'],
  },
  'GET /api/v1/providers/:key': {
    id: 'getProvider',
    tag: 'Providers',
    summary: 'Get a provider',
    description: 'One provider, with its definition.',
    success: ok('The provider.', obj('A provider.')),
    codes: ['provider_not_found'],
  },
  'PUT /api/v1/providers/:key': {
    id: 'replaceProvider',
    tag: 'Providers',
    summary: 'Replace a custom provider',
    description: 'Replaces a custom provider’s definition; built-in ones cannot be changed.',
    success: ok('The provider.', obj('A provider.')),
    codes: ['provider_not_found', 'provider_built_in'],
  },
  'DELETE /api/v1/providers/:key': {
    id: 'deleteProvider',
    tag: 'Providers',
    summary: 'Delete a custom provider',
    description: 'Only when no connection uses it.',
    success: noContent,
    codes: ['provider_not_found', 'provider_in_use', 'provider_built_in'],
  },
  'GET /api/v1/environment': {
    id: 'getEnvironment',
    tag: 'Environment',
    summary: 'Get the environment settings',
    description: 'This client’s environment: its redirect_url allow-list and its branding.',
    success: ok('The settings.', obj('Environment settings.')),
  },
  'PATCH /api/v1/environment': {
    id: 'updateEnvironment',
    tag: 'Environment',
    summary: 'Update the environment settings',
    description:
      'Set the redirect_url allow-list (extends PORTICO_REDIRECT_URL_ALLOWLIST) and the branding on the pages end users see.',
    success: ok('The settings.', obj('Environment settings.')),
  },
  'GET /.well-known/oauth-protected-resource': {
    id: 'getMcpProtectedResourceMetadata',
    tag: 'MCP',
    summary: 'Protected resource metadata of /mcp',
    description: 'RFC 9728 metadata naming the authorization server of /mcp.',
    success: ok('Metadata.', obj('RFC 9728 metadata.')),
    security: PUBLIC,
  },
  'GET /.well-known/oauth-protected-resource/mcp': {
    id: 'getMcpPathProtectedResourceMetadata',
    tag: 'MCP',
    summary: 'Protected resource metadata of /mcp (path form)',
    description: 'The same RFC 9728 metadata at the path-suffixed well-known URL.',
    success: ok('Metadata.', obj('RFC 9728 metadata.')),
    security: PUBLIC,
  },
  'GET /.well-known/oauth-protected-resource/mcp/e/:environment_id': {
    id: 'getEnvironmentMcpProtectedResourceMetadata',
    tag: 'MCP',
    summary: 'Protected resource metadata of an environment’s MCP URL',
    description: 'RFC 9728 metadata of /mcp/e/{environment_id}.',
    success: ok('Metadata.', obj('RFC 9728 metadata.')),
    security: PUBLIC,
  },
  'GET /.well-known/oauth-authorization-server': {
    id: 'getMcpAuthorizationServerMetadata',
    tag: 'MCP',
    summary: 'Authorization server metadata',
    description: 'RFC 8414 metadata of MCP OAuth.',
    success: ok('Metadata.', obj('RFC 8414 metadata.')),
    security: PUBLIC,
  },
  'GET /mcp/oauth/authorize': {
    id: 'authorizeMcpClient',
    tag: 'MCP',
    summary: 'MCP OAuth authorization endpoint',
    description:
      'Redirects the browser to the application’s sign-in URL (or back to the client with an error).',
    success: { status: 302, description: 'To the sign-in URL or back to the client.' },
    security: PUBLIC,
  },
  'POST /mcp/oauth/register': {
    id: 'registerMcpClient',
    tag: 'MCP',
    summary: 'MCP OAuth dynamic client registration',
    description: 'RFC 7591 registration of an MCP client.',
    success: created('The registered client.', obj('RFC 7591 client information.')),
    security: PUBLIC,
  },
  'POST /mcp/oauth/token': {
    id: 'createMcpOAuthToken',
    tag: 'MCP',
    summary: 'MCP OAuth token endpoint',
    description: 'authorization_code (PKCE) and refresh_token grants.',
    success: ok('Tokens.', obj('An OAuth token response.')),
    codes: ['invalid_client', 'unsupported_grant_type'],
    security: PUBLIC,
  },
  'POST /mcp/oauth/revoke': {
    id: 'revokeMcpOAuthToken',
    tag: 'MCP',
    summary: 'MCP OAuth token revocation',
    description: 'RFC 7009 revocation; always 200.',
    success: ok('Revoked (or unknown).'),
    security: PUBLIC,
  },
  'POST /mcp': {
    id: 'callMcp',
    tag: 'MCP',
    summary: 'MCP endpoint (Streamable HTTP)',
    description:
      'JSON-RPC messages of the Model Context Protocol: tools/list and tools/call for the identifier the MCP token is bound to. With ?mode=search, tools/list offers portico_search_tools (find tools by a task in words) and portico_call_tool (call one by name) instead of every provider tool.',
    success: ok('A JSON-RPC response (or an event stream).', obj('A JSON-RPC message.')),
    otherSuccesses: [MCP_ACCEPTED],
    codes: ['tool_not_allowed', 'origin_not_allowed', 'invalid_input'],
    security: [{ mcpToken: [] }],
  },
  'GET /mcp': {
    id: 'getMcp',
    tag: 'MCP',
    summary: 'MCP endpoint: the stream of server-initiated messages',
    description:
      'An event stream (text/event-stream) that carries notifications/tools/list_changed whenever the token’s user’s tool list changes (an account authorized, disconnected or expired).',
    success: EVENT_STREAM,
    codes: ['origin_not_allowed'],
    security: [{ mcpToken: [] }],
  },
  'DELETE /mcp': {
    id: 'deleteMcpSession',
    tag: 'MCP',
    summary: 'MCP endpoint: end a session',
    description: 'Portico runs MCP without sessions, so there is nothing to end: always 204.',
    success: { status: 204, description: 'Nothing to end.' },
    codes: ['origin_not_allowed'],
    security: [{ mcpToken: [] }],
  },
  'POST /mcp/e/:environment_id': {
    id: 'callEnvironmentMcp',
    tag: 'MCP',
    summary: 'An environment’s MCP endpoint',
    description: 'Like POST /mcp, at the URL MCP OAuth clients of one environment use.',
    success: ok('A JSON-RPC response (or an event stream).', obj('A JSON-RPC message.')),
    otherSuccesses: [MCP_ACCEPTED],
    codes: ['tool_not_allowed', 'origin_not_allowed'],
    security: [{ mcpToken: [] }],
  },
  'GET /mcp/e/:environment_id': {
    id: 'getEnvironmentMcp',
    tag: 'MCP',
    summary: 'An environment’s MCP endpoint: the stream of server-initiated messages',
    description: 'Like GET /mcp, at the URL MCP OAuth clients of one environment use.',
    success: EVENT_STREAM,
    codes: ['origin_not_allowed'],
    security: [{ mcpToken: [] }],
  },
  'DELETE /mcp/e/:environment_id': {
    id: 'deleteEnvironmentMcpSession',
    tag: 'MCP',
    summary: 'An environment’s MCP endpoint: end a session',
    description: 'There are no sessions to end: always 204.',
    success: { status: 204, description: 'Nothing to end.' },
    codes: ['origin_not_allowed'],
    security: [{ mcpToken: [] }],
  },
  'POST /mcp/t/:toolset': {
    id: 'callToolsetMcp',
    tag: 'MCP',
    summary: 'A toolset’s MCP endpoint',
    description:
      'Like POST /mcp for the same tokens, offering only the toolset’s tools (tools/list paginated); a call to a tool outside it answers tool_not_allowed. The toolset’s mcp_mode (or ?mode=) chooses the full list or the search and call tools.',
    success: ok('A JSON-RPC response (or an event stream).', obj('A JSON-RPC message.')),
    otherSuccesses: [MCP_ACCEPTED],
    codes: ['toolset_not_found', 'tool_not_allowed', 'origin_not_allowed', 'invalid_input'],
    security: [{ mcpToken: [] }],
  },
  'GET /mcp/t/:toolset': {
    id: 'getToolsetMcp',
    tag: 'MCP',
    summary: 'A toolset’s MCP endpoint: the stream of server-initiated messages',
    description: 'Like GET /mcp, for the toolset’s URL.',
    success: EVENT_STREAM,
    codes: ['toolset_not_found', 'origin_not_allowed'],
    security: [{ mcpToken: [] }],
  },
  'DELETE /mcp/t/:toolset': {
    id: 'deleteToolsetMcpSession',
    tag: 'MCP',
    summary: 'A toolset’s MCP endpoint: end a session',
    description: 'There are no sessions to end: always 204.',
    success: { status: 204, description: 'Nothing to end.' },
    codes: ['origin_not_allowed'],
    security: [{ mcpToken: [] }],
  },
  'GET /': {
    id: 'getRoot',
    tag: 'Health',
    summary: 'The gateway’s root',
    description:
      'A browser (Accept: text/html) is sent on to the dashboard; anything else gets a 404 naming /dashboard, /api/v1 and /docs.',
    success: { status: 302, description: 'To /dashboard.' },
    codes: ['not_found'],
    security: PUBLIC,
  },
  'GET /metrics': {
    id: 'getMetrics',
    tag: 'Health',
    summary: 'Prometheus metrics',
    description: 'Only when PORTICO_METRICS_TOKEN is set; text exposition format.',
    success: {
      status: 200,
      description: 'Metrics.',
      contentType: 'text/plain',
      schema: { type: 'string', description: 'The Prometheus text exposition format (version 0.0.4).' },
    },
    security: [{ metricsToken: [] }],
  },
};

const PROXY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const PROXY_CODES: ErrorCode[] = [
  'invalid_path',
  'missing_header',
  'connection_not_found',
  'account_not_found',
  'account_not_active',
  'proxy_token_scope',
  'upstream_unauthorized',
  'upstream_timeout',
  'upstream_unavailable',
];
for (const method of PROXY_METHODS) {
  const lower = method.toLowerCase();
  OPERATIONS[`${method} /proxy/*`] = {
    id: `proxy${method[0]}${lower.slice(1)}`,
    tag: 'Proxy',
    summary: `Proxy a ${method} to the provider’s API`,
    description:
      'Sends the request to the provider’s API base URL plus {path}, with the end user’s credential injected. Name the account with the connection_name and identifier headers (or x-connection-name and x-identifier), or use a proxy token, which carries both. The provider’s status, headers and body come back as they are; only Portico’s own failures are problems.',
    success: {
      status: 200,
      description: 'The provider’s response, as it is (any status).',
      ...(method === 'HEAD'
        ? {}
        : { contentType: '*/*', schema: { description: 'Whatever the provider answered.' } }),
    },
    codes: PROXY_CODES,
    security: [{ bearer: [] }, { proxyToken: [] }],
  };
}

/** Every operation can answer these (authentication, validation, limits, failures). */
const COMMON_CODES: ErrorCode[] = [
  'invalid_input',
  'invalid_json',
  'unsupported_media_type',
  'payload_too_large',
  'unauthenticated',
  'rate_limited',
  'internal_error',
  'service_unavailable',
];

export const PROBLEM_SCHEMA = {
  type: 'object',
  description:
    'An RFC 9457 problem. `code` is stable: branch on it, never on `title` or `detail`; `detail` says what to change.',
  required: ['type', 'title', 'status', 'code', 'detail', 'request_id', 'retryable'],
  properties: {
    type: { type: 'string', format: 'uri', description: 'A URI naming the problem type.' },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    code: { type: 'string', enum: Object.keys(ERROR_CODES), description: 'The stable error code.' },
    detail: { type: 'string', description: 'What went wrong and what to change.' },
    request_id: { type: 'string' },
    retryable: { type: 'boolean' },
    retry_after_ms: { type: 'integer', minimum: 0 },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
    upstream: {
      type: 'object',
      properties: { status: { type: 'integer' }, body: {} },
    },
  },
  additionalProperties: true,
};

/** The problem responses of an operation, grouped by status, each listing its possible codes. */
export function problemResponses(codes: ErrorCode[] = [], isPublic = false): Record<string, object> {
  const all = [...new Set([...COMMON_CODES.filter((c) => !(isPublic && c === 'unauthenticated')), ...codes])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) {
    const status: number = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, object> = {};
  for (const [status, statusCodes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const first = statusCodes[0]!;
    responses[String(status)] = {
      description: `${ERROR_CODES[first].title}. Codes: ${statusCodes.map((c) => `\`${c}\``).join(', ')}.`,
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          schema: { $ref: '#/components/schemas/Problem' },
          example: {
            type: problemType(first),
            title: ERROR_CODES[first].title,
            status,
            code: first,
            detail: 'What went wrong and what to change.',
            request_id: 'req_0a1b2c3d',
            retryable: 'retryable' in ERROR_CODES[first],
          },
        },
      },
    };
  }
  return responses;
}
