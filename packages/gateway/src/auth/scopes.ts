import { Problem } from '../errors/problem.js';

/**
 * What a gateway client may do. An application's runtime needs few (links, tools, the proxy, reading
 * accounts); operators' tooling needs the rest. A client without scopes (created before scopes
 * existed, or with "admin") may do everything.
 */
export const SCOPES = {
  'connections:read': 'read connections and providers',
  connections: 'create, change and delete connections',
  providers: 'create, change and delete custom providers',
  'accounts:read': 'read connected accounts',
  accounts: 'import, disconnect and delete connected accounts',
  links: 'create authorization links (and the accounts they authorize)',
  tools: 'list and run tools, over REST, MCP and gRPC',
  'executions:read': 'read tool executions and their statistics',
  proxy: 'send requests through the proxy',
  tokens: 'mint and revoke MCP and proxy tokens',
  'events:read': 'read events',
  webhooks: 'manage webhook endpoints',
  'triggers:read': 'read trigger subscriptions, their health and the trigger types',
  triggers: 'create, pause, resume and delete trigger subscriptions',
  toolsets: 'create, change and delete toolsets (reading them takes tools)',
  policies: 'manage policies',
  approvals: 'read, approve and deny held calls',
  clients: 'create and revoke gateway clients',
  environment: "change the environment's settings",
  sandbox: 'operate the sandbox (reset, expire, revoke)',
  'audit:read': 'read and export the audit log',
} as const;

export type Scope = keyof typeof SCOPES;
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

/** Names that stand for several scopes. */
export const SCOPE_PRESETS: Record<string, Scope[]> = {
  admin: ALL_SCOPES,
  runtime: ['links', 'tools', 'proxy', 'accounts:read', 'connections:read', 'executions:read', 'tokens'],
};

/** The scopes a list of scope and preset names stands for; a Problem at `path` for unknown names. */
export function expandScopes(names: readonly string[], path: string): Set<Scope> {
  const out = new Set<Scope>();
  names.forEach((name, i) => {
    const preset = SCOPE_PRESETS[name];
    if (preset) for (const scope of preset) out.add(scope);
    else if (name in SCOPES) out.add(name as Scope);
    else {
      throw new Problem(
        'invalid_input',
        `Unknown scope "${name}"; scopes are ${ALL_SCOPES.join(', ')}, or the presets ${Object.keys(SCOPE_PRESETS).join(', ')}.`,
        { errors: [{ path: `${path}/${i}`, message: 'must be a scope or a preset' }] },
      );
    }
  });
  return out;
}

/** What a client was granted: its scopes (null: all) and the connections it may reach (null: all). */
export interface Grant {
  scopes: ReadonlySet<Scope> | null;
  connectionNames: readonly string[] | null;
}

export const FULL_GRANT: Grant = { scopes: null, connectionNames: null };

/** Reads are open to the `…:read` scope; changes need the full one. */
function readOr(method: string, read: Scope, write: Scope): Scope {
  return method === 'GET' || method === 'HEAD' ? read : write;
}

/**
 * The scope an API route needs, by its path under /api/v1 (as registered, with parameters) and
 * method. A route this table does not know needs every scope.
 */
export function scopeForRoute(method: string, route: string): Scope | 'all' {
  const path = route.replace(/^\/api\/v1/, '');
  const first = path.split('/')[1] ?? '';
  switch (first) {
    case 'connections':
      return readOr(method, 'connections:read', 'connections');
    case 'providers':
      return readOr(method, 'connections:read', 'providers');
    case 'connected-accounts':
      // The application's runtime: a link for its user, and the check that the right user came back.
      if (path === '/connected-accounts/authorization-link' || path === '/connected-accounts/verify')
        return 'links';
      return readOr(method, 'accounts:read', 'accounts');
    case 'tools':
      return 'tools';
    case 'toolsets':
      return readOr(method, 'tools', 'toolsets');
    case 'executions':
      return 'executions:read';
    case 'events':
      return 'events:read';
    case 'webhooks':
      return 'webhooks';
    case 'triggers':
    case 'trigger-types':
      return readOr(method, 'triggers:read', 'triggers');
    case 'policies':
      return 'policies';
    case 'approvals':
      return 'approvals';
    case 'clients':
      return 'clients';
    case 'environment':
      return 'environment';
    case 'sandbox':
      return 'sandbox';
    case 'audit':
      return 'audit:read';
    case 'admin':
      // Dashboard accounts: only a signed-in admin's session may manage them (the routes refuse clients).
      return 'all';
    case 'mcp':
      // Where every MCP user of the environment is sent to sign in is the environment's setting.
      if (path === '/mcp/oauth/settings' && method !== 'GET' && method !== 'HEAD') return 'environment';
      return 'tokens';
    case 'proxy':
      // Minting and revoking the tokens an end user's MCP client or a provider SDK uses.
      return 'tokens';
    default:
      return 'all';
  }
}
