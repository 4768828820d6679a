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
  execProtocolRawStream(
    message: Uint8Array,
    options: { syncToFs: boolean; onRawData: (bytes: Uint8Array) => void },
  ): Promise<void>;
  serializers: Record<number, (value: unknown) => string>;
  parsers: Record<number, (value: string, type: number) => unknown>;
}

/**
 * Starts a statement that is to be planned once and its plan kept, whatever its values, where
 * the embedded store plans every other statement per call (db.ts EMBEDDED_SETTINGS): for one
 * whose every condition is always there (no "$n IS NULL OR …"), so that one plan fits all calls.
 * Planning is most of a simple page's cost there, the sizes of each table and index it reads
 * being asked of the file system every time. A comment, so PostgreSQL reads the statement as is.
 */
export const PLAN_ONCE = '/* plan once */ ';
const GENERIC_PLANS = 'SET plan_cache_mode = force_generic_plan';
const SESSION_PLANS = 'RESET plan_cache_mode';

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
export function preparedStatements(db: PGlite, pglite: Pick<PgliteModule, 'protocol'>) {
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
          const once = sql.startsWith(PLAN_ONCE);
          // The plan mode set around the statement, in the exchange's one transaction: a failed
          // statement rolls the SET back with it, so the session keeps its own mode either way.
          const around = [];
          if (once)
            for (const mode of [GENERIC_PLANS, SESSION_PLANS])
              around.push(prepared.get(mode) ?? (await prepare(mode)));
          const values = params.map((value, i) => {
            if (value === null || value === undefined) return null;
            const serializer = inner.serializers[statement.types[i]!];
            return serializer ? serializer(value) : String(value);
          });
          // The answer's bytes as the backend writes them (views of its memory, so copied), left
          // unparsed: execProtocolRaw would run PGlite's protocol parser over them all the same.
          const chunks: Uint8Array[] = [];
          const run = (name: string) => [
            serialize.bind({ statement: name, values: [] }),
            serialize.execute({}),
          ];
          await inner.execProtocolRawStream(
            concat([
              ...(around[0] ? run(around[0].name) : []),
              serialize.bind({ statement: statement.name, values }),
              serialize.describe({ type: 'P' }),
              serialize.execute({}),
              ...(around[1] ? run(around[1].name) : []),
              serialize.sync(),
            ]),
            { syncToFs: false, onRawData: (bytes) => chunks.push(bytes.slice()) },
          );
          const answer = chunks.length === 1 ? chunks[0]! : concat(chunks);
          return readRows<R>(answer, inner.parsers, pglite.protocol.Parser, once ? 1 : 0);
        }),
      );
      await db.syncToFs();
      return rows;
    },
  };
}

type Parsers = PgliteInternals['parsers'];

/**
 * The rows of a bind-execute exchange's answer, as PGlite's own parseResults makes them (values
 * through PGlite's type parsers, a later column of the same name winning), read straight from the
 * answer's bytes. PGlite's protocol parser copies every field into an ArrayBuffer of its own and
 * decodes it with a TextDecoder: for a page of 20 connected accounts that was a fifth of the
 * gateway's CPU. An answer with an error is read by PGlite's parser, which makes the error PGlite
 * throws, and that error is thrown.
 */
function readRows<R>(
  answer: Uint8Array,
  parsers: Parsers,
  ProtocolParser: PgliteModule['protocol']['Parser'],
  /** Results before the statement's (the plan mode set before it). */
  skip: number,
): R[] {
  const bytes = Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  const rows: R[] = [];
  let names: string[] = [];
  let columns: Array<{ parse: Parsers[number] | undefined; type: number }> = [];
  let completed = 0;
  for (let at = 0; at + 5 <= bytes.length; at += 1 + bytes.readInt32BE(at + 1)) {
    const code = bytes[at];
    if (code === ERROR_RESPONSE) throw firstError(answer, ProtocolParser);
    if (completed !== skip) {
      if (code === COMMAND_COMPLETE) completed++;
      continue;
    }
    if (code === ROW_DESCRIPTION) {
      let p = at + 5;
      const count = bytes.readInt16BE(p);
      p += 2;
      names = new Array(count);
      columns = new Array(count);
      for (let i = 0; i < count; i++) {
        const nul = bytes.indexOf(0, p);
        names[i] = bytes.toString('utf8', p, nul);
        const type = bytes.readInt32BE(nul + 7);
        columns[i] = { parse: parsers[type], type };
        // table oid, column number, type oid, type size, type modifier, format
        p = nul + 19;
      }
    } else if (code === DATA_ROW) {
      let p = at + 5;
      const count = bytes.readInt16BE(p);
      p += 2;
      const row: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) {
        const length = bytes.readInt32BE(p);
        p += 4;
        if (length < 0) {
          row[names[i]!] = null;
          continue;
        }
        const text = bytes.toString('utf8', p, p + length);
        p += length;
        const column = columns[i]!;
        row[names[i]!] = column.parse ? column.parse(text, column.type) : text;
      }
      rows.push(row as R);
    } else if (code === COMMAND_COMPLETE) {
      // The statement's result set is the answer (as parseResults()[0] for it alone).
      completed++;
    }
  }
  return rows;
}

const ROW_DESCRIPTION = 0x54; // 'T'
const DATA_ROW = 0x44; // 'D'
const COMMAND_COMPLETE = 0x43; // 'C'
const ERROR_RESPONSE = 0x45; // 'E'

function firstError(answer: Uint8Array, ProtocolParser: PgliteModule['protocol']['Parser']): Error {
  let error: Error | undefined;
  new ProtocolParser().parse(answer, (message) => {
    if (!error && message instanceof Error) error = message;
  });
  return error ?? new Error('the embedded database answered with an error it did not describe');
}
