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
