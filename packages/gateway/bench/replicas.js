// Benchmark: several gateway replicas on one PostgreSQL database behind nginx as the load balancer,
// under a mixed load (proxy, tools, API lists, authorization links with their webhooks), then one
// replica killed (SIGKILL) under that load. Prints throughput and p50/p99 per route family, database
// transactions per request, RSS per replica, webhook deliveries, and what the kill cost: the
// requests that failed, against those the killed replica held, and the time until none fail.
// The same load on one replica behind the same nginx gives the per-replica figures.
// Usage: npm run bench:replicas [-- --replicas 3 --seconds 15 --concurrency 48 --users 20]
// bench:scale runs the same on its seeded schema (replicaBench below).
// Needs PostgreSQL at BENCH_DATABASE_URL (default: the local test database) and nginx.
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  authorizeSandbox,
  freePort,
  gatewayToken,
  postgresSchema,
  rssOf,
  startEmulators,
  startGateway,
  stop,
} from './lib.js';
import { findNginx, startBalancer } from './nginx.js';

const CONNECTION = 'bench-drive';

/**
 * The replica benchmark on `store` (a PostgreSQL schema, possibly seeded): `creds` are a gateway
 * client's when the schema already has one, else the first replica creates it.
 */
export async function replicaBench({
  store,
  creds: existing,
  replicas: REPLICAS,
  seconds: SECONDS,
  concurrency: CONCURRENCY,
  users: USERS,
}) {
  const nginx = findNginx();
  if (nginx.missing) {
    console.log(`replicas   skipped: ${nginx.missing}`);
    return;
  }
  const schema = /search_path=(\w+)/.exec(decodeURIComponent(store.env.DATABASE_URL))[1];
  const db = new pg.Client({ connectionString: store.env.DATABASE_URL.split('?')[0] });
  await db.connect();

  const emulators = await startEmulators();
  const emulatorUrl = emulators.url;

  // Webhook deliveries of the links' connected_account.created events land here.
  let delivered = 0;
  const hooks = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.writeHead(204).end();
    });
  });
  await new Promise((r) => hooks.listen(0, '127.0.0.1', r));
  const hooksUrl = `http://127.0.0.1:${hooks.address().port}/hooks`;

  const lbPort = await freePort();
  const lbUrl = `http://127.0.0.1:${lbPort}`;
  const replicaEnv = {
    ...store.env,
    PORTICO_SANDBOX_URL: emulatorUrl,
    PORTICO_PUBLIC_URL: lbUrl,
    PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true',
  };

  const replicas = [];
  let balancer;
  try {
    // The first replica creates the schema and the bootstrap client; the others join it.
    for (let i = 0; i < REPLICAS; i++) replicas.push(await startGateway(replicaEnv));
    const creds = existing ?? replicas[0].creds;
    balancer = await startBalancer(
      nginx.bin,
      replicas.map((r) => r.url),
      lbPort,
    );
    const token = await gatewayToken(lbUrl, creds);
    const auth = { authorization: `Bearer ${token}` };
    for (let i = 0; i < USERS; i++)
      await authorizeSandbox({ url: lbUrl }, token, 'google_drive', CONNECTION, `user-${i}`);
    await fetch(`${lbUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hooksUrl, events: ['connected_account.created'] }),
    }).then((r) => r.arrayBuffer());

    // Unmeasured first: three fresh processes would otherwise be measured while their JIT warms up.
    await mixedLoad(auth, Math.min(5, SECONDS));
    const steady = await mixedLoad(auth, SECONDS);
    await report(`${REPLICAS} replicas`, steady, replicas);

    // One replica killed a third of the way into the same load.
    const victim = replicas.at(-1);
    const killed = await mixedLoad(auth, SECONDS, SECONDS / 3, () => victim.child.kill('SIGKILL'));
    await reportKill(killed);

    // The same load on one replica (the others stopped; nginx keeps the dead ones out).
    for (const r of replicas.slice(1)) await stop(r.child);
    await balancer.stop();
    balancer = await startBalancer(nginx.bin, [replicas[0].url], lbPort);
    const single = await mixedLoad(auth, SECONDS);
    await report('1 replica', single, replicas.slice(0, 1));
    console.log(
      `throughput ${REPLICAS} replicas / 1 replica: ${(steady.total.rps / single.total.rps).toFixed(2)}× on this machine's cores (${(await import('node:os')).availableParallelism()} here: replicas share them, so this is the cost of coordination, not added capacity)`,
    );
    await sizes();
  } finally {
    await balancer?.stop();
    for (const r of replicas) await stop(r.child);
    await stop(emulators.child);
    hooks.close();
    await db.end();
  }

  /** What one request of each family is: proxy 40 %, tool 25 %, lists 20 %, links 10 %, events 5 %. */
  function requestOf(n) {
    const user = `user-${n % USERS}`;
    const slot = n % 20;
    if (slot < 8)
      return {
        family: 'proxy',
        method: 'GET',
        path: '/proxy/drive/v3/files?pageSize=5',
        headers: { connection_name: CONNECTION, identifier: user },
      };
    if (slot < 13)
      return {
        family: 'tool',
        method: 'POST',
        path: '/api/v1/tools/execute',
        body: { tool_name: 'drive_get_file_metadata', identifier: user, tool_input: { file_id: 'root' } },
      };
    if (slot < 17)
      return {
        family: 'list',
        method: 'GET',
        path: slot % 2 ? '/api/v1/connected-accounts?page_size=20' : '/api/v1/executions?page_size=20',
      };
    if (slot < 19)
      return {
        family: 'link',
        method: 'POST',
        path: '/api/v1/connected-accounts/authorization-link',
        body: { connection_name: CONNECTION, identifier: `new-user-${n}` },
      };
    return { family: 'events', method: 'GET', path: '/api/v1/events?page_size=20' };
  }

  /**
   * CONCURRENCY keep-alive clients sending the mix for `seconds`; `atSeconds`/`action` runs once
   * meanwhile (the kill). Latencies per family, outcomes per 100 ms.
   */
  async function mixedLoad(auth, seconds, atSeconds, action) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const families = {};
    const buckets = [];
    const xactBefore = await transactions();
    const started = Date.now();
    const deadline = started + seconds * 1000;
    let actedAt;
    let n = 0;
    if (action) {
      setTimeout(() => {
        actedAt = Date.now();
        action();
      }, atSeconds * 1000);
    }
    const one = (req) =>
      new Promise((resolve) => {
        const t0 = process.hrtime.bigint();
        const body = req.body ? JSON.stringify(req.body) : undefined;
        const sent = http.request(
          `${lbUrl}${req.path}`,
          {
            agent,
            method: req.method,
            headers: { ...auth, ...req.headers, ...(body ? { 'content-type': 'application/json' } : {}) },
          },
          (res) => {
            let text = '';
            res.on('data', (d) => {
              if (res.statusCode >= 400 && text.length < 300) text += d;
            });
            res.on('end', () => resolve({ ok: res.statusCode < 400, status: res.statusCode, t0, text }));
          },
        );
        sent.on('error', () => resolve({ ok: false, status: 0, t0 }));
        sent.end(body);
      });
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < deadline) {
          const req = requestOf(n++);
          const result = await one(req);
          const ms = Number(process.hrtime.bigint() - result.t0) / 1e6;
          families[req.family] ??= { latencies: [], errors: 0, statuses: {} };
          const f = families[req.family];
          f.latencies.push(ms);
          if (!result.ok) {
            f.errors++;
            f.first ??= (result.text || 'connection error').replace(/\s+/g, ' ');
            f.statuses[result.status] = (f.statuses[result.status] ?? 0) + 1;
          }
          const slot = Math.floor((Date.now() - started) / 100);
          buckets[slot] ??= { ok: 0, failed: 0 };
          if (result.ok) buckets[slot].ok++;
          else buckets[slot].failed++;
        }
      }),
    );
    agent.destroy();
    const elapsed = (Date.now() - started) / 1000;
    const xact = (await transactions()) - xactBefore;
    const summary = {};
    let requests = 0;
    let errors = 0;
    for (const [name, f] of Object.entries(families)) {
      f.latencies.sort((a, b) => a - b);
      const pct = (p) =>
        f.latencies[Math.min(f.latencies.length - 1, Math.floor((p / 100) * f.latencies.length))];
      summary[name] = {
        requests: f.latencies.length,
        rps: f.latencies.length / elapsed,
        p50: pct(50),
        p99: pct(99),
        errors: f.errors,
        statuses: f.statuses,
        first: f.first,
      };
      requests += f.latencies.length;
      errors += f.errors;
    }
    return {
      families: summary,
      total: { requests, rps: requests / elapsed, errors },
      xactPerRequest: xact / requests,
      buckets,
      started,
      actedAt,
    };
  }

  async function transactions() {
    const { rows } = await db.query(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0].n);
  }

  async function report(label, result, running) {
    console.log(
      `\n${label}: ${result.total.rps.toFixed(0)} requests/s, ${result.total.errors} failed of ${result.total.requests}, ` +
        `${result.xactPerRequest.toFixed(2)} database transactions per request (background jobs included)`,
    );
    for (const [name, f] of Object.entries(result.families)) {
      console.log(
        `  ${name.padEnd(7)} ${f.rps.toFixed(0).padStart(6)}/s  p50 ${f.p50.toFixed(1).padStart(6)} ms  p99 ${f.p99.toFixed(1).padStart(7)} ms` +
          (f.errors
            ? `  ${f.errors} failed ${JSON.stringify(f.statuses)}, first: ${f.first.slice(0, 200)}`
            : ''),
      );
    }
    const rss = [];
    for (const r of running) rss.push(`${((await rssOf(r.child.pid)) / 2 ** 20).toFixed(0)} MiB`);
    console.log(`  RSS per replica: ${rss.join(', ')}; webhook deliveries so far: ${delivered}`);
  }

  async function reportKill(result) {
    const killBucket = Math.floor((result.actedAt - result.started) / 100);
    const failedBuckets = result.buckets
      .map((b, i) => ({ i, failed: b?.failed ?? 0 }))
      .filter((b) => b.failed > 0);
    const lastFailure = failedBuckets.at(-1);
    const before =
      result.buckets.slice(0, killBucket).reduce((s, b) => s + (b?.ok ?? 0), 0) / (killBucket / 10);
    const afterStart = killBucket + 10;
    const afterBuckets = result.buckets.slice(afterStart);
    const after = afterBuckets.reduce((s, b) => s + (b?.ok ?? 0), 0) / (afterBuckets.length / 10);
    console.log(
      `\nkill -9 of one replica under load: ${result.total.errors} requests failed of ${result.total.requests} ` +
        `(at most ${Math.ceil(CONCURRENCY / REPLICAS)} could be in flight on it); ` +
        (lastFailure
          ? `the last failure ${((lastFailure.i - killBucket) / 10).toFixed(1)} s after the kill`
          : 'none failed') +
        `; ${before.toFixed(0)} requests/s before, ${after.toFixed(0)}/s from 1 s after on ${REPLICAS - 1} replicas`,
    );
    for (const [name, f] of Object.entries(result.families)) {
      if (f.errors)
        console.log(
          `  ${name.padEnd(7)} ${f.errors} failed ${JSON.stringify(f.statuses)}, first: ${f.first.slice(0, 200)}`,
        );
    }
  }

  async function sizes() {
    const { rows } = await db.query(
      `SELECT relname, pg_total_relation_size(c.oid) AS total, pg_indexes_size(c.oid) AS indexes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY total DESC LIMIT 5`,
      [schema],
    );
    const mib = (b) => `${(Number(b) / 2 ** 20).toFixed(1)} MiB`;
    console.log(
      `largest tables: ${rows.map((r) => `${r.relname} ${mib(r.total)} (indexes ${mib(r.indexes)})`).join(', ')}`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      replicas: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '15' },
      concurrency: { type: 'string', default: '48' },
      users: { type: 'string', default: '20' },
    },
  });
  const store = await postgresSchema();
  if (store.skipped) {
    console.log(`replicas   skipped: PostgreSQL unreachable (${store.skipped})`);
    process.exit(0);
  }
  try {
    await replicaBench({
      store,
      replicas: Number(values.replicas),
      seconds: Number(values.seconds),
      concurrency: Number(values.concurrency),
      users: Number(values.users),
    });
  } finally {
    await store.drop();
  }
}
