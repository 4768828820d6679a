import { type Queryable, ROW_CHECKS_PLANNED_ONCE } from './db.js';

export interface ExecutionRow {
  id: string;
  environment_id: string;
  tool_name: string;
  tool_version: string | null;
  account_id: string | null;
  connection_name: string | null;
  identifier: string | null;
  status: 'success' | 'error';
  error_code: string | null;
  upstream_calls: number;
  duration_ms: number;
  started_at: Date;
  finished_at: Date;
  /** The detail (optional: records written before migration 21, and tests, leave them out). */
  error_detail?: string | null;
  error_fields?: Array<{ path: string; message: string }> | null;
  /** The tool input, secrets masked and capped (executions/detail.ts). */
  input?: unknown;
  output_summary?: object | null;
  upstream_status?: number | null;
  attempts?: number | null;
  token_refreshed?: boolean | null;
  timings?: Record<string, number> | null;
  /**
   * Not columns: the call's input and output as the engine had them, turned into `input` and
   * `output_summary` by the recorder when it writes (executions/service.ts), off the response path.
   */
  raw_input?: unknown;
  raw_output?: unknown;
  /** The byte length of raw_output's JSON, when the engine has serialized it already. */
  raw_output_bytes?: number | undefined;
}

/** The list's columns: everything but the detail, which only the single record returns. */
const LIST_COLUMNS = `id, environment_id, tool_name, tool_version, account_id, connection_name, identifier,
  status, error_code, upstream_calls, duration_ms, started_at, finished_at`;

export async function findExecution(db: Queryable, id: string): Promise<ExecutionRow | undefined> {
  return (await db.query<ExecutionRow>('SELECT * FROM executions WHERE id = $1', [id]))[0];
}

/**
 * Many rows in one statement (the recorder writes in batches), counted into the hourly rollup the
 * dashboard's statistics read in the same statement: only rows actually inserted are counted, so a
 * retried batch is not counted twice. The batch travels as one JSON document: one native
 * JSON.stringify instead of 21 arrays each driver spelled out as array literals element by element
 * (a third of the gateway's CPU per row on PostgreSQL). In the embedded store's transactions the
 * batch goes as COPY instead (copyExecutions, below).
 */
export async function insertExecutions(db: Queryable, rows: ExecutionRow[]): Promise<void> {
  if (!rows.length) return;
  if (db.script) return copyExecutions(db as Required<Queryable>, rows);
  const batch = rows.map((row) => ({
    id: row.id,
    environment_id: row.environment_id,
    tool_name: row.tool_name,
    tool_version: row.tool_version,
    account_id: row.account_id,
    connection_name: row.connection_name,
    identifier: row.identifier,
    status: row.status,
    error_code: row.error_code,
    upstream_calls: row.upstream_calls,
    duration_ms: row.duration_ms,
    // Epoch milliseconds: a Date would cost JSON.stringify a toJSON call each.
    started_at: row.started_at.getTime(),
    finished_at: row.finished_at.getTime(),
    error_detail: row.error_detail ?? null,
    error_fields: row.error_fields ?? null,
    input: row.input ?? null,
    output_summary: row.output_summary ?? null,
    upstream_status: row.upstream_status ?? null,
    attempts: row.attempts ?? null,
    token_refreshed: row.token_refreshed ?? null,
    timings: row.timings ?? null,
  }));
  await db.query(
    `WITH inserted AS (
       INSERT INTO executions (id, environment_id, tool_name, tool_version, account_id, connection_name, identifier,
         status, error_code, upstream_calls, duration_ms, started_at, finished_at,
         error_detail, error_fields, input, output_summary, upstream_status, attempts, token_refreshed, timings)
       SELECT u.id, u.environment_id, u.tool_name, u.tool_version,
         a.id, -- an account deleted since the call is no longer there to point to
         u.connection_name, u.identifier, u.status, u.error_code, u.upstream_calls, u.duration_ms,
         to_timestamp(u.started_at::float8 / 1000), to_timestamp(u.finished_at::float8 / 1000), u.error_detail,
         u.error_fields, u.input, u.output_summary,
         u.upstream_status, u.attempts, u.token_refreshed, u.timings
       FROM json_to_recordset($1::json)
         AS u(id text, environment_id text, tool_name text, tool_version text, account_id text,
           connection_name text, identifier text, status text, error_code text, upstream_calls integer,
           duration_ms integer, started_at bigint, finished_at bigint, error_detail text,
           error_fields jsonb, input jsonb, output_summary jsonb, upstream_status integer,
           attempts integer, token_refreshed boolean, timings jsonb)
       LEFT JOIN connected_accounts a ON a.id = u.account_id
       ON CONFLICT (id) DO NOTHING
       RETURNING environment_id, started_at, tool_name, status, error_code, duration_ms
     )
     INSERT INTO execution_rollups AS r
       (environment_id, hour, tool_name, status, error_code, duration_bucket, count)
     SELECT environment_id, ${HOUR_UTC('started_at')}, tool_name, status, coalesce(error_code, ''),
       ${DURATION_BUCKET('duration_ms')}, count(*)
     FROM inserted GROUP BY 1, 2, 3, 4, 5, 6
     ON CONFLICT (environment_id, hour, tool_name, status, error_code, duration_bucket)
       DO UPDATE SET count = r.count + excluded.count`,
    [JSON.stringify(batch)],
  );
}

/** The columns a record is written with, in COPY's order. */
const COPIED_COLUMNS = [
  'id',
  'environment_id',
  'tool_name',
  'tool_version',
  'account_id',
  'connection_name',
  'identifier',
  'status',
  'error_code',
  'upstream_calls',
  'duration_ms',
  'started_at',
  'finished_at',
  'error_detail',
  'error_fields',
  'input',
  'output_summary',
  'upstream_status',
  'attempts',
  'token_refreshed',
  'timings',
] as const satisfies readonly (keyof ExecutionRow)[];

/**
 * The embedded store's way to write a batch (in the recorder's transaction), the same rows and
 * rollup as the statement above: a COPY, which its engine parses for about two thirds of the CPU of
 * json_to_recordset (an execution record cost 140 µs of PGlite's WebAssembly as JSON, 105 as COPY,
 * measured in one run), sent with the rollup in one exchange. There the batch is alone on the
 * store's one connection and written once (WriteBehind), so it needs no ON CONFLICT; accounts
 * deleted since the call are looked up first, and their records point to none.
 */
async function copyExecutions(db: Required<Queryable>, rows: ExecutionRow[]): Promise<void> {
  const accountIds = [...new Set(rows.map((row) => row.account_id).filter((id) => id !== null))];
  const present = new Set(
    accountIds.length
      ? (
          await db.script<{ id: string }>(
            `SELECT id FROM connected_accounts WHERE id IN (${accountIds.map(sqlText).join(', ')})`,
          )
        )[0]!.map((row) => row.id)
      : [],
  );
  let text = '';
  // The rollup's groups, counted here: the hour in UTC is the start's whole hours since the epoch.
  const groups = new Map<string, RollupGroup>();
  for (const row of rows) {
    const accountId = row.account_id !== null && present.has(row.account_id) ? row.account_id : null;
    for (const column of COPIED_COLUMNS) {
      const value = column === 'account_id' ? accountId : row[column];
      text += column === 'id' ? '' : '\t';
      text += copyField(value);
    }
    text += '\n';
    const hour = Math.floor(row.started_at.getTime() / HOUR_MS) * HOUR_MS;
    const errorCode = row.error_code ?? '';
    const key = `${row.environment_id} ${hour} ${row.tool_name} ${row.status} ${errorCode} ${row.duration_ms}`;
    const group = groups.get(key);
    if (group) group.count++;
    else
      groups.set(key, {
        environment_id: row.environment_id,
        hour,
        tool_name: row.tool_name,
        status: row.status,
        error_code: errorCode,
        duration_ms: row.duration_ms,
        count: 1,
      });
  }
  // One exchange: the foreign-key checks planned once for the batch, the rows, their rollup.
  const rollup = sqlText(JSON.stringify([...groups.values()]));
  await db.script(
    `${ROW_CHECKS_PLANNED_ONCE};
     COPY executions (${COPIED_COLUMNS.join(', ')}) FROM '/dev/blob';
     INSERT INTO execution_rollups AS r
       (environment_id, hour, tool_name, status, error_code, duration_bucket, count)
     SELECT g.environment_id, to_timestamp(g.hour::float8 / 1000), g.tool_name, g.status, g.error_code,
       ${DURATION_BUCKET('g.duration_ms')}, sum(g.count)
     FROM json_to_recordset(${rollup}::json)
       AS g(environment_id text, hour bigint, tool_name text, status text, error_code text,
         duration_ms integer, count integer)
     GROUP BY 1, 2, 3, 4, 5, 6
     ON CONFLICT (environment_id, hour, tool_name, status, error_code, duration_bucket)
       DO UPDATE SET count = r.count + excluded.count`,
    text,
  );
}

interface RollupGroup {
  environment_id: string;
  hour: number;
  tool_name: string;
  status: string;
  error_code: string;
  duration_ms: number;
  count: number;
}

const HOUR_MS = 3_600_000;

/** A string literal (standard_conforming_strings: only a quote needs doubling). */
const sqlText = (value: string) => `'${value.replaceAll("'", "''")}'`;
const COPY_SPECIAL = /[\\\n\r\t\0]/;
// A NUL cannot be stored in text at all: dropped, as the JSON statement could not take it either.
const COPY_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '',
};

/** A value in COPY's text format: \N for null, JSON for objects, backslash escapes. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text =
    value instanceof Date
      ? value.toISOString()
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  return COPY_SPECIAL.test(text) ? text.replace(/[\\\n\r\t\0]/g, (c) => COPY_ESCAPES[c] as string) : text;
}

/** The hour a time falls in, whatever the session's time zone (rollup keys must not depend on it). */
const HOUR_UTC = (col: string) => `date_trunc('hour', ${col} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
/** Quarter-power-of-two buckets: the same expression as migration 18's backfill. */
const DURATION_BUCKET = (col: string) => `floor(ln(greatest(${col}, 0) + 1) / ln(2) * 4)::integer`;
/** A bucket's representative duration: the geometric middle of its bounds. */
function bucketMs(bucket: number): number {
  return Math.max(0, 2 ** ((bucket + 0.5) / 4) - 1);
}

/**
 * Deletes up to `batch` executions started before `before`, oldest first, in one short statement
 * (the caller loops and paces): no long lock, no long transaction, index-driven on started_at.
 */
export async function pruneExecutions(db: Queryable, before: Date, batch: number): Promise<number> {
  const rows = await db.query(
    // = ANY(ARRAY(...)): the batch's ids are looked up by primary key, never by a join the planner
    // might turn into a scan of the whole table.
    `DELETE FROM executions WHERE id = ANY(ARRAY(
       SELECT id FROM executions WHERE started_at < $1 ORDER BY started_at LIMIT $2
     )) RETURNING 1`,
    [before, batch],
  );
  return rows.length;
}

/** Deletes up to `batch` rollup rows of hours before `before`. */
export async function pruneExecutionRollups(db: Queryable, before: Date, batch: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM execution_rollups WHERE (environment_id, hour, tool_name, status, error_code, duration_bucket) IN (
       SELECT environment_id, hour, tool_name, status, error_code, duration_bucket
       FROM execution_rollups WHERE hour < $1 LIMIT $2
     ) RETURNING 1`,
    [before, batch],
  );
  return rows.length;
}

export interface ExecutionFilter {
  toolName?: string;
  identifier?: string;
  /** Only executions on these connections (a caller limited to some: auth/access.ts). */
  connectionNames?: readonly string[];
  status?: 'success' | 'error';
  since?: Date;
  until?: Date;
  /** Keyset pagination, newest first: rows strictly before this (started_at, id). */
  before?: { startedAt: Date; id: string };
  limit: number;
}

export async function listExecutions(
  db: Queryable,
  environmentId: string,
  filter: ExecutionFilter,
): Promise<ExecutionRow[]> {
  return db.query<ExecutionRow>(
    `SELECT ${LIST_COLUMNS} FROM executions
     WHERE environment_id = $1
       AND ($2::text IS NULL OR tool_name = $2)
       AND ($3::text IS NULL OR identifier = $3)
       AND ($4::text IS NULL OR status = $4)
       AND ($5::timestamptz IS NULL OR started_at >= $5)
       AND ($6::timestamptz IS NULL OR started_at < $6)
       AND ($7::timestamptz IS NULL OR (started_at, id) < ($7, $8::text))
       AND ($10::text[] IS NULL OR connection_name = ANY($10::text[]))
     ORDER BY started_at DESC, id DESC
     LIMIT $9`,
    [
      environmentId,
      filter.toolName ?? null,
      filter.identifier ?? null,
      filter.status ?? null,
      filter.since ?? null,
      filter.until ?? null,
      filter.before?.startedAt ?? null,
      filter.before?.id ?? null,
      filter.limit,
      filter.connectionNames ? [...filter.connectionNames] : null,
    ],
  );
}

export interface ExecutionStats {
  hours: Array<{ hour: Date; status: 'success' | 'error'; count: number }>;
  errorCodes: Array<{ error_code: string; count: number }>;
  providers: Array<{ provider: string; count: number; p50_ms: number; p95_ms: number }>;
}

/** One grouped rollup row: one of the three views of executionStatsRows(). */
export interface ExecutionStatsRow {
  set: number;
  hour: Date | null;
  status: 'success' | 'error' | null;
  error_code: string | null;
  provider: string | null;
  duration_bucket: number | null;
  count: number;
}

/**
 * Aggregates of the executions in [from, until) (until null: up to now), read from the hourly
 * rollup (a few rows per hour and tool, whatever the number of executions) in one pass for the
 * three views (grouping sets): per hour and outcome, per outcome and error code, and per provider
 * and duration bucket (`tools` maps tool names to providers, so records keep their provider after
 * their connection is gone). Rows of several ranges add up: see summarizeExecutionStats().
 */
export async function executionStatsRows(
  db: Queryable,
  environmentId: string,
  from: Date,
  until: Date | null,
  tools: { names: string[]; providers: string[] },
): Promise<ExecutionStatsRow[]> {
  return db.query<ExecutionStatsRow>(
    `SELECT GROUPING(r.hour, r.status, r.error_code, t.provider, r.duration_bucket) AS set,
       r.hour, r.status, r.error_code, t.provider, r.duration_bucket,
       sum(r.count)::int AS count
     FROM execution_rollups r LEFT JOIN unnest($4::text[], $5::text[]) AS t(tool_name, provider)
       ON t.tool_name = r.tool_name
     WHERE r.environment_id = $1 AND r.hour >= $2 AND ($3::timestamptz IS NULL OR r.hour < $3)
     GROUP BY GROUPING SETS ((r.hour, r.status), (r.status, r.error_code), (t.provider, r.duration_bucket))`,
    [environmentId, from, until, tools.names, tools.providers],
  );
}

// GROUPING() sets a bit per column left out of the set: hour+status leave out the last three.
const HOUR_STATUS = 0b00111;
const STATUS_ERROR = 0b10011;
const PROVIDER_BUCKET = 0b11100;

/** The figures of one or more ranges' rows (a key seen in several ranges adds up). */
export function summarizeExecutionStats(rows: ExecutionStatsRow[]): ExecutionStats {
  const hourSums = new Map<string, { hour: Date; status: 'success' | 'error'; count: number }>();
  const errorSums = new Map<string, number>();
  const bucketSums = new Map<string, Map<number, number>>();
  for (const r of rows) {
    const set = Number(r.set);
    const count = Number(r.count);
    if (set === HOUR_STATUS) {
      const hour = new Date(r.hour!);
      const key = `${hour.getTime()} ${r.status}`;
      const seen = hourSums.get(key);
      if (seen) seen.count += count;
      else hourSums.set(key, { hour, status: r.status!, count });
    } else if (set === STATUS_ERROR && r.status === 'error') {
      const code = r.error_code || 'unknown';
      errorSums.set(code, (errorSums.get(code) ?? 0) + count);
    } else if (set === PROVIDER_BUCKET && r.provider !== null) {
      // A tool no provider serves (a call that named an unknown tool) ran nothing upstream: it
      // has no place among the providers' durations, though it counts among the outcomes.
      const buckets = bucketSums.get(r.provider!) ?? new Map<number, number>();
      const bucket = Number(r.duration_bucket);
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + count);
      bucketSums.set(r.provider!, buckets);
    }
  }
  const hours = [...hourSums.values()];
  const errorCodes = [...errorSums].map(([error_code, count]) => ({ error_code, count }));
  const byProvider = new Map(
    [...bucketSums].map(([provider, buckets]) => [
      provider,
      [...buckets].map(([bucket, count]) => ({ bucket, count })),
    ]),
  );
  hours.sort((x, y) => x.hour.getTime() - y.hour.getTime() || x.status.localeCompare(y.status));
  errorCodes.sort((x, y) => y.count - x.count || x.error_code.localeCompare(y.error_code));
  const percentile = (list: Array<{ bucket: number; count: number }>, total: number, p: number) => {
    const rank = Math.max(1, Math.ceil(p * total));
    let seen = 0;
    for (const { bucket, count } of list) {
      seen += count;
      if (seen >= rank) return Math.round(bucketMs(bucket));
    }
    return 0;
  };
  return {
    hours,
    errorCodes: errorCodes.slice(0, 20),
    providers: [...byProvider]
      .sort(([x], [y]) => x.localeCompare(y))
      .map(([provider, list]) => {
        list.sort((x, y) => x.bucket - y.bucket);
        const count = list.reduce((sum, b) => sum + b.count, 0);
        return {
          provider,
          count,
          p50_ms: percentile(list, count, 0.5),
          p95_ms: percentile(list, count, 0.95),
        };
      }),
  };
}
