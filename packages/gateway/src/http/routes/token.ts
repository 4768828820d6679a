import type { FastifyInstance } from 'fastify';
import type { AccessTokenIssuer } from '../../auth/access-tokens.js';
import { FailureThrottle, holdBackWrongAnswer, throttleKey } from '../../auth/failure-throttle.js';
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
  // Failures within a minute: ten for one client id from one address, fifty from one address, and
  // ten for one client id from anywhere (a guesser spreading over addresses is slowed, not refused).
  const byClientAtAddress = new FailureThrottle(10, 60_000);
  const byAddress = new FailureThrottle(50, 60_000);
  const byClient = new FailureThrottle(10, 60_000);
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
    const clientId = body.client_id as string;
    // The secret is always checked: a throttle that refused the right one would let anybody who
    // knows a client id stop that application from getting tokens.
    const client = await opts.clients.verifySecret(clientId, body.client_secret as string);
    const pair = throttleKey(req.ip, clientId);
    if (!client) {
      const clientKey = throttleKey(clientId);
      // Decided by the failures before this one: the tenth wrong secret is still a plain 401.
      const wait = Math.max(byClientAtAddress.retryAfterMs(pair), byAddress.retryAfterMs(req.ip));
      const slow = wait > 0 || byClient.retryAfterMs(clientKey) > 0;
      byClientAtAddress.fail(pair);
      byAddress.fail(req.ip);
      byClient.fail(clientKey);
      if (slow) await holdBackWrongAnswer();
      if (wait > 0) {
        throw new Problem(
          'rate_limited',
          `client_id and client_secret do not match an active client, and too many attempts have failed for this client or from this address: wrong secrets are answered like this for ${Math.ceil(wait / 1000)} s. Check the client_secret; the right one is accepted at once.`,
          { retryAfterMs: wait, extensions: { error: 'slow_down' } },
        );
      }
      throw new Problem('invalid_client', 'client_id and client_secret do not match an active client.', {
        extensions: { error: 'invalid_client' },
      });
    }
    byClientAtAddress.succeed(pair);
    reply.header('cache-control', 'no-store');
    return opts.tokens.issue({ clientId: client.id, environmentId: client.environment_id });
  });
}
