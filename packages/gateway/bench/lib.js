// Shared pieces of the benchmarks: processes, a keep-alive load generator, PostgreSQL schemas.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { submitConsent } from '@portico/emulators';
import pg from 'pg';
import { NODE_FLAGS } from '../dist/node-flags.js';

export { NODE_FLAGS };

export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
export const EMULATORS_BIN = fileURLToPath(new URL('../../emulators/dist/bin.js', import.meta.url));
export const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a process and waits until `readyUrl` answers 200; returns the child, its output and the time it took. */
export async function startProcess(script, args, env, readyUrl, nodeArgs = []) {
  const began = process.hrtime.bigint();
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { PATH: process.env.PATH, ...env },
  });
  let out = '';
  // The start-up output is what is read (credentials, errors); a gateway logging every request
  // would otherwise fill this process's memory.
  const keep = (d) => {
    if (out.length < 1024 * 1024) out += d;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  for (;;) {
    try {
      const res = await fetch(readyUrl);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {}
    if (child.exitCode !== null) throw new Error(`${script} exited: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, output: () => out, ms: Number(process.hrtime.bigint() - began) / 1e6 };
}

/** Starts the sandbox emulators in their own process on a free port; `url` is their origin. */
export async function startEmulators() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = await startProcess(EMULATORS_BIN, ['--port', String(port)], {}, `${url}/_emulator`);
  return { ...started, url };
}

/**
 * Starts `portico start` on a free port, as the README runs it (young generation sized); resolves
 * once /readyz answers. BENCH_GATEWAY_NODE_ARGS replaces the node options (e.g. "--cpu-prof
 * --cpu-prof-dir=prof" to profile it, or "" for Node's defaults).
 */
export async function startGateway(env) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = await startProcess(
    CLI,
    ['start'],
    {
      PORTICO_HOST: '127.0.0.1',
      PORTICO_PORT: String(port),
      PORTICO_PUBLIC_URL: url,
      PORTICO_LOG_LEVEL: 'warn',
      // The benchmarks measure the gateway's own cost: the governor would hold the load to the
      // sandbox providers' documented rates (Notion's three a second per account).
      PORTICO_RATE_GOVERNOR: 'false',
      ...env,
    },
    `${url}/readyz`,
    (process.env.BENCH_GATEWAY_NODE_ARGS ?? NODE_FLAGS.join(' ')).split(' ').filter(Boolean),
  );
  const creds = /client_id:\s+(\S+)\n\s+client_secret:\s+(\S+)/.exec(started.output());
  return { ...started, url, creds: creds && { id: creds[1], secret: creds[2] } };
}

export async function gatewayToken(url, creds) {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: creds.id,
      client_secret: creds.secret,
    }),
  });
  return (await res.json()).access_token;
}

/** Creates a sandbox connection on a running gateway and authorizes one end user on it. */
export async function authorizeSandbox(gw, token, provider, connection, identifier) {
  const api = (p, body) =>
    fetch(`${gw.url}${p}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  await api('/api/v1/connections', { name: connection, provider, sandbox: true });
  const { link } = await api('/api/v1/connected-accounts/authorization-link', {
    connection_name: connection,
    identifier,
  });
  const start = await openLink(link);
  const callback = await submitConsent(start.headers.get('location'), { decision: 'allow' });
  const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
  if (done.status !== 200) throw new Error(`authorization failed: ${done.status}`);
}

/**
 * Opens a link as its person does: GET shows the landing page (spending nothing), its Continue
 * button POSTs back, and that answer redirects to the provider with the binding cookie.
 */
export async function openLink(link) {
  const landing = await fetch(link, { redirect: 'manual' });
  if (landing.status !== 200) return landing;
  const action = /<form method="post" action="([^"]+)"/.exec(await landing.text())?.[1];
  if (!action) throw new Error('the link has no landing form');
  return fetch(new URL(action, link), { method: 'POST', redirect: 'manual' });
}

/** The cookie /connect/{token} set, sent back at the callback as the browser that opened the link would. */
export function browserCookie(start) {
  return start.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

export async function stop(child) {
  // A process killed by a signal has no exit code, only its signal.
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  // A gateway finishing a long statement (a background job on a big table) could hold the bench
  // for as long: 30 s, as an orchestrator's grace period would allow, then SIGKILL.
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await new Promise((r) => child.on('exit', r));
  clearTimeout(killer);
}

/**
 * The load generator: wrk (Debian package `wrk`) when it is installed, because a C generator
 * leaves the machine's cores to the processes under test; otherwise the built-in Node one.
 * BENCH_LOAD=node|wrk chooses.
 */
export const LOAD_GENERATOR =
  process.env.BENCH_LOAD ?? (spawnSync('wrk', ['--version']).error ? 'node' : 'wrk');

/**
 * Keep-alive load for `seconds` with `concurrency` connections; latencies in ms. `method` and
 * `body` (a Buffer) send the same request body every time.
 */
export async function load(options) {
  if (LOAD_GENERATOR !== 'wrk') return nodeLoad(options);
  if (!options.body && !options.method) return wrkLoad(options);
  // wrk takes a request body from a Lua script; the body itself goes in a file the script reads.
  const dir = await mkdtemp(path.join(tmpdir(), 'portico-bench-wrk-'));
  try {
    const script = path.join(dir, 'request.lua');
    let lua = `wrk.method = "${options.method ?? 'POST'}"\n`;
    if (options.body) {
      await writeFile(path.join(dir, 'body'), options.body);
      lua += `local f = io.open("${path.join(dir, 'body')}", "rb")\nwrk.body = f:read("*all")\nf:close()\n`;
    }
    await writeFile(script, lua);
    return await wrkLoad({ ...options, script });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function wrkLoad({ url, headers = {}, seconds, concurrency, script }) {
  const args = ['-t1', `-c${concurrency}`, `-d${seconds}s`, '--latency'];
  if (script) args.push('-s', script);
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  return new Promise((resolve, reject) =>
    execFile('wrk', [...args, url], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      if (error) return reject(error);
      const ms = (label) => {
        const [, value, unit] = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(stdout) ?? [];
        return value === undefined ? NaN : Number(value) * { us: 1e-3, ms: 1, s: 1e3 }[unit];
      };
      const count = (re) => Number(re.exec(stdout)?.[1] ?? 0);
      const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
        stdout,
      );
      resolve({
        requests: count(/(\d+) requests in/),
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN),
        p50: ms('50%'),
        p99: ms('99%'),
        errors:
          count(/Non-2xx or 3xx responses: (\d+)/) +
          (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
      });
    }),
  );
}

async function nodeLoad({ url, headers = {}, seconds, concurrency, method = 'GET', body }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const latencies = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  const one = () =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      const req = http.request(target, { agent, headers, method }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode < 200 || res.statusCode >= 400) errors++;
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) await one();
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    rps: latencies.length / ((Date.now() - started) / 1000),
    p50: pct(50),
    p99: pct(99),
    errors,
  };
}

/** A throw-away PostgreSQL schema, or undefined when the database is unreachable. */
export async function postgresSchema() {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
  } catch (error) {
    return { skipped: error.message };
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  await client.query(`CREATE SCHEMA ${schema}`);
  return {
    env: {
      DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      PORTICO_MASTER_KEY: randomBytes(32).toString('base64'),
    },
    async drop() {
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** CPU time (user + system) a process has used so far, in seconds (Linux; 100 clock ticks a second). */
export async function cpuSecondsOf(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Runs `bench(label, env)` on a fresh embedded store, then on a throw-away PostgreSQL schema. */
export async function onBothStores(bench) {
  // BENCH_STORES=embedded (or postgres) runs one, to profile or compare a change quickly.
  const only = process.env.BENCH_STORES?.split(',');
  if (!only || only.includes('embedded')) {
    const dir = await mkdtemp(path.join(tmpdir(), 'portico-bench-'));
    try {
      await bench('embedded', { PORTICO_DATA_DIR: dir });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  if (only && !only.includes('postgres')) return;
  const pgSchema = await postgresSchema();
  if (pgSchema.skipped) console.log(`postgres   skipped: ${pgSchema.skipped}`);
  else {
    try {
      await bench('postgres', pgSchema.env);
    } finally {
      await pgSchema.drop();
    }
  }
}

/** Current resident memory of a process in bytes (Linux). */
export async function rssOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}
