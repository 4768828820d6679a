// Benchmark: gateway start-up time and the request rate of an authenticated GET /api/v1/connections.
// Usage: npm run bench:api [-- --seconds 10 --concurrency 32]
// Runs on the embedded store, and on PostgreSQL when BENCH_DATABASE_URL (default: the local test
// database) is reachable. The gateway runs in its own process so the load generator does not
// share its event loop. Start-up time is measured to the first successful /readyz.
import { parseArgs } from 'node:util';
import { gatewayToken, load, onBothStores, rssOf, startGateway, stop } from './lib.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '32' } },
});
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);

async function bench(label, env) {
  const first = await startGateway(env);
  const creds = first.creds;
  const firstRss = await settledRss(first.child.pid);
  await stop(first.child);
  const warm = await startGateway(env);
  const warmRss = await settledRss(warm.child.pid);
  const token = await gatewayToken(warm.url, creds);
  for (const name of ['notion-prod', 'calendar', 'crm']) {
    await fetch(`${warm.url}/api/v1/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, provider: 'hubspot', sandbox: true }),
    });
  }
  const target = {
    url: `${warm.url}/api/v1/connections`,
    headers: { authorization: `Bearer ${token}` },
    concurrency: CONCURRENCY,
  };
  await load({ ...target, seconds: 2 });
  const result = await load({ ...target, seconds: SECONDS });
  const loadedRss = await rssOf(warm.child.pid);
  await stop(warm.child);
  console.log(
    `${label.padEnd(10)} start (empty store) ${first.ms.toFixed(0)} ms | start (existing store) ${warm.ms.toFixed(0)} ms | ` +
      `GET /api/v1/connections: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
      `${result.errors} errors (${CONCURRENCY} connections, ${SECONDS}s)`,
  );
  console.log(
    `${''.padEnd(10)} RSS after start: empty store ${mib(firstRss)} MiB, existing store ${mib(warmRss)} MiB; after the load ${mib(loadedRss)} MiB`,
  );
}

/** Resident memory once start-up work has settled (the first request may still be allocating). */
async function settledRss(pid) {
  await new Promise((resolve) => setTimeout(resolve, 500));
  return rssOf(pid);
}

const mib = (bytes) => (bytes / 1048576).toFixed(0);

await onBothStores(bench);
