import type { FastifyReply, FastifyRequest } from 'fastify';
import { connectionOutOfReach, reachesConnection, requireScope } from '../auth/access.js';
import type { AccessTokenIssuer } from '../auth/access-tokens.js';
import type { ClientStatusCache } from '../auth/client-status.js';
import { PROXY_TOKEN_PREFIX, type ProxyTokenScope, type ProxyTokenService } from '../auth/proxy-tokens.js';
import { scopeForRoute } from '../auth/scopes.js';
import type { AdminService } from '../dashboard/admins.js';
import { CSRF_HEADER, sessionCookie } from '../dashboard/cookie.js';
import { Problem } from '../errors/problem.js';

export interface Principal {
  clientId: string;
  environmentId: string;
  /** A signed-in dashboard admin rather than a gateway client: every scope (a viewer's for reading). */
  admin?: boolean;
  /** The dashboard admin's username and role (sessions only). */
  username?: string;
  role?: 'admin' | 'viewer';
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

function unauthenticated(reason: string): Problem {
  return new Problem('unauthenticated', reason, {
    headers: {
      'www-authenticate': `Bearer realm="portico", error="invalid_token", error_description="${reason.replaceAll('"', "'")}"`,
    },
  });
}

const BEARER = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i;

/**
 * The principal of an Authorization header whose token and client passed the full check before,
 * without waiting. Only such tokens are remembered, so an exact match needs no parsing.
 */
export function knownPrincipal(
  tokens: AccessTokenIssuer,
  clients: ClientStatusCache,
  header: string | undefined,
): Principal | undefined {
  const known = header?.startsWith('Bearer ') ? tokens.verifiedBefore(header.slice(7)) : undefined;
  return known && clients.knownActive(known.clientId) ? known : undefined;
}

/**
 * The principal of an Authorization header carrying a valid gateway access token from a client
 * that is not revoked; otherwise a 401 Problem saying what is wrong.
 */
export async function bearerPrincipal(
  tokens: AccessTokenIssuer,
  clients: ClientStatusCache,
  header: string | undefined,
): Promise<Principal> {
  if (!header) {
    throw unauthenticated(
      'Send "Authorization: Bearer <access token>"; get a token from POST /oauth/token with your client_id and client_secret.',
    );
  }
  if (header.includes(',')) {
    throw unauthenticated('Send exactly one Authorization header.');
  }
  const token = BEARER.exec(header)?.[1];
  if (!token) throw unauthenticated('The Authorization header must be "Bearer <access token>".');
  const result = await tokens.verify(token);
  if (!result.ok) throw unauthenticated(result.reason);
  if (!(await clients.isActive(result.claims.clientId))) {
    throw unauthenticated('The client behind this access token has been revoked; use another client.');
  }
  return result.claims;
}

/**
 * The onRequest hook guarding /api/v1 and /proxy: a valid gateway access token from a client that
 * is not revoked, or (on /api/v1, when `admins` is given) a dashboard session cookie together with
 * its CSRF token. Client status comes from a cache that revocation clears in every process (no row
 * read per request). A token and client seen before are accepted without a promise in between.
 */
export function bearerAuthentication(
  tokens: AccessTokenIssuer,
  clients: ClientStatusCache,
  admins?: AdminService,
) {
  async function verify(req: FastifyRequest, header: string | undefined): Promise<void> {
    const session = admins && !header ? sessionCookie(req.headers.cookie) : undefined;
    if (session && admins) {
      // The dashboard: its session cookie counts only with the session's CSRF token in a header.
      const csrf = req.headers[CSRF_HEADER];
      const admin = await admins.authenticate(session, typeof csrf === 'string' ? csrf : undefined);
      req.principal = {
        clientId: admin.adminId,
        environmentId: admin.environmentId,
        admin: true,
        username: admin.username,
        role: admin.role,
      };
      return;
    }
    req.principal = await bearerPrincipal(tokens, clients, header);
  }

  return function authenticate(
    req: FastifyRequest,
    _reply: FastifyReply,
    done: (error?: Error) => void,
  ): void {
    const header = req.headers.authorization;
    const known = knownPrincipal(tokens, clients, header);
    if (known) {
      req.principal = known;
      done();
    } else {
      verify(req, header).then(() => done(), done);
    }
  };
}

/** The routing headers a proxy token settles, each with its alias. */
const SCOPED_HEADERS = [
  ['connection_name', 'x-connection-name', 'connectionName'],
  ['identifier', 'x-identifier', 'identifier'],
] as const;

type RequestHeaders = Record<string, string | string[] | undefined>;

/** The routing header (or alias) that names something else than the token does, if any. */
function contradiction(headers: RequestHeaders, scope: ProxyTokenScope): string | undefined {
  for (const [name, alias, key] of SCOPED_HEADERS) {
    for (const header of [name, alias]) {
      const value = headers[header];
      if (value !== undefined && value !== scope[key]) return header;
    }
  }
  return undefined;
}

/** Gives a proxied request the routing headers its proxy token names. */
function route(headers: RequestHeaders, scope: ProxyTokenScope): Principal {
  headers.connection_name = scope.connectionName;
  headers.identifier = scope.identifier;
  return { clientId: scope.clientId, environmentId: scope.environmentId };
}

/**
 * The principal of a proxied request whose proxy token was verified recently, its routing headers
 * set from the token, without waiting; undefined when it needs the full check (or a refusal).
 */
export function knownProxyPrincipal(
  proxyTokens: ProxyTokenService,
  headers: RequestHeaders,
): Principal | undefined {
  const header = headers.authorization;
  if (typeof header !== 'string' || !header.startsWith(`Bearer ${PROXY_TOKEN_PREFIX}`)) return undefined;
  const scope = proxyTokens.knownNow(header.slice(7));
  return scope && !contradiction(headers, scope) ? route(headers, scope) : undefined;
}

/**
 * The principal of a proxied request carrying a proxy token, its routing headers set from the
 * token: a 401 when the token is unknown, revoked or expired, a 403 when a routing header names
 * another connection or end user.
 */
export async function proxyTokenPrincipal(
  proxyTokens: ProxyTokenService,
  token: string,
  headers: RequestHeaders,
): Promise<Principal> {
  const scope = await proxyTokens.authenticate(token);
  if (!scope) {
    throw unauthenticated(
      'This proxy token is unknown, revoked or expired; mint another with POST /api/v1/proxy/tokens.',
    );
  }
  const header = contradiction(headers, scope);
  if (header) {
    throw new Problem(
      'proxy_token_scope',
      `The "${header}" header names another ${header.includes('identifier') ? 'end user' : 'connection'} than this proxy token, which reaches "${scope.identifier}" on "${scope.connectionName}" only; leave the routing headers out.`,
      { errors: [{ path: `/headers/${header}`, message: 'contradicts the proxy token' }] },
    );
  }
  return route(headers, scope);
}

/**
 * The onRequest hook guarding /proxy: a proxy token (which names the connection and end user
 * itself), or what bearerAuthentication accepts. Tokens seen before are accepted without a promise.
 */
export function proxyAuthentication(
  tokens: AccessTokenIssuer,
  clients: ClientStatusCache,
  proxyTokens: ProxyTokenService,
) {
  const gateway = bearerAuthentication(tokens, clients);
  return function authenticate(
    req: FastifyRequest,
    reply: FastifyReply,
    done: (error?: Error) => void,
  ): void {
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (!token?.startsWith(PROXY_TOKEN_PREFIX)) {
      gateway(req, reply, done);
      return;
    }
    const known = knownProxyPrincipal(proxyTokens, req.headers);
    if (known) {
      req.principal = known;
      done();
      return;
    }
    proxyTokenPrincipal(proxyTokens, token, req.headers).then((principal) => {
      req.principal = principal;
      done();
    }, done);
  };
}

/** A dashboard viewer's change: viewers read, and only admins change anything. */
function viewerIsReadOnly(method: string, route: string | undefined): Problem {
  return new Problem(
    'insufficient_scope',
    `A dashboard viewer is read-only: ${method} ${route ?? 'this route'} needs an admin; ask an admin to make the change or to give your account the "admin" role.`,
    { extensions: { role: 'viewer' } },
  );
}

/**
 * The onRequest hook after authentication on /api/v1: the route's scope (auth/scopes.ts) must be
 * among the client's. Dashboard admins have every scope.
 */
export function scopeAuthorization(clients: ClientStatusCache) {
  const refusal = (req: FastifyRequest): Problem | undefined => {
    if (req.principal.admin) {
      return req.principal.role === 'viewer' && req.method !== 'GET' && req.method !== 'HEAD'
        ? viewerIsReadOnly(req.method, req.routeOptions.url)
        : undefined;
    }
    const grant = clients.grantOf(req.principal.clientId);
    const route = req.routeOptions.url;
    if (grant.scopes === null || route === undefined) return undefined;
    try {
      requireScope(grant, scopeForRoute(req.method, route), `${req.method} ${route}`);
      return undefined;
    } catch (problem) {
      return problem as Problem;
    }
  };
  return function authorize(req: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    done(refusal(req));
  };
}

/**
 * The preHandler hook on /api/v1 for clients limited to some connections: a request that names
 * another connection (`connection_name` or `connection_names` in its body, `connection_name` in its
 * query, a connection in its path) is refused. Records found by id and lists ask auth/access.ts in
 * their routes.
 */
export function connectionAuthorization(clients: ClientStatusCache) {
  const refusal = (req: FastifyRequest): Problem | undefined => {
    if (req.principal.admin) return undefined;
    const grant = clients.grantOf(req.principal.clientId);
    if (grant.connectionNames === null) return undefined;
    const body = req.body as { connection_name?: unknown; connection_names?: unknown } | undefined;
    const query = req.query as { connection_name?: unknown } | undefined;
    const params = req.params as { name?: unknown } | undefined;
    const named = [
      body?.connection_name,
      query?.connection_name,
      req.routeOptions.url?.includes('/connections/:name') ? params?.name : undefined,
      // Tokens and MCP OAuth grants name their connections in a list.
      ...(Array.isArray(body?.connection_names) ? body.connection_names : []),
    ].filter((value): value is string => typeof value === 'string');
    const outside = named.find((name) => !reachesConnection(grant, name));
    return outside === undefined ? undefined : connectionOutOfReach(outside, grant);
  };
  return function authorize(req: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    done(refusal(req));
  };
}
