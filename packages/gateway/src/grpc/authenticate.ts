import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import { type Grant, requireScope } from '../auth/access.js';
import type { AccessTokenClaims, AccessTokenIssuer } from '../auth/access-tokens.js';
import type { ClientStatusCache } from '../auth/client-status.js';
import type { Scope } from '../auth/scopes.js';
import { Problem } from '../errors/problem.js';

const PRINCIPAL = createContextKey<AccessTokenClaims | undefined>(undefined, {
  description: 'the gateway client behind the call',
});
const GRANT = createContextKey<Grant | undefined>(undefined, {
  description: 'what the gateway client behind the call may reach',
});

const BEARER = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i;

/**
 * The gateway client of a call, from the same access tokens as REST (`authorization` metadata,
 * `Bearer <token>`), checked against the same revocation cache. A refusal is `unauthenticated`,
 * which the SDK answers by fetching a new token and retrying once.
 */
export async function authenticate(
  tokens: AccessTokenIssuer,
  clients: ClientStatusCache,
  header: string | null,
): Promise<AccessTokenClaims> {
  if (!header) {
    throw new Problem(
      'unauthenticated',
      'Send "authorization: Bearer <access token>" metadata; get a token from POST /oauth/token with your client_id and client_secret.',
    );
  }
  if (header.includes(',')) throw new Problem('unauthenticated', 'Send exactly one authorization header.');
  const token = BEARER.exec(header)?.[1];
  if (!token)
    throw new Problem('unauthenticated', 'The authorization header must be "Bearer <access token>".');
  const result = await tokens.verify(token);
  if (!result.ok) throw new Problem('unauthenticated', result.reason);
  if (!(await clients.isActive(result.claims.clientId))) {
    throw new Problem(
      'unauthenticated',
      'The client behind this access token has been revoked; use another client.',
    );
  }
  return result.claims;
}

export function rememberPrincipal(
  ctx: { contextValues: HandlerContext['values'] },
  claims: AccessTokenClaims,
  grant: Grant,
): void {
  ctx.contextValues.set(PRINCIPAL, claims);
  ctx.contextValues.set(GRANT, grant);
}

/** The gateway client of the authenticated call. */
export function clientOf(ctx: HandlerContext): string {
  const claims = ctx.values.get(PRINCIPAL);
  if (!claims) throw new Problem('unauthenticated', 'The call is not authenticated.');
  return claims.clientId;
}

/** What the authenticated call's client may reach (auth/access.ts decides with it). */
export function grantOf(ctx: HandlerContext): Grant {
  const grant = ctx.values.get(GRANT);
  if (!grant) throw new Problem('unauthenticated', 'The call is not authenticated.');
  return grant;
}

/** The environment the authenticated call acts in. */
export function environmentOf(ctx: HandlerContext): string {
  const claims = ctx.values.get(PRINCIPAL);
  // The authentication interceptor runs before every method; reaching here without is a wiring bug.
  if (!claims) throw new Problem('unauthenticated', 'The call is not authenticated.');
  return claims.environmentId;
}

/**
 * The scope an agent-actions method needs: running tools, links for end users, changing or reading
 * connected accounts, reading connections; anything else needs every scope.
 */
function grpcScope(method: string): Scope | 'all' {
  if (/Tool/.test(method)) return 'tools';
  if (/Link/.test(method)) return 'links';
  if (/Account/.test(method)) return /^(Get|List)/.test(method) ? 'accounts:read' : 'accounts';
  if (/Connection/.test(method)) return 'connections:read';
  return 'all';
}

/** Refuses a method the client's scopes do not cover. */
export function authorizeMethod(clients: ClientStatusCache, claims: AccessTokenClaims, method: string): void {
  requireScope(clients.grantOf(claims.clientId), grpcScope(method), method);
}
