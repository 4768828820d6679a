// Benchmark: gateway start-up time, resident memory and the request rate of an authenticated
// GET /api/v1/connections.
// Usage: npm run bench:api [-- --seconds 10 --concurrency 32 --starts 3]
// Runs on the embedded store, and on PostgreSQL when BENCH_DATABASE_URL (default: the local test
// database) is reachable. The gateway runs in its own process so the load generator does not
// share its event loop. Start-up time is measured to the first successful /readyz. A start is a
// single figure that a busy moment of a shared machine moves a lot, so `--starts` first starts (each
// on a new store) and as many restarts (on the last one) are made, and the medians printed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gatewayToken, load, postgresSchema, rssOf, startGateway, stop } from './lib.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '32' },
    starts: { type: 'string', default: '3' },
  },
});
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);
const STARTS = Number(values.starts);

/** Starts a gateway, reads its settled RSS and, unless `keep`, stops it. */
async function start(env, keep = false) {
  const gw = await startGateway(env);
  const rss = await settledRss(gw.child.pid);
  if (!keep) await stop(gw.child);
  return { gw, ms: gw.ms, rss };
}

/**
 * `newStore()` gives the environment of a store never opened; resolves to what to clean up.
 * `targets` (the embedded store's, from the performance issue) are printed beside the medians.
 */
async function bench(label, newStore, targets) {
  const firsts = [];
  let env;
  let creds;
  for (let i = 0; i < STARTS; i++) {
    env = await newStore();
    const first = await start(env);
    creds = first.gw.creds;
    firsts.push(first);
  }
  const restarts = [];
  for (let i = 0; i < STARTS - 1; i++) restarts.push(await start(env));
  const warm = await start(env, true);
  restarts.push(warm);
  const token = await gatewayToken(warm.gw.url, creds);
  for (const name of ['notion-prod', 'calendar', 'crm']) {
    await fetch(`${warm.gw.url}/api/v1/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, provider: 'hubspot', sandbox: true }),
    });
  }
  const target = {
    url: `${warm.gw.url}/api/v1/connections`,
    headers: { authorization: `Bearer ${token}` },
    concurrency: CONCURRENCY,
  };
  await load({ ...target, seconds: 2 });
  const result = await load({ ...target, seconds: SECONDS });
  const loadedRss = await rssOf(warm.gw.child.pid);
  await stop(warm.gw.child);
  const goal = (text) => (targets ? `, target ${text}` : '');
  const ms = (runs, limit) =>
    `${median(runs.map((r) => r.ms)).toFixed(0)} ms (${runs.map((r) => r.ms.toFixed(0)).join(' ')}${goal(`< ${limit} ms`)})`;
  const rss = (runs, limit) =>
    `${mib(median(runs.map((r) => r.rss)))} MiB (${runs.map((r) => mib(r.rss)).join(' ')}${goal(`≤ ${limit} MiB`)})`;
  console.log(
    `${label.padEnd(10)} start, median of ${STARTS}: empty store ${ms(firsts, targets?.firstMs)} | existing store ${ms(restarts, targets?.restartMs)} | ` +
      `GET /api/v1/connections: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
      `${result.errors} errors (${CONCURRENCY} connections, ${SECONDS}s)`,
  );
  console.log(
    `${''.padEnd(10)} RSS after start: empty store ${rss(firsts, targets?.firstMib)}, existing store ${rss(restarts, targets?.restartMib)}; after the load ${mib(loadedRss)} MiB`,
  );
}

/** Resident memory once start-up work has settled (the first request may still be allocating). */
async function settledRss(pid) {
  await new Promise((resolve) => setTimeout(resolve, 500));
  return rssOf(pid);
}

const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mib = (bytes) => (bytes / 1048576).toFixed(0);

const dir = await mkdtemp(path.join(tmpdir(), 'portico-bench-'));
try {
  let n = 0;
  await bench('embedded', async () => ({ PORTICO_DATA_DIR: path.join(dir, String(n++)) }), {
    firstMs: 2000,
    restartMs: 1000,
    // The issue's 300 and 200 MB, read as 10^6 bytes: the stricter reading.
    firstMib: 286,
    restartMib: 190,
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
// The first schema also tells whether PostgreSQL is there at all.
const first = await postgresSchema();
if (first.skipped) console.log(`postgres   skipped: ${first.skipped}`);
else {
  const schemas = [];
  try {
    await bench('postgres', async () => {
      const schema = schemas.length === 0 ? first : await postgresSchema();
      schemas.push(schema);
      return schema.env;
    });
  } finally {
    for (const schema of schemas.length ? schemas : [first]) await schema.drop();
  }
}
