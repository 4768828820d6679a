// Benchmark: does the gateway stay fast and bounded as the database grows? Measures list and
// lookup latency (p50/p99) on an empty PostgreSQL schema, seeds connected accounts, executions and
// events into it, and measures again; prints the ratios, the resident memory of the gateway, the
// database reads of warm tool and proxy calls, and table and index sizes.
// Then runs bench:replicas' mixed load on the seeded schema (--replicas 0 skips it).
// Usage: npm run bench:scale [-- --accounts 100000 --executions 1000000 --events 200000 --requests 200
//   --replicas 3 --seconds 15]
// A million accounts and 10^8 executions: --accounts 1000000 --executions 100000000 (about 45 GB
// of disk and 30 minutes of seeding on 2 cores; the output says what was seeded).
// Needs PostgreSQL at BENCH_DATABASE_URL (default: the local test database).
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { authorizeSandbox, gatewayToken, postgresSchema, rssOf, startGateway, stop } from './lib.js';
import { replicaBench } from './replicas.js';
import { seed } from './seed.js';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '100000' },
    executions: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '200000' },
    requests: { type: 'string', default: '200' },
    replicas: { type: 'string', default: '3' },
    'retention-days': { type: 'string', default: '0' },
    seconds: { type: 'string', default: '15' },
  },
});
const ACCOUNTS = Number(values.accounts);
const EXECUTIONS = Number(values.executions);
const EVENTS = Number(values.events);
const REQUESTS = Number(values.requests);
const REPLICAS = Number(values.replicas);
const RETENTION_DAYS = Number(values['retention-days']);
const USERS = 50;

const store = await postgresSchema();
if (store.skipped) {
  console.log(`postgres   skipped: ${store.skipped}`);
  process.exit(0);
}
const schema = /search_path=(\w+)/.exec(decodeURIComponent(store.env.DATABASE_URL))[1];
const db = new pg.Client({
  connectionString: store.env.DATABASE_URL.split('?')[0],
  options: `-c search_path=${schema}`,
});
await db.connect();

const gw = await startGateway({ ...store.env, PORTICO_SANDBOX: 'true' });
try {
  const token = await gatewayToken(gw.url, gw.creds);
  // Notion allows about three requests a second per token and the gateway keeps to it: warm calls
  // go round-robin over USERS end users so that the figures are the gateway's, not the limit's.
  for (let i = 0; i < USERS; i++)
    await authorizeSandbox(gw, token, 'notion', 'bench-notion', `bench-user-${i}`);
  let turn = 0;
  const user = () => `bench-user-${turn++ % USERS}`;
  const auth = { authorization: `Bearer ${token}` };
  const call = (path, init = {}) =>
    fetch(`${gw.url}${path}`, { ...init, headers: { ...auth, ...init.headers } }).then(async (r) => {
      await r.arrayBuffer();
      if (r.status >= 400) throw new Error(`${path}: ${r.status}`);
      return r;
    });
  const tool = () =>
    call('/api/v1/tools/execute', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool_name: 'notes_user_list', identifier: user(), tool_input: {} }),
    });
  const proxy = () =>
    call('/proxy/v1/users/me', { headers: { connection_name: 'bench-notion', identifier: user() } });
  for (let i = 0; i < USERS; i++) {
    await tool();
    await proxy();
  }
  const someExecution = (await db.query('SELECT id FROM executions LIMIT 1')).rows[0].id;
  const someAccount = (await db.query('SELECT id FROM connected_accounts LIMIT 1')).rows[0].id;

  const ROUTES = {
    'accounts: first page': () => call('/api/v1/connected-accounts?page_size=50'),
    'accounts: by identifier': () => call('/api/v1/connected-accounts?identifier=bench-user-1'),
    'accounts: by id': () => call(`/api/v1/connected-accounts/${someAccount}`),
    'executions: first page': () => call('/api/v1/executions?page_size=50'),
    'executions: by identifier': () => call('/api/v1/executions?identifier=bench-user-1&page_size=50'),
    'executions: errors': () => call('/api/v1/executions?status=error&page_size=50'),
    'executions: by id': () => call(`/api/v1/executions/${someExecution}`),
    'executions: stats 7d': () => call('/api/v1/executions/stats?window=7d'),
    'events: newest first': () => call('/api/v1/events?order=newest_first&page_size=50'),
    'tool call (warm)': tool,
    'proxy (warm)': proxy,
  };

  const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  async function measure() {
    const out = {};
    for (const [name, run] of Object.entries(ROUTES)) {
      process.stdout.write(`  ${name} …\r`);
      // Warmed alike before both measurements: a cold process would make the empty figures look slow.
      for (let i = 0; i < 50; i++) await run();
      const ms = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now();
        await run();
        ms.push(performance.now() - t0);
      }
      ms.sort((a, b) => a - b);
      out[name] = { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) };
    }
    return out;
  }

  /**
   * Index and table reads of connections and gateway clients, from PostgreSQL's own counters: a
   * request that read its account would join its connection (connected_accounts itself is also
   * touched by the batched last-use and execution writes, so it is left out).
   */
  async function reads() {
    // A busy backend reports its counters at most once a second, an idle one up to 10 s later
    // (PostgreSQL 15): without the wait, reads made before the sample would land in it.
    await new Promise((r) => setTimeout(r, 11_000));
    await db.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await db.query(
      `SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::bigint AS n FROM pg_stat_user_tables
       WHERE schemaname = $1 AND relname IN ('connections', 'gateway_clients')`,
      [schema],
    );
    return Number(rows[0].n);
  }
  async function warmReads() {
    // A cached credential is re-read 60 s after it was read (another replica may have refreshed
    // it): past that age every entry of the measurements above, then every user warmed afresh, so
    // the sample below sees only warm calls.
    await new Promise((r) => setTimeout(r, 61_000));
    for (let i = 0; i < USERS; i++) {
      await tool();
      await proxy();
    }
    const before = await reads();
    const began = Date.now();
    for (let i = 0; i < 200; i++) {
      await tool();
      await proxy();
    }
    const calls = Date.now() - began;
    // The gateway writes last-use times and execution records in batches, off the request path.
    const warm = (await reads()) - before;
    // Reads the calls did not cause (background jobs) show in as long a time without calls.
    const idleBefore = await reads();
    await new Promise((r) => setTimeout(r, calls));
    return { warm, idle: (await reads()) - idleBefore };
  }

  /**
   * One retention run of the gateway's own ExecutionService on the seeded table, as a replica
   * starts it every 10 minutes, with the executions list requested meanwhile.
   */
  async function retentionRun() {
    const { openDatabase } = await import('../dist/store/db.js');
    const { ExecutionService } = await import('../dist/executions/service.js');
    const database = await openDatabase({ url: store.env.DATABASE_URL });
    const service = new ExecutionService(database, pino({ level: 'silent' }), {}, RETENTION_DAYS);
    const past = async () =>
      Number(
        (
          await db.query(
            "SELECT count(*) AS n FROM executions WHERE started_at < now() - $1::int * interval '1 day'",
            [RETENTION_DAYS],
          )
        ).rows[0].n,
      );
    try {
      const due = await past();
      const began = Date.now();
      let running = true;
      const run = service.prune().finally(() => {
        running = false;
      });
      const ms = [];
      while (running) {
        const t0 = performance.now();
        await call('/api/v1/executions?page_size=50');
        ms.push(performance.now() - t0);
      }
      const removed = await run;
      const seconds = (Date.now() - began) / 1000;
      ms.sort((a, b) => a - b);
      return {
        due,
        removed,
        seconds,
        left: await past(),
        requests: ms.length,
        p50: percentile(ms, 0.5),
        p99: percentile(ms, 0.99),
      };
    } finally {
      await service.close();
      await database.close();
    }
  }

  const empty = await measure();
  const emptyRss = await rssOf(gw.child.pid);
  const emptyReads = await warmReads();
  const rowBytes = async (sample) =>
    Number(
      (await db.query(`SELECT avg(pg_column_size(e.*))::int AS n FROM executions e ${sample}`)).rows[0].n,
    );
  const recordedRow = await rowBytes('');

  console.log(`seeding ${ACCOUNTS} accounts, ${EXECUTIONS} executions, ${EVENTS} events …`);
  const began = Date.now();
  const env = (await db.query('SELECT id FROM environments LIMIT 1')).rows[0].id;
  const conn = (await db.query("SELECT id FROM connections WHERE name = 'bench-notion'")).rows[0].id;
  await seed(db, {
    environmentId: env,
    connectionId: conn,
    accounts: ACCOUNTS,
    executions: EXECUTIONS,
    events: EVENTS,
  });
  console.log(`seeded in ${((Date.now() - began) / 1000).toFixed(0)} s`);

  const seededRow = await rowBytes('TABLESAMPLE SYSTEM (0.1)');
  const seeded = await measure();
  const seededRss = await rssOf(gw.child.pid);
  const seededReads = await warmReads();

  const retention = RETENTION_DAYS > 0 ? await retentionRun() : undefined;

  const fmt = (n) => n.toFixed(1).padStart(7);
  console.log('\nroute                          empty p50/p99 ms   seeded p50/p99 ms   ratio p50/p99');
  for (const name of Object.keys(ROUTES)) {
    const e = empty[name];
    const s = seeded[name];
    console.log(
      `${name.padEnd(30)} ${fmt(e.p50)} ${fmt(e.p99)}    ${fmt(s.p50)} ${fmt(s.p99)}    ${(s.p50 / e.p50).toFixed(2).padStart(6)} ${(s.p99 / e.p99).toFixed(2).padStart(6)}`,
    );
  }
  const mb = (b) => `${(b / 1048576).toFixed(0)} MB`;
  console.log(
    `\ngateway RSS: empty ${mb(emptyRss)}, seeded ${mb(seededRss)} (${((seededRss / emptyRss - 1) * 100).toFixed(0)} %)`,
  );
  console.log(
    `warm path: reads of connections and gateway clients during 200 tool calls + 200 proxied requests: empty ${emptyReads.warm}, seeded ${seededReads.warm} (as long without calls: ${emptyReads.idle}, ${seededReads.idle})`,
  );
  console.log(
    `execution rows: ${recordedRow} bytes each as the gateway records them (input, output summary, timings), ${seededRow} as seeded`,
  );
  if (retention) {
    const r = retention;
    console.log(
      `retention at ${RETENTION_DAYS} days: ${r.due} executions past it; one run (as each replica starts every 10 minutes) ` +
        `removed ${r.removed} in ${r.seconds.toFixed(0)} s (${(r.removed / r.seconds).toFixed(0)}/s), ${r.left} left for the next runs; ` +
        `executions' first page meanwhile p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.requests} requests)`,
    );
  }
  const { rows: sizes } = await db.query(
    `SELECT c.relname AS table, c.reltuples::bigint AS rows, pg_relation_size(c.oid) AS heap,
       pg_indexes_size(c.oid) AS indexes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r' AND pg_total_relation_size(c.oid) > 1048576
     ORDER BY pg_total_relation_size(c.oid) DESC`,
    [schema],
  );
  console.log('\ntable                    rows (est.)        heap     indexes');
  for (const r of sizes) {
    console.log(
      `${r.table.padEnd(22)} ${String(r.rows).padStart(12)} ${mb(Number(r.heap)).padStart(11)} ${mb(Number(r.indexes)).padStart(11)}`,
    );
  }
  if (REPLICAS > 0) {
    // The mixed load of bench:replicas on this seeded schema: several replicas behind nginx, one
    // killed under load, then one replica alone.
    await stop(gw.child);
    console.log(`\n${REPLICAS} replicas behind nginx on the seeded schema:`);
    await replicaBench({
      store,
      creds: gw.creds,
      replicas: REPLICAS,
      seconds: Number(values.seconds),
      concurrency: 48,
      users: 20,
    });
  }
} finally {
  await stop(gw.child);
  await db.end();
  await store.drop();
}
