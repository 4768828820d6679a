import type { PGlite } from '@electric-sql/pglite';

type PgliteModule = typeof import('@electric-sql/pglite');
/** What this module reads of a backend message. */
interface BackendMessage {
  name: string;
  dataTypeIDs?: number[];
}

/** The parts of PGlite's query path it keeps to itself, used as its own query() uses them. */
interface PgliteInternals {
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
  execProtocolStream(message: Uint8Array, options: { syncToFs: boolean }): Promise<BackendMessage[]>;
  serializers: Record<number, (value: unknown) => string>;
  parsers: Record<number, (value: string, type: number) => unknown>;
}

/** Statements kept prepared at most: the gateway has a few hundred distinct ones. */
const MAX_PREPARED = 512;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * Named prepared statements for the embedded store. PGlite's query() parses and plans every
 * statement anew in five exchanges with the WebAssembly backend; planning a join alone costs
 * about 0.4 ms of the gateway's own CPU there (on PostgreSQL it is the server's). A statement is
 * parsed once under a name, then each call is one exchange: bind, describe, execute, sync (the
 * plan is still made per call, with its values: db.ts EMBEDDED_SETTINGS). It runs under PGlite's own locks,
 * as its query() does, so it waits for a transaction in progress; a failed statement is never
 * kept, and a statement past MAX_PREPARED takes PGlite's ordinary path.
 */
export function preparedStatements(db: PGlite, pglite: Pick<PgliteModule, 'protocol' | 'parse'>) {
  const inner = db as unknown as PgliteInternals;
  const { serialize } = pglite.protocol;
  const prepared = new Map<string, { name: string; types: number[] }>();

  async function prepare(sql: string) {
    const name = `portico_${prepared.size}`;
    const messages = await inner.execProtocolStream(
      concat([
        serialize.parse({ name, text: sql }),
        serialize.describe({ type: 'S', name }),
        serialize.sync(),
      ]),
      { syncToFs: false },
    );
    const types = messages.find((m) => m.name === 'parameterDescription')?.dataTypeIDs ?? [];
    const statement = { name, types };
    prepared.set(sql, statement);
    return statement;
  }

  return {
    async query<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
      // PGlite's own query() says so; its internals, once closed, would fail on an undefined module.
      if (db.closed) throw new Error('embedded database is closed');
      if (!prepared.has(sql) && prepared.size >= MAX_PREPARED)
        return (await db.query<R>(sql, params as unknown[])).rows;
      const rows = await inner._runExclusiveTransaction(() =>
        inner._runExclusiveQuery(async () => {
          const statement = prepared.get(sql) ?? (await prepare(sql));
          const values = params.map((value, i) => {
            if (value === null || value === undefined) return null;
            const serializer = inner.serializers[statement.types[i]!];
            return serializer ? serializer(value) : String(value);
          });
          const messages = await inner.execProtocolStream(
            concat([
              serialize.bind({ statement: statement.name, values }),
              serialize.describe({ type: 'P' }),
              serialize.execute({}),
              serialize.sync(),
            ]),
            { syncToFs: false },
          );
          return (pglite.parse.parseResults(messages as never, inner.parsers as never)[0]?.rows ?? []) as R[];
        }),
      );
      await db.syncToFs();
      return rows;
    },
  };
}
