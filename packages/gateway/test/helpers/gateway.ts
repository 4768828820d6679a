import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { loggerOptions } from '../../src/logging/logger.js';
import { generateMasterKey } from '../../src/secrets/keyring.js';
import type { Database } from '../../src/store/db.js';
import type { Backend } from './backends.js';
import { gatewayToken } from './token.js';

/**
 * What a request would run if it went to the store: reads of accounts, gateway clients or
 * connections, or a transaction (a refresh). Background jobs (batched execution and last-use
 * writes, the webhook worker) run other statements at any time.
 */
export const REQUEST_PATH_READS =
  /^\s*SELECT[\s\S]*\b(connected_accounts|gateway_clients|connections)\b|^TRANSACTION$/;

export interface TestGateway {
  gateway: Gateway;
  url: string;
  db: Database;
  /**
   * Number of SQL statements (and transactions) run so far through the store, or of those whose
   * text matches `pattern` (to prove a path reads nothing while background jobs write meanwhile).
   */
  queries(pattern?: RegExp): number;
  /** Every log line written so far (JSON objects). */
  logs: Record<string, unknown>[];
  /** Raw log text, to search for leaked secrets. */
  logText(): string;
  clientId: string;
  clientSecret: string;
  token(): Promise<string>;
  api(path: string, init?: RequestInit & { json?: unknown; token?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * A real gateway on a loopback port, on the given backend, with logs captured; unless
 * `awaitSandbox` is false, its embedded emulators have started.
 */
export async function startTestGateway(
  backend: Backend,
  env: Record<string, string> = {},
  options: {
    awaitSandbox?: boolean;
    /** A store that is not fresh has no bootstrap client: the client made on it before. */
    client?: { client_id: string; client_secret: string };
  } = {},
): Promise<TestGateway> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  const port = await freePort();
  const config = loadConfig({
    PORTICO_PORT: String(port),
    // Browsers and emulators reach the gateway here, so links and redirect URIs must name the real port.
    PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
    PORTICO_HOST: '127.0.0.1',
    PORTICO_MASTER_KEY: generateMasterKey(),
    PORTICO_LOG_LEVEL: 'info',
    PORTICO_DATA_DIR: '/nonexistent-portico-test-dir',
    // The governor holds each account to its provider's documented rate (Notion's three calls a
    // second): a file of Notion tool calls spent most of its minute waiting for turns. The suites
    // of the governor itself turn it on (PORTICO_RATE_GOVERNOR: 'true'); the default is config's.
    PORTICO_RATE_GOVERNOR: 'false',
    // The compiled tools (over a thousand) are off unless a suite asks for them
    // (PORTICO_COMPILED_TOOLS: 'true'): the suites that count or list the specification's tools
    // read those 45; the default is config's.
    PORTICO_COMPILED_TOOLS: 'false',
    // "{port}" in a value is the port the gateway will listen on.
    ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replaceAll('{port}', String(port))])),
  });
  const inner = await backend.open();
  const statements: string[] = [];
  const db: Database = {
    ...inner,
    kind: inner.kind,
    query: (sql, params) => {
      statements.push(sql);
      return inner.query(sql, params);
    },
    transaction: (fn) => {
      statements.push('TRANSACTION');
      return inner.transaction(fn);
    },
    ping: () => inner.ping(),
    close: () => inner.close(),
    listen: (c, h) => inner.listen(c, h),
    notify: (c, p, tx) => inner.notify(c, p, tx),
  };
  const gateway = await createGateway(config, { db, logger: pino(loggerOptions('info'), sink) });
  const address = await gateway.listen();
  // Tests reach into the emulators (sandbox.control), which start at their first use.
  if (options.awaitSandbox !== false) await gateway.sandbox.ready?.();
  const client = options.client ?? gateway.bootstrapClient;
  if (!client) throw new Error('a fresh store must bootstrap a client');
  let cached: string | undefined;
  const api: TestGateway['api'] = async (path, init = {}) => {
    const { json, token, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) {
      headers.set('content-type', 'application/json');
      rest.body = JSON.stringify(json);
    }
    if (token !== null) {
      cached ??= await fetchToken();
      headers.set('authorization', `Bearer ${token ?? cached}`);
    }
    return fetch(`${address}${path}`, { ...rest, headers });
  };
  const fetchToken = () => gatewayToken(address, client.client_id, client.client_secret);
  return {
    gateway,
    url: address,
    db,
    queries: (pattern) =>
      pattern ? statements.filter((sql) => pattern.test(sql)).length : statements.length,
    get logs() {
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    logText: () => lines.join('\n'),
    clientId: client.client_id,
    clientSecret: client.client_secret,
    token: fetchToken,
    api,
    close: () => gateway.close(),
  };
}

/** A port that was free a moment ago (the gateway must know its public URL before listening). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
