import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantOfPrincipal, newAccountRefusal, requireGrant } from '../../auth/access.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import { PROXY_METHODS, type ProxyService, proxyCall, routingValue } from '../../proxy/service.js';
import { answerErrorRaw } from '../errors.js';
import { type ProxyBodyLimits, proxyBody } from './body.js';
import { originBase } from './caller-base.js';
import { relay } from './relay.js';

/**
 * The proxy scope: no body parsing at all (the raw request stream is forwarded as it arrives), so
 * no body limit applies and nothing is buffered beyond what the proxy itself decides. Requests the
 * fast path (./fast-path.ts) cannot serve without waiting come here: first use of a token or an
 * account, a problem to report. An answer given before the body is in (a 401 from the scope's
 * authentication included) closes the connection: the app's body hook sees to it for every route.
 */
export async function proxyRoutes(
  app: FastifyInstance,
  opts: { proxy: ProxyService; body: ProxyBodyLimits; grants: ClientStatusCache },
): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  app.route({
    method: PROXY_METHODS,
    url: '/*',
    exposeHeadRoute: false,
    handler: async (req: FastifyRequest, reply) => {
      const call = proxyCall(
        req.method,
        req.url,
        req.headers,
        req.principal.environmentId,
        originBase(req.raw),
      );
      // Validated before anything is read from the body or sent anywhere.
      const grant = grantOfPrincipal(req.principal, opts.grants);
      requireGrant(
        grant,
        'proxy',
        'the proxy',
        routingValue(req.headers, 'connection_name', 'x-connection-name'),
      );
      const prepared = await opts.proxy.prepare(call, newAccountRefusal(grant));
      const response = await opts.proxy.exchange(prepared, await proxyBody(req.headers, req.raw, opts.body));
      reply.hijack();
      try {
        relay(reply.raw, response, String(req.id), req.server.log);
      } catch (error) {
        answerErrorRaw(reply.raw, error, String(req.id), req.log);
      }
    },
  });
}
