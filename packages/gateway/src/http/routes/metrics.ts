import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Problem } from '../../errors/problem.js';
import type { GatewayMetrics } from '../../metrics/metrics.js';

const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * GET /metrics in the Prometheus text format, for a scraper holding PORTICO_METRICS_TOKEN. (With
 * PORTICO_METRICS_PORT instead, the same text is served on that port alone; see metrics/server.ts.)
 */
export async function metricsRoutes(
  app: FastifyInstance,
  opts: { metrics: GatewayMetrics; token: string },
): Promise<void> {
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics (Authorization: Bearer PORTICO_METRICS_TOKEN)',
        security: [{ metricsToken: [] }],
        produces: ['text/plain'],
      },
    },
    async (req, reply) => {
      const header = req.headers.authorization ?? '';
      if (!header.startsWith('Bearer ') || !same(header.slice(7).trim(), opts.token)) {
        throw new Problem(
          'unauthenticated',
          'Send "Authorization: Bearer <PORTICO_METRICS_TOKEN>" (the scrape token, not a gateway access token).',
          { headers: { 'www-authenticate': 'Bearer realm="portico-metrics"' } },
        );
      }
      const { contentType, body } = await opts.metrics.text();
      return reply.type(contentType).header('cache-control', 'no-store').send(body);
    },
  );
}
