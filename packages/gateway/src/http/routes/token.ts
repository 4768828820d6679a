import type { FastifyInstance } from 'fastify';
import type { AccessTokenIssuer } from '../../auth/access-tokens.js';
import { FailureThrottle } from '../../auth/failure-throttle.js';
import type { GatewayClientService } from '../../auth/gateway-clients.js';
import { Problem } from '../../errors/problem.js';

interface TokenRequest {
  grant_type?: unknown;
  client_id?: unknown;
  client_secret?: unknown;
}

/**
 * Gateway credentials: the client_credentials grant. The body may be form-encoded or JSON; an
 * Authorization header is ignored on purpose (only the body's credentials count). Error bodies are
 * problems that also carry OAuth's `error` member, so OAuth client libraries understand them.
 */
export async function tokenRoutes(
  app: FastifyInstance,
  opts: { clients: GatewayClientService; tokens: AccessTokenIssuer },
): Promise<void> {
  // Ten wrong secrets a minute for one client id, fifty failures a minute from one address.
  const byClient = new FailureThrottle(10, 60_000);
  const byAddress = new FailureThrottle(50, 60_000);
  app.post('/oauth/token', async (req, reply) => {
    const body = (req.body ?? {}) as TokenRequest;
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw new Problem(
        'invalid_input',
        'Send grant_type, client_id and client_secret as a form or JSON object.',
      );
    }
    if (body.grant_type !== 'client_credentials') {
      throw new Problem(
        'unsupported_grant_type',
        body.grant_type === undefined
          ? 'grant_type is required; send grant_type=client_credentials.'
          : 'Only grant_type=client_credentials is supported here.',
        { extensions: { error: 'unsupported_grant_type' } },
      );
    }
    const missing = (['client_id', 'client_secret'] as const).filter(
      (f) => typeof body[f] !== 'string' || !(body[f] as string).length,
    );
    if (missing.length) {
      throw new Problem(
        'invalid_input',
        `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required in the body.`,
        {
          errors: missing.map((m) => ({ path: `/${m}`, message: 'is required' })),
          extensions: { error: 'invalid_request' },
        },
      );
    }
    const clientKey = body.client_id as string;
    const wait = Math.max(byClient.retryAfterMs(clientKey), byAddress.retryAfterMs(req.ip));
    if (wait > 0) {
      throw new Problem(
        'rate_limited',
        `Too many failed attempts for this client or from this address; retry after ${Math.ceil(wait / 1000)} s.`,
        { retryAfterMs: wait, extensions: { error: 'slow_down' } },
      );
    }
    const client = await opts.clients.verifySecret(clientKey, body.client_secret as string);
    if (!client) {
      byClient.fail(clientKey);
      byAddress.fail(req.ip);
      throw new Problem('invalid_client', 'client_id and client_secret do not match an active client.', {
        extensions: { error: 'invalid_client' },
      });
    }
    byClient.succeed(clientKey);
    reply.header('cache-control', 'no-store');
    return opts.tokens.issue({ clientId: client.id, environmentId: client.environment_id });
  });
}
