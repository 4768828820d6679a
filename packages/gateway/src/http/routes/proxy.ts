import type { FastifyInstance } from 'fastify';
import type { ProxyService } from '../../proxy/proxy.js';

/**
 * The proxy scope: no body parsing at all (the raw request stream is forwarded as it arrives), so
 * no body limit applies and nothing is buffered beyond what the proxy itself decides.
 */
export async function proxyRoutes(app: FastifyInstance, opts: { proxy: ProxyService }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  app.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/*',
    exposeHeadRoute: false,
    handler: (req, reply) => opts.proxy.forward(req, reply, req.principal.environmentId),
  });
}
