import type { Queryable } from './db.js';

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
}

export async function insertExecution(db: Queryable, row: ExecutionRow): Promise<void> {
  await db.query(
    `INSERT INTO executions (id, environment_id, tool_name, tool_version, account_id, connection_name, identifier,
       status, error_code, upstream_calls, duration_ms, started_at, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      row.id,
      row.environment_id,
      row.tool_name,
      row.tool_version,
      row.account_id,
      row.connection_name,
      row.identifier,
      row.status,
      row.error_code,
      row.upstream_calls,
      row.duration_ms,
      row.started_at,
      row.finished_at,
    ],
  );
}

export async function findExecution(db: Queryable, id: string): Promise<ExecutionRow | undefined> {
  return (await db.query<ExecutionRow>('SELECT * FROM executions WHERE id = $1', [id]))[0];
}

/** Many rows in one statement (the recorder writes in batches). */
export async function insertExecutions(db: Queryable, rows: ExecutionRow[]): Promise<void> {
  if (!rows.length) return;
  const column = <K extends keyof ExecutionRow>(key: K) => rows.map((row) => row[key]);
  await db.query(
    `INSERT INTO executions (id, environment_id, tool_name, tool_version, account_id, connection_name, identifier,
       status, error_code, upstream_calls, duration_ms, started_at, finished_at)
     SELECT u.id, u.environment_id, u.tool_name, u.tool_version,
       a.id, -- an account deleted since the call is no longer there to point to
       u.connection_name, u.identifier, u.status, u.error_code, u.upstream_calls, u.duration_ms,
       u.started_at, u.finished_at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
       $8::text[], $9::text[], $10::integer[], $11::integer[], $12::timestamptz[], $13::timestamptz[])
       AS u(id, environment_id, tool_name, tool_version, account_id, connection_name, identifier,
         status, error_code, upstream_calls, duration_ms, started_at, finished_at)
     LEFT JOIN connected_accounts a ON a.id = u.account_id
     ON CONFLICT (id) DO NOTHING`,
    [
      column('id'),
      column('environment_id'),
      column('tool_name'),
      column('tool_version'),
      column('account_id'),
      column('connection_name'),
      column('identifier'),
      column('status'),
      column('error_code'),
      column('upstream_calls'),
      column('duration_ms'),
      column('started_at'),
      column('finished_at'),
    ],
  );
}

export interface ExecutionFilter {
  toolName?: string;
  identifier?: string;
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
    `SELECT * FROM executions
     WHERE environment_id = $1
       AND ($2::text IS NULL OR tool_name = $2)
       AND ($3::text IS NULL OR identifier = $3)
       AND ($4::text IS NULL OR status = $4)
       AND ($5::timestamptz IS NULL OR started_at >= $5)
       AND ($6::timestamptz IS NULL OR started_at < $6)
       AND ($7::timestamptz IS NULL OR (started_at, id) < ($7, $8::text))
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
    ],
  );
}

export interface ExecutionStats {
  hours: Array<{ hour: Date; status: 'success' | 'error'; count: number }>;
  errorCodes: Array<{ error_code: string; count: number }>;
  providers: Array<{ provider: string; count: number; p50_ms: number; p95_ms: number }>;
}

/**
 * Aggregates of the executions since `since`: per hour and outcome, per error code, and duration
 * percentiles per provider (`tools` maps tool names to providers, so records keep their provider
 * after their connection is gone).
 */
export async function executionStats(
  db: Queryable,
  environmentId: string,
  since: Date,
  tools: { names: string[]; providers: string[] },
): Promise<ExecutionStats> {
  const hours = await db.query<{ hour: Date; status: 'success' | 'error'; count: number }>(
    `SELECT date_trunc('hour', started_at) AS hour, status, count(*)::int AS count FROM executions
     WHERE environment_id = $1 AND started_at >= $2 GROUP BY 1, 2 ORDER BY 1, 2`,
    [environmentId, since],
  );
  const errorCodes = await db.query<{ error_code: string; count: number }>(
    `SELECT coalesce(error_code, 'unknown') AS error_code, count(*)::int AS count FROM executions
     WHERE environment_id = $1 AND started_at >= $2 AND status = 'error'
     GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20`,
    [environmentId, since],
  );
  const providers = await db.query<{ provider: string; count: number; p50_ms: number; p95_ms: number }>(
    `SELECT coalesce(t.provider, 'unknown') AS provider, count(*)::int AS count,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY e.duration_ms) AS p50_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY e.duration_ms) AS p95_ms
     FROM executions e LEFT JOIN unnest($3::text[], $4::text[]) AS t(tool_name, provider)
       ON t.tool_name = e.tool_name
     WHERE e.environment_id = $1 AND e.started_at >= $2 GROUP BY 1 ORDER BY 1`,
    [environmentId, since, tools.names, tools.providers],
  );
  const num = <T extends { count: number }>(r: T) => ({ ...r, count: Number(r.count) });
  return {
    hours: hours.map(num),
    errorCodes: errorCodes.map(num),
    providers: providers.map((r) => ({
      ...num(r),
      p50_ms: Math.round(Number(r.p50_ms)),
      p95_ms: Math.round(Number(r.p95_ms)),
    })),
  };
}
