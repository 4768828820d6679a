import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenIssuer } from '../auth/access-tokens.js';
import type { ClientStatusCache } from '../auth/client-status.js';
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

/**
 * The onRequest hook guarding /api/v1: a valid gateway access token from a client that is not revoked.
 * Client status comes from a cache that revocation clears in every process (no row read per request).
 */
export function bearerAuthentication(tokens: AccessTokenIssuer, clients: ClientStatusCache) {
  return async function authenticate(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = req.headers.authorization;
    if (!header) {
      throw unauthenticated(
        'Send "Authorization: Bearer <access token>"; get a token from POST /oauth/token with your client_id and client_secret.',
      );
    }
    const match = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header);
    if (!match) throw unauthenticated('The Authorization header must be "Bearer <access token>".');
    const result = await tokens.verify(match[1]!);
    if (!result.ok) throw unauthenticated(result.reason);
    if (!(await clients.isActive(result.claims.clientId))) {
      throw unauthenticated('The client behind this access token has been revoked; use another client.');
    }
    req.principal = result.claims;
  };
}
