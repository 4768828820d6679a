import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenIssuer } from '../auth/access-tokens.js';
import type { ClientStatusCache } from '../auth/client-status.js';
import type { AdminService } from '../dashboard/admins.js';
import { CSRF_HEADER, sessionCookie } from '../dashboard/cookie.js';
import { Problem } from '../errors/problem.js';

export interface Principal {
  clientId: string;
  environmentId: string;
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
      req.principal = { clientId: admin.adminId, environmentId: admin.environmentId };
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
