// Benchmark: what the list routes cost the gateway next to a tool call, in one run. CPU time per
// request of the gateway process for GET /api/v1/connections, /connected-accounts, /executions and
// /events at page sizes 20 and 100, each printed beside POST /api/v1/tools/execute
// (notes_user_list, measured in the same alternating rounds), on the embedded store and on
// PostgreSQL. Every list holds more than 100 rows, so each page is full.
// Usage: npm run bench:lists [-- --seconds 3 --rounds 3 --concurrency 16]
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
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const PAGE_SIZES = [20, 100];
/** Rows of each kind made before measuring: more than the largest page. */
const ROWS = 120;
/** A rule the list routes are held to (issue: a page of 20 at most 3 tool calls). */
const TARGET_AT_20 = 3;

const emulators = await startEmulators();
const median = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];

async function cpuPerRequest(target, pid) {
  const before = await cpuSecondsOf(pid);
  const result = await load(target);
  const after = await cpuSecondsOf(pid);
  return { us: ((after - before) / result.requests) * 1e6, errors: result.errors };
}

/** Connections, accounts, executions and failure events, ROWS or more of each, through the API. */
async function populate(gw, token) {
  const api = async (path, body) => {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status;
  };
  for (let i = 0; i < ROWS; i++)
    await api('/api/v1/connections', { name: `crm-${i}`, provider: 'hubspot', sandbox: true });
  for (let i = 0; i < ROWS; i++) {
    const status = await api('/api/v1/connected-accounts/import', {
      connection_name: 'crm-0',
      identifier: `user-${i}`,
      access_token: `bench-token-${i}`,
    });
    if (status !== 201) throw new Error(`importing an account answered ${status}`);
  }
  // Failed calls (an unknown parameter) each leave an execution record and a failure event.
  for (let i = 0; i < ROWS; i++) {
    await api('/api/v1/tools/execute', {
      tool_name: 'notes_user_list',
      identifier: 'bench-user',
      tool_input: { no_such_parameter: i },
    });
  }
}

async function bench(label, env) {
  const gw = await startGateway({ ...env, PORTICO_SANDBOX_URL: emulators.url });
  try {
    const token = await gatewayToken(gw.url, gw.creds);
    await authorizeSandbox(gw, token, 'notion', 'notion', 'bench-user');
    await populate(gw, token);
    const common = { concurrency: CONCURRENCY, seconds: SECONDS };
    const auth = { authorization: `Bearer ${token}` };
    const tool = {
      ...common,
      url: `${gw.url}/api/v1/tools/execute`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: Buffer.from(
        JSON.stringify({ tool_name: 'notes_user_list', identifier: 'bench-user', tool_input: {} }),
      ),
    };
    const lists = [];
    for (const size of PAGE_SIZES) {
      for (const route of ['connections', 'connected-accounts', 'executions', 'events']) {
        // Events newest first, as people read them; consumers that poll read few at a time.
        const order = route === 'events' ? '&order=newest_first' : '';
        lists.push({
          name: `GET /api/v1/${route}?page_size=${size}`,
          size,
          target: { ...common, url: `${gw.url}/api/v1/${route}?page_size=${size}${order}`, headers: auth },
        });
      }
    }
    await load({ ...tool, seconds: 1 });
    for (const list of lists) await load({ ...list.target, seconds: 1 });
    const toolUs = [];
    const listUs = lists.map(() => []);
    let errors = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const t = await cpuPerRequest(tool, gw.child.pid);
      toolUs.push(t.us);
      errors += t.errors;
      for (const [j, list] of lists.entries()) {
        const r = await cpuPerRequest(list.target, gw.child.pid);
        listUs[j].push(r.us);
        errors += r.errors;
      }
    }
    const perTool = median(toolUs);
    console.log(
      `${label.padEnd(10)} gateway CPU per request, ${ROUNDS} rounds of ${SECONDS} s, ${CONCURRENCY} connections, load from ${LOAD_GENERATOR}${errors ? `, ${errors} ERRORS` : ''}`,
    );
    console.log(
      `${''.padEnd(10)} ${'POST /api/v1/tools/execute (notes_user_list)'.padEnd(44)} ${perTool.toFixed(1).padStart(7)} µs`,
    );
    for (const [j, list] of lists.entries()) {
      const us = median(listUs[j]);
      const ratio = us / perTool;
      const over = list.size === 20 && ratio > TARGET_AT_20 ? ` (over ${TARGET_AT_20}×)` : '';
      console.log(
        `${''.padEnd(10)} ${list.name.padEnd(44)} ${us.toFixed(1).padStart(7)} µs  ${ratio.toFixed(2)}× a tool call${over}`,
      );
    }
  } finally {
    await stop(gw.child);
  }
}

try {
  await onBothStores(bench);
} finally {
  await stop(emulators.child);
}
