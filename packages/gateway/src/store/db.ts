import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import {
  addHandler,
  DEFAULT_HEARTBEAT,
  destroySocket,
  type Handlers,
  type HeartbeatOptions,
  KEEPALIVE_IDLE_MS,
  NotificationListener,
} from './pg-listener.js';
import { preparedStatements } from './pglite-prepared.js';
import { quoteIdent } from './quote.js';
import { isEmptyDir, readStoreTemplate } from './template.js';

export { PLAN_ONCE } from './pglite-prepared.js';
export { quoteIdent };

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /**
   * Statements without parameters sent in one exchange, `blob` readable by a COPY among them as
   * '/dev/blob'; the rows of each. Offered by the embedded store's transactions, where each
   * exchange costs PGlite's WebAssembly about 200 µs whatever it holds (one with parameters about
   * twice that), and COPY's text format parses in about two thirds of the CPU of the same rows
   * as JSON.
   */
  script?<R = Record<string, unknown>>(sql: string, blob?: string): Promise<R[][]>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /**
   * Calls `handler` for every NOTIFY on `channel`, from any process on this database. The embedded
   * store is single-process, so there its notifications are delivered in-process.
   */
  listen(channel: string, handler: (payload: string) => void): Promise<void>;
  /** NOTIFY `channel` (after commit, when `tx` is given). */
  notify(channel: string, payload: string, tx?: Queryable): Promise<void>;
  /**
   * Calls `handler` whenever notifications may have been missed: the listening connection was lost
   * and is back. Caches that NOTIFY keeps fresh must forget everything then.
   */
  onNotificationsMissed(handler: () => void): void;
  /**
   * False while notifications may be going unheard: the listening connection is down, reconnecting,
   * or has not proved itself within its heartbeat deadline. Caches kept fresh by NOTIFY read through
   * to the database meanwhile.
   */
  listening(): boolean;
  /**
   * Statements sent to the database so far, through this store (a transaction's BEGIN and COMMIT
   * or ROLLBACK included; the notification listener's own connection not): /metrics counts them.
   */
  statements(): number;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; without one the embedded PGlite store in `dataDir` is used. */
  url?: string | undefined;
  /**
   * A direct postgres:// URL for the notification listener (LISTEN holds a session, which a pooler
   * in transaction mode does not keep); `url` when unset.
   */
  listenUrl?: string | undefined;
  /** Directory of the embedded store, or `memory://` for a throw-away one. */
  dataDir?: string;
  /** PostgreSQL schema to work in (tests isolate themselves this way). Created if missing. */
  schema?: string;
  poolSize?: number;
  /** How the PostgreSQL notification listener proves its connection alive (DEFAULT_HEARTBEAT). */
  heartbeat?: HeartbeatOptions | undefined;
  /** Where the listener reports losing and regaining its connection. */
  logger?: Logger | undefined;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) return openPostgres(options.url, options);
  return openPglite(options.dataDir ?? 'memory://', options.schema);
}

/**
 * Each backend loads its own driver when it opens: the one a gateway does not use is never read
 * (imported alone, pg takes about 50 ms and PGlite's JavaScript about 30 ms).
 */
type PGliteClass = typeof PGlite;
const loadPgliteModule = () => import('@electric-sql/pglite');
const loadPglite = async (): Promise<PGliteClass> => (await loadPgliteModule()).PGlite;
const loadPg = async (): Promise<typeof pg> => (await import('pg')).default;

/**
 * PGlite's PostgreSQL defaults are sized for a server: `shared_buffers` of 128 MB made the embedded
 * gateway's resident memory 330 MB after a restart. The gateway's working set is small (a few
 * thousand rows per table is typical), and 16 MB measured no slower on tool calls and the API.
 */
const EMBEDDED_SETTINGS = [
  'shared_buffers=16MB',
  // Statements are prepared once (pglite-prepared.ts). The lists' optional filters ("$2 IS NULL OR
  // …") plan well only with their values: a generic plan kept every branch, and a page of 20
  // accounts cost 2.4 ms instead of 1.5. Parsing is still saved; planning stays per call.
  'plan_cache_mode=force_custom_plan',
];

/**
 * Run first in an embedded transaction that inserts many rows (the execution records): a foreign
 * key is checked by a query of its own for every row, and under force_custom_plan (above) each
 * check was planned again, reading the size of the referenced table and of each of its indexes
 * from the file system. Within the transaction the checks keep one plan: an execution record cost
 * a fifth less CPU. Nothing else changes; on PostgreSQL the mode is the default already.
 */
export const ROW_CHECKS_PLANNED_ONCE = 'SET LOCAL plan_cache_mode = auto';

/**
 * Compiles PGlite's WebAssembly (9 MB of PostgreSQL) with V8's baseline compiler only. The
 * optimising tier added about 25 MB of machine code and most of a second of start-up CPU, and
 * measured no faster on the gateway's short statements. The flag is process-wide, so it is set for
 * the compilation alone: WebAssembly compiled later (undici's HTTP parser) keeps both tiers.
 */
async function withBaselineWasm<T>(compile: () => Promise<T>): Promise<T> {
  setFlagsFromString('--liftoff-only');
  try {
    return await compile();
  } finally {
    setFlagsFromString('--no-liftoff-only');
  }
}

async function openPglite(dataDir: string, schema?: string): Promise<Database> {
  const PGlite = await loadPglite();
  const db = await withBaselineWasm(async () => {
    if (!dataDir.startsWith('memory://') && !existsSync(path.join(dataDir, 'PG_VERSION'))) {
      if (!(await unpackTemplate(PGlite, dataDir))) await initialiseStore(PGlite, dataDir);
    }
    return PGlite.create(dataDir, { postgresqlconf: EMBEDDED_SETTINGS });
  });
  if (schema) {
    await db.exec(
      `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}; SET search_path TO ${quoteIdent(schema)}`,
    );
  }
  let closed = false;
  let statements = 0;
  const handlers: Handlers = new Map();
  const prepared = preparedStatements(db, await loadPgliteModule());
  return {
    kind: 'pglite',
    statements: () => statements,
    async listen(channel, handler) {
      addHandler(handlers, channel, handler);
    },
    // In-process delivery cannot be missed.
    onNotificationsMissed() {},
    listening: () => true,
    async notify(channel, payload) {
      // Deferred like a real NOTIFY, so listeners never run inside the notifier's call stack.
      queueMicrotask(() => {
        for (const handler of handlers.get(channel) ?? []) handler(payload);
      });
    },
    async query<R>(sql: string, params?: unknown[]) {
      statements++;
      return prepared.query<R>(sql, params);
    },
    transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      // PGlite sends BEGIN and COMMIT (or ROLLBACK) itself.
      statements += 2;
      return db.transaction(async (tx) =>
        fn({
          async query<R>(sql: string, params?: unknown[]) {
            statements++;
            return (await tx.query<R>(sql, params)).rows;
          },
          async script<R>(sql: string, blob?: string) {
            statements++;
            const results = await tx.exec(sql, blob === undefined ? {} : { blob: new Blob([blob]) });
            return results.map((result) => result.rows as R[]);
          },
        }),
      );
    },
    async ping() {
      if (closed || db.closed) throw new Error('embedded database is closed');
      statements++;
      await db.query('SELECT 1');
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const { Client, Pool } = await loadPg();
  const schema = options.schema;
  if (schema) {
    const admin = new Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    } finally {
      await admin.end();
    }
  }
  const connection = { connectionString: url, ...(schema ? { options: `-c search_path=${schema}` } : {}) };
  const listenConnection = options.listenUrl
    ? { ...connection, connectionString: options.listenUrl }
    : connection;
  const pool = new Pool({
    ...connection,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // When each pooled connection was opened, so the ones that shared a dead listener's path can go.
  const openedAt = new Map<pg.PoolClient, number>();
  pool.on('connect', (client) => openedAt.set(client, Date.now()));
  pool.on('remove', (client) => openedAt.delete(client));
  const listener = new NotificationListener({
    Client,
    config: listenConnection,
    heartbeat: options.heartbeat ?? DEFAULT_HEARTBEAT,
    logger: options.logger,
    // A pooled connection on a dead path would hang its next statement forever (pg has no read
    // timeout): idle or busy, it is closed now, which fails a waiting statement with a 503.
    onSilent(since) {
      let dropped = 0;
      for (const [client, at] of openedAt) {
        if (at > since) continue;
        openedAt.delete(client);
        destroySocket(client);
        dropped++;
      }
      if (dropped)
        options.logger?.warn(
          { connections: dropped },
          'closed pooled connections opened before the listener fell silent',
        );
    },
  });
  let statements = 0;
  return {
    kind: 'postgres',
    statements: () => statements,
    listen: (channel, handler) => listener.listen(channel, handler),
    onNotificationsMissed: (handler) => listener.onNotificationsMissed(handler),
    listening: () => listener.healthy(),
    async notify(channel, payload, tx) {
      if (tx) await tx.query('SELECT pg_notify($1, $2)', [channel, payload]);
      else {
        statements++;
        await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
      }
    },
    async query<R>(sql: string, params?: unknown[]) {
      statements++;
      try {
        const result = await pool.query(sql, params as unknown[]);
        listener.retryNow();
        return result.rows as R[];
      } catch (error) {
        throw unavailableOr(error);
      }
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect().catch((error: unknown) => {
        throw unavailableOr(error);
      });
      // Checked out, a client has no error listener of the pool's: a connection that dies meanwhile
      // (a cut, or closed by onSilent) would throw its 'error' event and end the process. The waiting
      // statement fails all the same, and release() drops the connection.
      const ignore = () => {};
      client.on('error', ignore);
      try {
        statements++;
        await client.query('BEGIN');
        const value = await fn({
          async query<R>(sql: string, params?: unknown[]) {
            statements++;
            return (await client.query(sql, params as unknown[])).rows as R[];
          },
        });
        statements++;
        await client.query('COMMIT');
        return value;
      } catch (error) {
        statements++;
        await client.query('ROLLBACK').catch(() => {});
        throw unavailableOr(error);
      } finally {
        client.off('error', ignore);
        client.release();
      }
    },
    async ping() {
      statements++;
      await pool.query('SELECT 1');
    },
    async close() {
      await listener.close();
      await pool.end();
    },
  };
}

/**
 * Unpacks the build's template (./template.ts) into a new store; false when there is no template
 * for this PGlite or the place is not empty. A template that fails to unpack leaves nothing behind:
 * the place is emptied and initdb runs instead. As after initdb, the instance that unpacked it is
 * dropped and collected: keeping it cost 47 MiB more resident memory than the 0.13 s a second open takes.
 */
async function unpackTemplate(PGlite: PGliteClass, dataDir: string): Promise<boolean> {
  if (!(await isEmptyDir(dataDir))) return false;
  const template = await readStoreTemplate();
  if (!template) return false;
  try {
    const db = await PGlite.create(dataDir, { postgresqlconf: EMBEDDED_SETTINGS, loadDataDir: template });
    await db.close();
  } catch {
    await rm(dataDir, { recursive: true, force: true });
    return false;
  }
  await collectGarbage();
  return true;
}

/**
 * Creating a store runs initdb, whose WebAssembly memory grows to ~700 MB and never shrinks (linear
 * memory cannot). Create the store with one instance, drop it, collect it, and serve with a fresh one.
 */
async function initialiseStore(PGlite: PGliteClass, dataDir: string): Promise<void> {
  const db = await PGlite.create(dataDir, { postgresqlconf: EMBEDDED_SETTINGS });
  await db.close();
  await collectGarbage();
}

/** A full collection now, so a dropped PGlite instance's memory goes back to the system. */
async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Two passes a turn apart: the first finalises the instance, the second frees its memory.
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

// Connection-level failures: the server is down, restarting, or unreachable (node-postgres and
// PostgreSQL's class 08 and 57P0x codes). Anything else is a real error of the statement.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Connection ended unexpectedly|Client has encountered a connection error|connection is closed/i;

/**
 * A database that cannot be reached is the service being unavailable for a moment (503, retry),
 * not an internal error: callers and load balancers can tell the two apart.
 */
function unavailableOr(error: unknown): unknown {
  const e = error as { code?: string; message?: string };
  const unavailable =
    (typeof e?.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) ||
    (typeof e?.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message));
  if (!unavailable) return error;
  return new Problem('service_unavailable', 'The database is unreachable right now; retry in a moment.', {
    retryAfterMs: 1000,
    cause: error,
  });
}
