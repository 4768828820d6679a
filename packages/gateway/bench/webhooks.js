// Benchmark: webhook delivery, from a state change to a 2xx at a loopback receiver.
// Usage: npm run bench:webhooks [-- --events 2000 --concurrency 32 --idle 50]
// On the embedded store and on PostgreSQL (BENCH_DATABASE_URL, default the local test database):
// - idle queue: --idle changes one at a time, 50 ms apart: p50/p99 delay from the change to delivery;
// - load: --events changes (new connections) made through the API at --concurrency, delivered as
//   they come: events/s from the first change to the last delivery, and p50/p99 delay under load.
// A change's time is when its API request was sent (the commit is before the response), so the
// delays include the API call. The receiver answers 204 and runs in this process.
import http from 'node:http';
import { parseArgs } from 'node:util';
import { gatewayToken, onBothStores, startGateway, stop } from './lib.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
    idle: { type: 'string', default: '50' },
  },
});
const EVENTS = Number(values.events);
const CONCURRENCY = Number(values.concurrency);
const IDLE = Number(values.idle);

function startReceiver() {
  const arrivals = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const name = JSON.parse(Buffer.concat(chunks).toString()).data.name;
      if (!arrivals.has(name)) arrivals.set(name, at);
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

async function waitFor(predicate, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('timed out waiting for deliveries');
    await new Promise((r) => setTimeout(r, 2));
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function bench(label, env) {
  const receiver = await startReceiver();
  const gw = await startGateway({ ...env, PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true' });
  try {
    const token = await gatewayToken(gw.url, gw.creds);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${gw.url}/api/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url, events: ['connection.created'] }),
    });
    if (created.status !== 201) throw new Error(`webhook: ${created.status} ${await created.text()}`);
    const sent = new Map();
    const change = async (name) => {
      sent.set(name, performance.now());
      const res = await fetch(`${gw.url}/api/v1/connections`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name, provider: 'notion', sandbox: true }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`change: ${res.status}`);
    };
    const delays = (names) => names.map((n) => receiver.arrivals.get(n) - sent.get(n)).sort((a, b) => a - b);

    // Warm-up: connections, JIT, the receiver's keep-alive socket.
    const warm = Array.from({ length: 50 }, (_, i) => `warm-${i}`);
    for (const name of warm) await change(name);
    await waitFor(() => warm.every((n) => receiver.arrivals.has(n)), 30_000);

    const idle = Array.from({ length: IDLE }, (_, i) => `idle-${i}`);
    for (const name of idle) {
      await change(name);
      await waitFor(() => receiver.arrivals.has(name), 30_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    const idleDelays = delays(idle);

    const names = Array.from({ length: EVENTS }, (_, i) => `load-${i}`);
    const queue = [...names];
    const began = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let name = queue.shift(); name; name = queue.shift()) await change(name);
      }),
    );
    const changesDone = performance.now();
    await waitFor(() => names.every((n) => receiver.arrivals.has(n)), 120_000);
    const last = Math.max(...names.map((n) => receiver.arrivals.get(n)));
    const loadDelays = delays(names);
    const seconds = (last - began) / 1000;
    console.log(
      `${label.padEnd(10)} idle queue: delay p50 ${percentile(idleDelays, 50).toFixed(1)} ms, p99 ${percentile(idleDelays, 99).toFixed(1)} ms (${IDLE} changes)`,
    );
    console.log(
      `${''.padEnd(10)} load: ${(EVENTS / seconds).toFixed(0)} events/s delivered (${EVENTS} changes at ${CONCURRENCY} concurrent; the changes alone ${(EVENTS / ((changesDone - began) / 1000)).toFixed(0)}/s), delay p50 ${percentile(loadDelays, 50).toFixed(1)} ms, p99 ${percentile(loadDelays, 99).toFixed(1)} ms`,
    );
  } finally {
    await stop(gw.child);
    await receiver.close();
  }
}

await onBothStores(bench);
