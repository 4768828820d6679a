/**
 * Which audit action each changing API route records, by method and route as registered (with
 * `:parameters`, without the /api/v1 prefix), like auth/scopes.ts's route→scope table. A route
 * listed as `null` records nothing: tool executions and proxied calls are recorded as executions.
 */
export interface RouteAction {
  action: string;
  resourceType: string;
  /** The route parameter naming the resource. */
  param?: string;
  /** Otherwise, the response field naming it (default `id`); only this field of the response is kept. */
  field?: string;
  /** Request body fields worth keeping (names, roles, scopes: never secrets). */
  details?: readonly string[];
  /** Recorded under this action when the gateway refuses the request (4xx but 401): a decision. */
  refused?: string;
}

const ACTIONS: Record<string, RouteAction | null> = {
  'POST /connections': {
    action: 'connection.created',
    resourceType: 'connection',
    field: 'name',
    details: ['provider'],
  },
  'PATCH /connections/:name': { action: 'connection.updated', resourceType: 'connection', param: 'name' },
  'DELETE /connections/:name': { action: 'connection.deleted', resourceType: 'connection', param: 'name' },
  'POST /providers': { action: 'provider.created', resourceType: 'provider', field: 'key' },
  'PUT /providers/:key': { action: 'provider.replaced', resourceType: 'provider', param: 'key' },
  'DELETE /providers/:key': { action: 'provider.deleted', resourceType: 'provider', param: 'key' },
  'POST /connected-accounts/authorization-link': {
    action: 'account.link_created',
    resourceType: 'account',
    field: 'connected_account_id',
    details: ['connection_name', 'identifier'],
  },
  'POST /connected-accounts/import': {
    action: 'account.imported',
    resourceType: 'account',
    details: ['connection_name', 'identifier'],
  },
  'POST /connected-accounts/verify': {
    action: 'account.verified',
    resourceType: 'account',
    field: 'connected_account_id',
  },
  'DELETE /connected-accounts/:id': { action: 'account.deleted', resourceType: 'account', param: 'id' },
  'POST /tools/execute': null,
  'POST /webhooks': { action: 'webhook.created', resourceType: 'webhook', details: ['events'] },
  'PATCH /webhooks/:id': { action: 'webhook.updated', resourceType: 'webhook', param: 'id' },
  'DELETE /webhooks/:id': { action: 'webhook.deleted', resourceType: 'webhook', param: 'id' },
  'POST /webhooks/:id/rotate-secret': {
    action: 'webhook.secret_rotated',
    resourceType: 'webhook',
    param: 'id',
  },
  'POST /webhooks/:id/deliveries/:event_id/retry': {
    action: 'webhook.delivery_retried',
    resourceType: 'webhook',
    param: 'id',
  },
  'POST /triggers': {
    action: 'trigger.created',
    resourceType: 'trigger',
    details: ['connection_name', 'identifier', 'trigger_type'],
  },
  'PATCH /triggers/:id': {
    action: 'trigger.updated',
    resourceType: 'trigger',
    param: 'id',
    details: ['paused', 'interval_seconds'],
  },
  'DELETE /triggers/:id': { action: 'trigger.deleted', resourceType: 'trigger', param: 'id' },
  'POST /toolsets': { action: 'toolset.created', resourceType: 'toolset', field: 'name' },
  'PATCH /toolsets/:name': { action: 'toolset.updated', resourceType: 'toolset', param: 'name' },
  'DELETE /toolsets/:name': { action: 'toolset.deleted', resourceType: 'toolset', param: 'name' },
  'POST /policies': { action: 'policy.created', resourceType: 'policy', field: 'name' },
  'PUT /policies/:name': { action: 'policy.updated', resourceType: 'policy', param: 'name' },
  'DELETE /policies/:name': { action: 'policy.deleted', resourceType: 'policy', param: 'name' },
  'POST /approvals/:id/approve': {
    action: 'approval.approved',
    resourceType: 'approval',
    param: 'id',
    refused: 'approval.approve_refused',
  },
  'POST /approvals/:id/deny': {
    action: 'approval.denied',
    resourceType: 'approval',
    param: 'id',
    refused: 'approval.deny_refused',
  },
  'POST /clients': {
    action: 'client.created',
    resourceType: 'client',
    field: 'client_id',
    details: ['name', 'scopes'],
  },
  'DELETE /clients/:client_id': { action: 'client.revoked', resourceType: 'client', param: 'client_id' },
  'POST /mcp/tokens': {
    action: 'mcp_token.created',
    resourceType: 'mcp_token',
    details: ['identifier', 'connection_names', 'tools'],
  },
  'DELETE /mcp/tokens/:id': { action: 'mcp_token.revoked', resourceType: 'mcp_token', param: 'id' },
  'PUT /mcp/oauth/settings': { action: 'mcp_oauth.settings_updated', resourceType: 'mcp_oauth' },
  'POST /mcp/oauth/approve': { action: 'mcp_oauth.approved', resourceType: 'mcp_oauth' },
  'POST /mcp/oauth/deny': { action: 'mcp_oauth.denied', resourceType: 'mcp_oauth' },
  'POST /proxy/tokens': {
    action: 'proxy_token.created',
    resourceType: 'proxy_token',
    details: ['connection_name', 'identifier'],
  },
  'DELETE /proxy/tokens/:id': { action: 'proxy_token.revoked', resourceType: 'proxy_token', param: 'id' },
  'PATCH /environment': { action: 'environment.updated', resourceType: 'environment' },
  'POST /sandbox/reset': { action: 'sandbox.reset', resourceType: 'sandbox' },
  'POST /sandbox/connections/:name/expire-tokens': {
    action: 'sandbox.tokens_expired',
    resourceType: 'connection',
    param: 'name',
  },
  'POST /sandbox/connections/:name/revoke-grants': {
    action: 'sandbox.grants_revoked',
    resourceType: 'connection',
    param: 'name',
  },
  'POST /admin/admins': {
    action: 'admin.created',
    resourceType: 'admin',
    field: 'username',
    details: ['role'],
  },
  'PATCH /admin/admins/:username': {
    action: 'admin.role_changed',
    resourceType: 'admin',
    param: 'username',
    details: ['role'],
  },
  'DELETE /admin/admins/:username': { action: 'admin.deleted', resourceType: 'admin', param: 'username' },
};

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The action a changing request records, or undefined (a read, or a route that records nothing).
 * A changing route missing from the table still records, as `other.<method>`, so nothing goes
 * unrecorded; a test holds the table to the routes.
 */
export function actionForRoute(method: string, route: string): RouteAction | undefined {
  if (!CHANGES.has(method)) return undefined;
  const path = route.replace(/^\/api\/v1/, '');
  const known = ACTIONS[`${method} ${path}`];
  if (known === null) return undefined;
  return known ?? { action: `other.${method.toLowerCase()}`, resourceType: path.split('/')[1] ?? 'api' };
}

/** Whether the table names this route (recorded or deliberately not). */
export function routeIsListed(method: string, route: string): boolean {
  return `${method} ${route.replace(/^\/api\/v1/, '')}` in ACTIONS;
}

/** The resource's id from a route parameter or the (JSON) response; never anything else of it. */
export function resourceIdOf(
  entry: RouteAction,
  params: unknown,
  response: Record<string, unknown> | undefined,
): string | undefined {
  if (entry.param) {
    const value = (params as Record<string, unknown> | undefined)?.[entry.param];
    if (typeof value === 'string') return value;
  }
  const value = response?.[entry.field ?? 'id'];
  return typeof value === 'string' ? value : undefined;
}

/** The listed body fields, when they are short strings or lists of them. */
export function detailsOf(entry: RouteAction, body: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!entry.details || body === null || typeof body !== 'object') return out;
  for (const field of entry.details) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.length <= 256) out[field] = value;
    else if (Array.isArray(value) && value.length <= 50 && value.every((v) => typeof v === 'string'))
      out[field] = value;
  }
  return out;
}
