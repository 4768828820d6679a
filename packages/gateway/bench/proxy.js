// Benchmark: what the proxy costs. In one run, against the same emulator endpoint with a small JSON
// body: requests/s and p50/p99 latency direct to the emulator vs through the gateway (ratio and
// added p50), on the embedded store and on PostgreSQL; then peak gateway RSS while 1 GiB streams
// up and down through the proxy. Direct and through-gateway loads alternate for a few rounds, so
// a slow moment of a shared machine hits both; the ratio is the median of the rounds' ratios.
// CPU time per request of each process is printed too: it moves less than throughput does.
// The gateway logs at warn unless --log-level says otherwise (info writes a line per request).
// Then, when nginx is installed, the gateway against nginx configured as the same credential-injecting
// reverse proxy: CPU per request of each for a small GET, a small JSON POST, a 256 KiB download and a 1 MiB upload,
// alternating for --nginx-rounds rounds (the gateway's first and last rounds show whether its cost
// grows with the process's age). The same rounds measure the Node floor (./node-floor.js: Node's
// HTTP server and undici with nothing of Portico), which splits the ratio into what Node costs and
// what Portico's own code adds.
// Usage: npm run bench:proxy [-- --seconds 4 --rounds 5 --concurrency 32 --stream-mib 1024 --log-level warn --nginx-rounds 10 --nginx-only --case upload]
// (--case runs only the nginx cases whose name contains it.)
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import {
  authorizeSandbox,
  cpuSecondsOf,
  freePort,
  gatewayToken,
  LOAD_GENERATOR,
  load,
  NODE_FLAGS,
  postgresSchema,
  rssOf,
  startEmulators,
  startGateway,
  startProcess,
  stop,
} from './lib.js';
import { findNginx, startNginx } from './nginx.js';

const NODE_FLOOR = new URL('./node-floor.js', import.meta.url).pathname;

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '32' },
    'stream-mib': { type: 'string', default: '1024' },
    'log-level': { type: 'string', default: 'warn' },
    'nginx-rounds': { type: 'string', default: '10' },
    'nginx-only': { type: 'boolean', default: false },
    case: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const STREAM_BYTES = Number(values['stream-mib']) * 1024 * 1024;

const emulators = await startEmulators();
const emulatorUrl = emulators.url;

/** An access token minted at the emulator, for the direct (gateway-less) baseline. */
async function directToken(emulator = 'notion', scopes = undefined) {
  const { emulators: list } = await (await fetch(`${emulatorUrl}/_emulator`)).json();
  const userId = list.find((e) => e.key === emulator).users[0].id;
  const res = await fetch(`${emulatorUrl}/_emulator/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ emulator, user_id: userId, scopes }),
  });
  return (await res.json()).access_token;
}

function fmt(r) {
  return `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.errors} errors)`;
}

const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A load run, with the CPU time each watched process spent per request during it (µs). */
async function measure(target, processes) {
  const before = await Promise.all(processes.map((p) => cpuSecondsOf(p.pid)));
  const result = await load(target);
  const after = await Promise.all(processes.map((p) => cpuSecondsOf(p.pid)));
  const cpuUs = after.map((a, i) => ((a - before[i]) / result.requests) * 1e6);
  return { ...result, cpuUs };
}

async function bench(label, env) {
  const gw = await startGateway({
    ...env,
    PORTICO_SANDBOX_URL: emulatorUrl,
    PORTICO_LOG_LEVEL: values['log-level'],
  });
  try {
    const token = await gatewayToken(gw.url, gw.creds);
    await authorizeSandbox(gw, token, 'notion', 'notion', 'bench-user');
    if (values['nginx-only']) {
      // The Drive connection streaming() would have made, for the download and upload cases.
      await authorizeSandbox(gw, token, 'google_drive', 'drive', 'bench-user');
      return { gw, token };
    }
    const direct = {
      url: `${emulatorUrl}/notion/v1/users/me`,
      headers: { authorization: `Bearer ${await directToken()}`, 'notion-version': '2022-06-28' },
      concurrency: CONCURRENCY,
      seconds: SECONDS,
    };
    const through = {
      url: `${gw.url}/proxy/v1/users/me`,
      headers: { authorization: `Bearer ${token}`, connection_name: 'notion', identifier: 'bench-user' },
      concurrency: CONCURRENCY,
      seconds: SECONDS,
    };
    await load({ ...direct, seconds: 2 });
    await load({ ...through, seconds: 2 });
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const d = await measure(direct, [emulators.child]);
      const g = await measure(through, [gw.child, emulators.child]);
      rounds.push({ d, g, ratio: g.rps / d.rps });
    }
    const ratio = median(rounds.map((r) => r.ratio));
    // The round whose ratio is the median stands for the run.
    const { d, g } = rounds.find((r) => r.ratio === ratio);
    // Added latency is measured one request at a time, where queueing does not hide it.
    const d1 = await load({ ...direct, concurrency: 1 });
    const g1 = await load({ ...through, concurrency: 1 });
    const us = (v) => `${v.toFixed(1)} µs`;
    console.log(
      `${label} — GET /v1/users/me, ${CONCURRENCY} connections, ${ROUNDS} rounds of ${SECONDS} s, load from ${LOAD_GENERATOR}, gateway log level ${values['log-level']}`,
    );
    console.log(
      `  direct   ${fmt(d)}   | 1 connection: p50 ${d1.p50.toFixed(3)} ms | CPU per request: emulator ${us(d.cpuUs[0])}`,
    );
    console.log(
      `  gateway  ${fmt(g)}   | 1 connection: p50 ${g1.p50.toFixed(3)} ms | CPU per request: gateway ${us(g.cpuUs[0])}, emulator ${us(g.cpuUs[1])}`,
    );
    console.log(
      `  ratio    throughput ${ratio.toFixed(2)} of direct (rounds: ${rounds.map((r) => r.ratio.toFixed(2)).join(' ')}; target ≥ 0.7); ` +
        `added p50 ${(g1.p50 - d1.p50).toFixed(3)} ms on one connection (target < 1 ms)`,
    );
    return { gw, token };
  } catch (error) {
    await stop(gw.child);
    throw error;
  }
}

async function streaming(gw, token) {
  await authorizeSandbox(gw, token, 'google_drive', 'drive', 'bench-user');
  const pid = gw.child.pid;
  const before = await rssOf(pid);
  let peak = before;
  const sampler = setInterval(
    () =>
      rssOf(pid).then(
        (r) => (peak = Math.max(peak, r)),
        () => {},
      ),
    50,
  );
  const chunk = randomBytes(1024 * 1024);
  const sentHash = createHash('sha256');
  let sent = 0;
  const source = Readable.from(
    (function* () {
      while (sent < STREAM_BYTES) {
        const piece = chunk.subarray(0, Math.min(chunk.length, STREAM_BYTES - sent));
        sent += piece.length;
        sentHash.update(piece);
        yield piece;
      }
    })(),
  );
  const headers = { authorization: `Bearer ${token}`, connection_name: 'drive', identifier: 'bench-user' };
  const t0 = Date.now();
  const uploaded = await new Promise((resolve, reject) => {
    const req = http.request(
      `${gw.url}/proxy/upload/drive/v3/files?uploadType=media&name=bench.bin`,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': STREAM_BYTES },
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve(JSON.parse(body)));
      },
    );
    req.on('error', reject);
    source.pipe(req);
  });
  const upMs = Date.now() - t0;
  const t1 = Date.now();
  const res = await fetch(`${gw.url}/proxy/drive/v3/files/${uploaded.id}?alt=media`, { headers });
  const got = createHash('sha256');
  for await (const piece of res.body) got.update(piece);
  const downMs = Date.now() - t1;
  clearInterval(sampler);
  const same = got.digest('hex') === sentHash.digest('hex');
  const mib = (b) => (b / 1024 / 1024).toFixed(0);
  console.log(
    `streaming ${mib(STREAM_BYTES)} MiB: upload ${(STREAM_BYTES / 1024 / 1024 / (upMs / 1000)).toFixed(0)} MiB/s, download ${(STREAM_BYTES / 1024 / 1024 / (downMs / 1000)).toFixed(0)} MiB/s, ` +
      `bytes ${same ? 'identical' : 'DIFFERENT'}; gateway RSS ${mib(before)} MiB before, peak ${mib(peak)} MiB (growth ${mib(peak - before)} MiB, target < 64)`,
  );
}

/** Creates a Drive file with `bytes` of content through `base` (gateway proxy or nginx); its id. */
async function driveFile(base, headers, bytes) {
  const res = await fetch(`${base}/upload/drive/v3/files?uploadType=media&name=nginx-bench.bin`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    body: randomBytes(bytes),
  });
  if (!res.ok) throw new Error(`creating a Drive file failed: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

async function versusNginx(gw, token) {
  const found = findNginx();
  if (found.missing) {
    console.log(found.missing);
    return;
  }
  const DRIVE_SCOPES = ['https://www.googleapis.com/auth/drive'];
  const locations = {
    '/notion/': await directToken('notion'),
    '/google/': await directToken('google', DRIVE_SCOPES),
  };
  const nginx = await startNginx(found.bin, emulatorUrl, locations);
  const floorPort = await freePort();
  const floorUrl = `http://127.0.0.1:${floorPort}`;
  const floor = await startProcess(
    NODE_FLOOR,
    [String(floorPort), emulatorUrl, JSON.stringify(locations)],
    {},
    `${floorUrl}/_ready`,
    [...NODE_FLAGS],
  );
  try {
    const notion = { authorization: `Bearer ${token}`, connection_name: 'notion', identifier: 'bench-user' };
    const drive = { authorization: `Bearer ${token}`, connection_name: 'drive', identifier: 'bench-user' };
    const viaGateway = `${gw.url}/proxy`;
    const viaNginx = `${nginx.url}/google`;
    const viaFloor = `${floorUrl}/google`;
    const download = 256 * 1024;
    const upload = randomBytes(1024 * 1024);
    const SEARCH = JSON.stringify({ query: '', page_size: 1 });
    const cases = [
      {
        name: 'small GET',
        target: { max: 1.5 },
        gateway: { url: `${viaGateway}/v1/users/me`, headers: notion },
        nginx: { url: `${nginx.url}/notion/v1/users/me`, headers: { 'notion-version': '2022-06-28' } },
        floor: { url: `${floorUrl}/notion/v1/users/me`, headers: { 'notion-version': '2022-06-28' } },
      },
      {
        // No target of its own, but the call agents make most: a small JSON body, held for a replay.
        name: 'small JSON POST',
        gateway: {
          url: `${viaGateway}/v1/search`,
          headers: { ...notion, 'content-type': 'application/json' },
          method: 'POST',
          body: SEARCH,
        },
        nginx: {
          url: `${nginx.url}/notion/v1/search`,
          headers: { 'notion-version': '2022-06-28', 'content-type': 'application/json' },
          method: 'POST',
          body: SEARCH,
        },
        floor: {
          url: `${floorUrl}/notion/v1/search`,
          headers: { 'notion-version': '2022-06-28', 'content-type': 'application/json' },
          method: 'POST',
          body: SEARCH,
        },
      },
      {
        name: '256 KiB download',
        target: { max: 1.5 },
        gateway: {
          url: `${viaGateway}/drive/v3/files/${await driveFile(viaGateway, drive, download)}?alt=media`,
          headers: drive,
        },
        nginx: { url: `${viaNginx}/drive/v3/files/${await driveFile(viaNginx, {}, download)}?alt=media` },
        floor: { url: `${viaFloor}/drive/v3/files/${await driveFile(viaFloor, {}, download)}?alt=media` },
      },
      {
        name: '1 MiB upload',
        target: { max: 2 },
        gateway: {
          url: `${viaGateway}/upload/drive/v3/files/${await driveFile(viaGateway, drive, 16)}?uploadType=media`,
          headers: { ...drive, 'content-type': 'application/octet-stream' },
          method: 'PATCH',
          body: upload,
        },
        nginx: {
          url: `${viaNginx}/upload/drive/v3/files/${await driveFile(viaNginx, {}, 16)}?uploadType=media`,
          headers: { 'content-type': 'application/octet-stream' },
          method: 'PATCH',
          body: upload,
        },
        floor: {
          url: `${viaFloor}/upload/drive/v3/files/${await driveFile(viaFloor, {}, 16)}?uploadType=media`,
          headers: { 'content-type': 'application/octet-stream' },
          method: 'PATCH',
          body: upload,
        },
      },
    ];
    const rounds = Number(values['nginx-rounds']);
    console.log(
      `versus nginx (${found.bin}, 1 worker, upstream keep-alive) — ${CONCURRENCY} connections, ${rounds} rounds of ${SECONDS} s each, CPU µs per request (nginx: master + worker)`,
    );
    for (const c of cases) {
      if (values.case && !c.name.includes(values.case)) continue;
      const opts = { concurrency: CONCURRENCY, seconds: SECONDS };
      await load({ ...c.gateway, ...opts, seconds: 1 });
      await load({ ...c.nginx, ...opts, seconds: 1 });
      await load({ ...c.floor, ...opts, seconds: 1 });
      const g = [];
      const n = [];
      const f = [];
      const errors = { gateway: 0, nginx: 0, floor: 0 };
      for (let i = 0; i < rounds; i++) {
        const gr = await measure({ ...c.gateway, ...opts }, [gw.child]);
        const nginxPids = (await nginx.pids()).map((pid) => ({ pid }));
        const nr = await measure({ ...c.nginx, ...opts }, nginxPids);
        const fr = await measure({ ...c.floor, ...opts }, [floor.child]);
        g.push(gr.cpuUs[0]);
        n.push(nr.cpuUs.reduce((a, b) => a + b, 0));
        f.push(fr.cpuUs[0]);
        errors.gateway += gr.errors;
        errors.nginx += nr.errors;
        errors.floor += fr.errors;
      }
      const ratio = median(g) / median(n);
      const drift = g[g.length - 1] / g[0];
      // The same, each round divided by the floor's round beside it: the floor keeps no state, so
      // what a slow moment of the machine adds to both cancels, and what the gateway's age adds stays.
      const relative = g[g.length - 1] / f[f.length - 1] / (g[0] / f[0]);
      console.log(
        `  ${c.name.padEnd(17)} gateway ${median(g).toFixed(1).padStart(7)} µs  nginx ${median(n).toFixed(1).padStart(7)} µs  ` +
          `ratio ${ratio.toFixed(2)}${c.target ? ` (target ≤ ${c.target.max})` : ''}  gateway last/first round ${drift.toFixed(2)}, ${relative.toFixed(2)} against the floor (target ≤ 1.10)` +
          Object.entries(errors)
            .filter(([, n]) => n)
            .map(([who, n]) => `  ${n} ERRORS (${who})`)
            .join(''),
      );
      console.log(
        `    Node floor ${median(f).toFixed(1).padStart(7)} µs: gateway ÷ floor ${(median(g) / median(f)).toFixed(2)} (Portico's own code), floor ÷ nginx ${(median(f) / median(n)).toFixed(2)} (Node's HTTP server and undici)`,
      );
      console.log(
        `    gateway rounds: ${g.map((v) => v.toFixed(0)).join(' ')} | nginx rounds: ${n.map((v) => v.toFixed(0)).join(' ')} | floor rounds: ${f.map((v) => v.toFixed(0)).join(' ')}`,
      );
    }
  } finally {
    await nginx.stop();
    await stop(floor.child);
  }
}

try {
  const dir = await mkdtemp(path.join(tmpdir(), 'portico-bench-'));
  const embedded = await bench('embedded store', { PORTICO_DATA_DIR: dir });
  if (!values['nginx-only']) await streaming(embedded.gw, embedded.token);
  await versusNginx(embedded.gw, embedded.token);
  await stop(embedded.gw.child);
  await rm(dir, { recursive: true, force: true });
  const pgSchema = values['nginx-only'] ? { skipped: '--nginx-only' } : await postgresSchema();
  if (pgSchema.skipped) console.log(`postgres skipped: ${pgSchema.skipped}`);
  else {
    try {
      const onPg = await bench('PostgreSQL', pgSchema.env);
      await stop(onPg.gw.child);
    } finally {
      await pgSchema.drop();
    }
  }
} finally {
  await stop(emulators.child);
}
