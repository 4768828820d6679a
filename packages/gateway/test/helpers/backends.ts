import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/store/db.js';

/**
 * The stores every store-touching suite runs against. PostgreSQL is required under CI=true: a
 * missing database fails the run instead of silently skipping half the suite.
 */
export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface Backend {
  name: 'pglite' | 'postgres';
  /** A fresh, empty database (PGlite in memory, or a new schema in PostgreSQL). */
  open(): Promise<Database>;
  /** Connection URL and schema for processes spawned by tests (PostgreSQL only). */
  url?: string;
}

async function postgresReachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Drops a test schema (and everything in it); a failure to drop is not the test's failure. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '')}" CASCADE`);
  } catch {
    // Left for the next run's sweep of old schemas.
  } finally {
    await client.end().catch(() => {});
  }
}

export function uniqueSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

const unreachable = await postgresReachable();
if (unreachable && process.env.CI === 'true') {
  throw new Error(
    `PostgreSQL is required when CI=true but ${POSTGRES_URL} is unreachable (${unreachable}). Start it or set TEST_DATABASE_URL.`,
  );
}
if (unreachable) {
  console.warn(
    `[tests] PostgreSQL unreachable at ${POSTGRES_URL} (${unreachable}); PostgreSQL suites are skipped. CI=true makes this an error.`,
  );
}

export const BACKENDS: Backend[] = [
  { name: 'pglite', open: () => openDatabase({ dataDir: 'memory://' }) },
  ...(unreachable
    ? []
    : [
        {
          name: 'postgres' as const,
          url: POSTGRES_URL,
          open: async () => {
            const schema = uniqueSchema();
            const db = await openDatabase({ url: POSTGRES_URL, schema, poolSize: 5 });
            // The suite leaves nothing behind in the test database: a closed store's schema goes too.
            return {
              ...db,
              close: async () => {
                await db.close();
                await dropSchema(schema);
              },
            };
          },
        },
      ]),
];

export const postgresAvailable = !unreachable;
