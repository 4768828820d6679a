// Benchmark: gateway start-up time and the request rate of an authenticated GET /api/v1/connections.
// Usage: npm run bench:api [-- --seconds 10 --concurrency 32]
// Runs on the embedded store, and on PostgreSQL when BENCH_DATABASE_URL (default: the local test
// database) is reachable. The gateway runs in its own process so the load generator does not
// share its event loop.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '32' } },
});
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// Start-up time is measured to the first successful /readyz.
async function startAndProbe(env) {
  const began = process.hrtime.bigint();
  const child = spawn(process.execPath, [CLI, 'start'], {
    env: { PATH: process.env.PATH, PORTICO_HOST: '127.0.0.1', PORTICO_LOG_LEVEL: 'info', ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${env.PORTICO_PORT}`;
  for (;;) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) break;
    } catch {}
    if (child.exitCode !== null) throw new Error(`gateway exited: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  const creds = /client_id:\s+(\S+)\n\s+client_secret:\s+(\S+)/.exec(out);
  return { child, url, ms, creds: creds && { id: creds[1], secret: creds[2] } };
}

async function stop(child) {
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
}

function load(url, token) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const target = new URL('/api/v1/connections', url);
  const latencies = [];
  let errors = 0;
  const deadline = Date.now() + SECONDS * 1000;
  const one = () =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      const req = http.get(target, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) errors++;
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  const worker = async () => {
    while (Date.now() < deadline) await one();
  };
  const started = Date.now();
  return Promise.all(Array.from({ length: CONCURRENCY }, worker)).then(() => {
    agent.destroy();
    latencies.sort((a, b) => a - b);
    const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
    return {
      requests: latencies.length,
      rps: latencies.length / ((Date.now() - started) / 1000),
      p50: pct(50),
      p99: pct(99),
      errors,
    };
  });
}

async function bench(label, env) {
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const first = await startAndProbe({ ...env, PORTICO_PORT: port });
  const creds = first.creds;
  await stop(first.child);
  const warm = await startAndProbe({ ...env, PORTICO_PORT: port });
  const tokenRes = await fetch(`${warm.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: creds.id,
      client_secret: creds.secret,
    }),
  });
  const { access_token: token } = await tokenRes.json();
  for (const name of ['notion-prod', 'calendar', 'crm']) {
    await fetch(`${warm.url}/api/v1/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, provider: 'hubspot', sandbox: true }),
    });
  }
  await load(warm.url, token); // warm-up
  const result = await load(warm.url, token);
  await stop(warm.child);
  console.log(
    `${label.padEnd(10)} start (empty store) ${first.ms.toFixed(0)} ms | start (existing store) ${warm.ms.toFixed(0)} ms | ` +
      `GET /api/v1/connections: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
      `${result.errors} errors (${CONCURRENCY} connections, ${SECONDS}s)`,
  );
}

const dir = await mkdtemp(path.join(tmpdir(), 'portico-bench-'));
try {
  await bench('embedded', { PORTICO_DATA_DIR: dir });
} finally {
  await rm(dir, { recursive: true, force: true });
}

const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
try {
  await probe.connect();
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  await probe.query(`CREATE SCHEMA ${schema}`);
  try {
    await bench('postgres', {
      DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      PORTICO_MASTER_KEY: randomBytes(32).toString('base64'),
    });
  } finally {
    await probe.query(`DROP SCHEMA ${schema} CASCADE`);
  }
} catch (error) {
  console.log(`postgres   skipped: ${error.message}`);
} finally {
  await probe.end().catch(() => {});
}
