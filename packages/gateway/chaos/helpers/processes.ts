import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { WebSocket } from 'undici';
import { NODE_FLAGS } from '../../src/node-flags.js';
import { generateMasterKey } from '../../src/secrets/keyring.js';
import { POSTGRES_URL, uniqueSchema } from '../../test/helpers/backends.js';
import { freePort } from '../../test/helpers/gateway.js';
import { CLI } from '../../test/helpers/process.js';
import { RemoteGateway } from '../../test/helpers/remote.js';

export type StoreKind = 'pglite' | 'postgres';

/** How the gateway process itself is run. */
export interface ProcessOptions {
  /** Descriptors the process may hold (`ulimit -n`, soft and hard). */
  openFiles?: number;
  /** Open the inspector on a loopback port, so that collectGarbage() can reach the heap. */
  inspect?: boolean;
}

/** The environment of a gateway on a fresh store: a new data directory, or a new PostgreSQL schema. */
export async function freshStore(
  kind: StoreKind,
  databaseUrl = POSTGRES_URL,
): Promise<{ env: Record<string, string>; schema?: string }> {
  const masterKey = generateMasterKey();
  if (kind === 'pglite') {
    return {
      env: {
        PORTICO_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'portico-chaos-')),
        PORTICO_MASTER_KEY: masterKey,
      },
    };
  }
  const schema = uniqueSchema();
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return { env: postgresEnv(databaseUrl, schema, masterKey), schema };
}

export function postgresEnv(databaseUrl: string, schema: string, masterKey: string): Record<string, string> {
  return {
    DATABASE_URL: `${databaseUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    PORTICO_MASTER_KEY: masterKey,
    // A throwaway directory all the same: nothing may be written into the working tree.
    PORTICO_DATA_DIR: path.join(tmpdir(), `portico-chaos-${schema}`),
  };
}

/**
 * A `portico start` process on a fixed port (so its public URL, and the redirect URIs registered at
 * the emulators, survive restarts) that can be killed with SIGKILL and started again on the same store.
 */
export class GatewayProcess {
  private running?: { child: ChildProcess; output(): string; exited: Promise<number | null> };
  remote!: RemoteGateway;
  /** Milliseconds each start took, to the "ready" log line. */
  readonly startTimes: number[] = [];

  private constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
    private readonly options: ProcessOptions,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.running?.child.pid;
  }

  /** Output of the current process so far. */
  output(): string {
    return this.running?.output() ?? '';
  }

  /**
   * Starts a gateway. With `credentialsFrom` the API is driven with that gateway's client (a replica
   * of the same store); otherwise the store is new and this process prints its first client.
   */
  static async launch(
    env: Record<string, string>,
    credentialsFrom?: GatewayProcess,
    publicUrl?: string,
    options: ProcessOptions = {},
  ): Promise<GatewayProcess> {
    const port = await freePort();
    const gateway = new GatewayProcess(
      port,
      {
        PORTICO_LOG_LEVEL: 'warn',
        ...env,
        PORTICO_PORT: String(port),
        PORTICO_PUBLIC_URL: publicUrl ?? `http://127.0.0.1:${port}`,
      },
      options,
    );
    await gateway.start();
    for (let i = 0; !credentialsFrom && !gateway.output().includes('client_secret:') && i < 100; i++)
      await sleep(20);
    gateway.remote = credentialsFrom
      ? credentialsFrom.remote.withUrl(gateway.url)
      : RemoteGateway.fromStdout(gateway.url, gateway.output());
    return gateway;
  }

  async start(): Promise<void> {
    const began = Date.now();
    const { openFiles, inspect } = this.options;
    const argv = [
      process.execPath,
      ...NODE_FLAGS,
      ...(inspect ? ['--inspect=127.0.0.1:0'] : []),
      CLI,
      'start',
    ];
    // Through a shell that lowers the limit and then becomes node (exec): the pid stays the gateway's.
    const [command, ...args] =
      openFiles === undefined
        ? argv
        : ['/bin/sh', '-c', `ulimit -n ${openFiles} && exec "$@"`, 'sh', ...argv];
    const child = spawn(command!, args, {
      env: { PATH: process.env.PATH ?? '', PORTICO_HOST: '127.0.0.1', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    this.running = { child, output: () => out, exited };
    let gone = false;
    void exited.then(() => (gone = true));
    // Ready when /readyz says so (whatever the log level, which decides what it prints).
    while (
      !(await fetch(`${this.url}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (gone) throw new Error(`gateway exited during start:\n${out}`);
      if (Date.now() - began > 60_000) throw new Error(`gateway did not start:\n${out}`);
      await sleep(50);
    }
    this.startTimes.push(Date.now() - began);
  }

  /**
   * A full, memory-reducing garbage collection in the gateway (the inspector's, as a heap snapshot
   * takes one), for memory figures that count what is still referenced rather than what V8 has not
   * got round to collecting. Needs `inspect`.
   */
  async collectGarbage(): Promise<void> {
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(this.output())?.[1];
    if (!url) throw new Error('the gateway was not started with inspect');
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('error', reject, { once: true });
    });
    await new Promise<void>((resolve) => {
      socket.addEventListener('message', () => resolve(), { once: true });
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
    socket.close();
  }

  /** SIGKILL: no shutdown hook runs, sockets are closed by the kernel mid-write. */
  async kill9(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    running.child.kill('SIGKILL');
    await running.exited;
  }

  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    running.child.kill('SIGTERM');
    await running.exited;
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Percentile of a list of numbers (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Prints a titled table of figures so a run's numbers can be quoted. */
export function printFigures(title: string, rows: Array<Record<string, string | number>>): void {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const width = (c: string) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length));
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const text = [
    `\n[chaos] ${title}`,
    line(columns.map((c) => c.padEnd(width(c)))),
    line(columns.map((c) => '-'.repeat(width(c)))),
    ...rows.map((r) => line(columns.map((c) => String(r[c] ?? '').padEnd(width(c))))),
  ].join('\n');
  console.log(text);
}
