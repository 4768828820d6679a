// Benchmark: triggers, from a change in the emulators to its delivery at a webhook receiver, and
// what idle polling subscriptions cost the gateway. On the embedded store and on PostgreSQL
// (BENCH_DATABASE_URL, default the local test database), the emulators in their own process:
// - delay: --samples changes one at a time, each at a random moment, p50/p95 from the tool call
//   that makes the change (its request sent) to the trigger.fired event at a loopback receiver,
//   for a polling trigger (a Notion database's rows, every --interval s) and for a push trigger (a
//   Google Calendar watch channel; it polls once an hour, so what arrives came by push);
// - idle: --subscriptions polling subscriptions (a Notion page each, polled every --idle-interval
//   s, nothing changing), seeded into the stopped gateway's store as copies of one made through the
//   API; the gateway's CPU seconds and database statements (portico_database_statements_total)
//   per minute over --idle-seconds, and statements per poll (polls counted as Notion responses).
// Usage: npm run bench:triggers [-- --samples 20 --interval 2 --subscriptions 10000 --idle-seconds 60]
import http from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../dist/store/db.js';
import {
  authorizeSandbox,
  cpuSecondsOf,
  gatewayToken,
  onBothStores,
  startEmulators,
  startGateway,
  stop,
} from './lib.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '20' },
    interval: { type: 'string', default: '2' },
    subscriptions: { type: 'string', default: '10000' },
    'idle-interval': { type: 'string', default: '60' },
    'idle-seconds': { type: 'string', default: '60' },
    warmup: { type: 'string', default: '15' },
  },
});
const SAMPLES = Number(values.samples);
const INTERVAL = Number(values.interval);
const SUBSCRIPTIONS = Number(values.subscriptions);
const IDLE_INTERVAL = Number(values['idle-interval']);
const IDLE_SECONDS = Number(values['idle-seconds']);
const WARMUP = Number(values.warmup);

const METRICS_TOKEN = 'bench-metrics-token-0123456789';
/** The sandbox's Notion workspace: a database and a page of the default user. */
const TASKS = '39fbdf12-08c0-4b0b-95e8-06be30a24a4a';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const USER = 'bench-user';

const emulators = await startEmulators();
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The receiver: when each item's first trigger.fired event arrived. */
function startReceiver() {
  const arrivals = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const event = JSON.parse(Buffer.concat(chunks).toString());
      const item = event.data?.item_id;
      if (event.type === 'trigger.fired' && item && !arrivals.has(item)) arrivals.set(item, at);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 10_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/hook`,
        arrivals,
        close: () => new Promise((r) => server.close(r)),
      }),
    ),
  );
}

function client(gw, token) {
  return async (method, path, body) => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return text ? JSON.parse(text) : {};
  };
}

async function waitFor(predicate, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('timed out waiting for a delivery');
    await sleep(2);
  }
}

/** p50/p95 of the delay from `change()` (which returns the changed item's id) to its delivery. */
async function delays(receiver, change, spreadMs) {
  const ms = [];
  for (let i = 0; i < SAMPLES; i++) {
    await sleep(Math.random() * spreadMs);
    const started = performance.now();
    const id = await change(i);
    await waitFor(() => receiver.arrivals.has(id), 30_000);
    ms.push(receiver.arrivals.get(id) - started);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

/** Reads /metrics: one sample's value (summed over the samples matching `labels`). */
async function metric(gw, name, labels = '') {
  const text = await (
    await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels && !line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Copies subscription `id` until there are `count` like it, their next polls spread over one interval. */
async function seed(db, id, count) {
  await db.query(
    `INSERT INTO trigger_subscriptions
     SELECT (jsonb_populate_record(NULL::trigger_subscriptions, to_jsonb(s) || jsonb_build_object(
       'id', s.id || '_' || g,
       'config_key', s.config_key || '#' || g,
       'next_poll_at', now() + random() * make_interval(secs => s.interval_seconds)))).*
     FROM trigger_subscriptions s, generate_series(1, $2::integer - 1) g WHERE s.id = $1`,
    [id, count],
  );
}

async function bench(label, env) {
  const receiver = await startReceiver();
  const common = {
    ...env,
    PORTICO_SANDBOX_URL: emulators.url,
    PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true',
    PORTICO_TRIGGER_MIN_INTERVAL_SECONDS: '1',
    PORTICO_METRICS_TOKEN: METRICS_TOKEN,
  };
  let gw = await startGateway({ ...common, PORTICO_TRIGGER_PUSH: 'true' });
  try {
    const token = await gatewayToken(gw.url, gw.creds);
    const api = client(gw, token);
    await authorizeSandbox(gw, token, 'notion', 'notion', USER);
    await authorizeSandbox(gw, token, 'google_calendar', 'calendar', USER);
    await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['trigger.fired'] });
    const tool = async (tool_name, tool_input) =>
      (await api('POST', '/api/v1/tools/execute', { tool_name, identifier: USER, tool_input })).data;
    const subscribe = async (connection_name, trigger_type, config, interval_seconds) =>
      (
        await api('POST', '/api/v1/triggers', {
          connection_name,
          identifier: USER,
          trigger_type,
          config,
          interval_seconds,
        })
      ).id;

    const polled = await subscribe('notion', 'notes_database_rows', { database_id: TASKS }, INTERVAL);
    const polling = await delays(
      receiver,
      async (i) =>
        (await tool('notes_database_insert_row', { database_id: TASKS, properties: { Name: `Row ${i}` } }))
          .id,
      INTERVAL * 1000,
    );
    await api('DELETE', `/api/v1/triggers/${polled}`);
    const pushed = await subscribe('calendar', 'calendar_events', {}, 3600);
    const push = await delays(
      receiver,
      async (i) =>
        (
          await tool('calendar_create_event', {
            summary: `Event ${i}`,
            start_datetime: '2031-03-04T10:00:00Z',
          })
        ).id,
      1000,
    );
    await api('DELETE', `/api/v1/triggers/${pushed}`);
    const fmt = (d) => `p50 ${(d.p50 / 1000).toFixed(2)} s, p95 ${(d.p95 / 1000).toFixed(2)} s`;
    console.log(
      `${label.padEnd(10)} change → delivery, ${SAMPLES} changes: polling every ${INTERVAL} s ${fmt(polling)}; push (Calendar watch channel) ${fmt(push)}`,
    );

    // Idle: copies of one page subscription, seeded into the stopped gateway's store.
    const template = await subscribe('notion', 'notes_page', { page_id: ROADMAP }, IDLE_INTERVAL);
    await stop(gw.child);
    const seededAt = performance.now();
    if (env.DATABASE_URL) {
      const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 1 });
      await seed({ query: (sql, params) => pool.query(sql, params) }, template, SUBSCRIPTIONS);
      await pool.end();
    } else {
      const db = await openDatabase({ dataDir: `${env.PORTICO_DATA_DIR}/db` });
      await seed(db, template, SUBSCRIPTIONS);
      await db.close();
    }
    const seedSeconds = (performance.now() - seededAt) / 1000;
    gw = await startGateway({ ...common, PORTICO_TRIGGER_PUSH: 'false' });
    await sleep(WARMUP * 1000);
    const read = async () => ({
      cpu: await cpuSecondsOf(gw.child.pid),
      statements: await metric(gw, 'portico_database_statements_total'),
      polls: await metric(gw, 'portico_upstream_responses_total', 'provider="notion"'),
      at: performance.now(),
    });
    const before = await read();
    await sleep(IDLE_SECONDS * 1000);
    const after = await read();
    const minutes = (after.at - before.at) / 60_000;
    const polls = after.polls - before.polls;
    const statements = after.statements - before.statements;
    console.log(
      `${label.padEnd(10)} ${SUBSCRIPTIONS} idle subscriptions every ${IDLE_INTERVAL} s (seeded in ${seedSeconds.toFixed(1)} s), ${IDLE_SECONDS} s measured: ` +
        `gateway CPU ${((after.cpu - before.cpu) / minutes).toFixed(2)} s/min, ` +
        `${Math.round(statements / minutes)} statements/min, ${Math.round(polls / minutes)} polls/min, ` +
        `${(statements / polls).toFixed(3)} statements per poll`,
    );
  } finally {
    await stop(gw.child);
    await receiver.close();
  }
}

try {
  await onBothStores(bench);
} finally {
  await stop(emulators.child);
}
