import { createServer, type Server } from 'node:http';
import type { GatewayMetrics } from './metrics.js';

/**
 * /metrics on a port of its own (PORTICO_METRICS_PORT), without a token: for deployments where
 * only the scraper can reach that port. Anything else on it is 404.
 */
export async function listenMetrics(metrics: GatewayMetrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.text().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
