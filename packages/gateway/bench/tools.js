// Benchmark: what a tool call costs the gateway next to the proxied request that reads the same
// data. In one run: CPU time per request of the gateway process for POST /api/v1/tools/execute
// (notes_user_list) and for GET /proxy/v1/users (the request the tool makes), alternating rounds,
// on the embedded store and on PostgreSQL; the emulators run in their own process.
// Usage: npm run bench:tools [-- --seconds 4 --rounds 5 --concurrency 16]
import { parseArgs } from 'node:util';
import {
  authorizeSandbox,
  cpuSecondsOf,
  gatewayToken,
  LOAD_GENERATOR,
  load,
  onBothStores,
  startEmulators,
  startGateway,
  stop,
} from './lib.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);

const emulators = await startEmulators();
const emulatorUrl = emulators.url;

/** The issue's targets: a tool call at most this many proxied GETs, per store. */
const TARGETS = { embedded: 2, postgres: 1.5 };

const median = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];

async function cpuPerRequest(target, pid) {
  const before = await cpuSecondsOf(pid);
  const result = await load(target);
  const after = await cpuSecondsOf(pid);
  return { us: ((after - before) / result.requests) * 1e6, rps: result.rps, errors: result.errors };
}

async function bench(label, env) {
  const gw = await startGateway({ ...env, PORTICO_SANDBOX_URL: emulatorUrl });
  try {
    const token = await gatewayToken(gw.url, gw.creds);
    await authorizeSandbox(gw, token, 'notion', 'notion', 'bench-user');
    const common = { concurrency: CONCURRENCY, seconds: SECONDS };
    const tool = {
      ...common,
      url: `${gw.url}/api/v1/tools/execute`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: Buffer.from(
        JSON.stringify({ tool_name: 'notes_user_list', identifier: 'bench-user', tool_input: {} }),
      ),
    };
    // The same call from a client limited to the connection: the fast path leaves it to Fastify's
    // route, which checks the connection in its hooks. Shown for what the fast path saves.
    const limitedRes = await fetch(`${gw.url}/api/v1/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-limited', connection_names: ['notion'] }),
    });
    const limited = await limitedRes.json();
    const limitedToken = await gatewayToken(gw.url, { id: limited.client_id, secret: limited.client_secret });
    const routed = { ...tool, headers: { ...tool.headers, authorization: `Bearer ${limitedToken}` } };
    const proxied = {
      ...common,
      url: `${gw.url}/proxy/v1/users`,
      headers: { authorization: `Bearer ${token}`, connection_name: 'notion', identifier: 'bench-user' },
    };
    await load({ ...tool, seconds: 1 });
    await load({ ...proxied, seconds: 1 });
    await load({ ...routed, seconds: 1 });
    const t = [];
    const p = [];
    const r = [];
    let errors = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const tr = await cpuPerRequest(tool, gw.child.pid);
      const pr = await cpuPerRequest(proxied, gw.child.pid);
      const rr = await cpuPerRequest(routed, gw.child.pid);
      t.push(tr.us);
      p.push(pr.us);
      r.push(rr.us);
      errors += tr.errors + pr.errors + rr.errors;
    }
    const ratio = median(t) / median(p);
    console.log(
      `${label.padEnd(10)} gateway CPU per request: tool call ${median(t).toFixed(1)} µs, proxied GET ${median(p).toFixed(1)} µs; ` +
        `ratio ${ratio.toFixed(2)} (target ≤ ${TARGETS[label]}); through Fastify's route ${median(r).toFixed(1)} µs (${(median(r) / median(p)).toFixed(2)}) — ${ROUNDS} rounds of ${SECONDS} s, ${CONCURRENCY} connections, load from ${LOAD_GENERATOR}${errors ? `, ${errors} ERRORS` : ''}`,
    );
  } finally {
    await stop(gw.child);
  }
}

try {
  await onBothStores(bench);
} finally {
  await stop(emulators.child);
}
