import type { Queryable } from './db.js';

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'used';

export interface ApprovalRow {
  id: string;
  environment_id: string;
  policy_name: string;
  tool_name: string;
  connection_name: string;
  identifier: string;
  /** The tool input exactly as the agent sent it: what an approver sees and what runs. */
  input: Record<string, unknown>;
  status: ApprovalStatus;
  requested_by: string;
  decided_by: string | null;
  decided_at: Date | null;
  reason: string | null;
  expires_at: Date;
  used_at: Date | null;
  execution_id: string | null;
  created_at: Date;
}

export async function insertApproval(
  db: Queryable,
  row: Pick<
    ApprovalRow,
    | 'id'
    | 'environment_id'
    | 'policy_name'
    | 'tool_name'
    | 'connection_name'
    | 'identifier'
    | 'input'
    | 'requested_by'
    | 'expires_at'
  >,
): Promise<ApprovalRow> {
  const rows = await db.query<ApprovalRow>(
    `INSERT INTO approvals (id, environment_id, policy_name, tool_name, connection_name, identifier, input,
       status, requested_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9) RETURNING *`,
    [
      row.id,
      row.environment_id,
      row.policy_name,
      row.tool_name,
      row.connection_name,
      row.identifier,
      JSON.stringify(row.input),
      row.requested_by,
      row.expires_at,
    ],
  );
  return rows[0]!;
}

export async function findApproval(
  db: Queryable,
  environmentId: string,
  id: string,
): Promise<ApprovalRow | undefined> {
  const rows = await db.query<ApprovalRow>('SELECT * FROM approvals WHERE id = $1 AND environment_id = $2', [
    id,
    environmentId,
  ]);
  return rows[0];
}

/** An approval by id alone: a signed decision link names no environment. */
export async function findApprovalById(db: Queryable, id: string): Promise<ApprovalRow | undefined> {
  return (await db.query<ApprovalRow>('SELECT * FROM approvals WHERE id = $1', [id]))[0];
}

/**
 * Moves an approval from one status to the next, only if it is still in `from` and, for a live
 * status, not past its expiry: the one statement that makes a decision or a use happen once.
 */
export async function transitionApproval(
  db: Queryable,
  environmentId: string,
  id: string,
  from: ApprovalStatus,
  to: ApprovalStatus,
  fields: { decided_by?: string; reason?: string | null; execution_id?: string } = {},
): Promise<ApprovalRow | undefined> {
  const rows = await db.query<ApprovalRow>(
    `UPDATE approvals SET status = $4,
       decided_by = COALESCE($5, decided_by),
       decided_at = CASE WHEN $4 IN ('approved', 'denied') THEN now() ELSE decided_at END,
       reason = COALESCE($6, reason),
       used_at = CASE WHEN $4 = 'used' THEN now() ELSE used_at END,
       execution_id = COALESCE($7, execution_id)
     WHERE id = $1 AND environment_id = $2 AND status = $3
       AND ($4 = 'expired' OR expires_at > now())
     RETURNING *`,
    [
      id,
      environmentId,
      from,
      to,
      fields.decided_by ?? null,
      fields.reason ?? null,
      fields.execution_id ?? null,
    ],
  );
  return rows[0];
}

export async function listApprovals(
  db: Queryable,
  environmentId: string,
  filter: {
    status?: ApprovalStatus;
    identifier?: string;
    /** Keyset: the last row of the previous page (newest first). */
    before?: { created_at: Date; id: string };
    limit: number;
  },
): Promise<ApprovalRow[]> {
  return db.query<ApprovalRow>(
    `SELECT * FROM approvals
     WHERE environment_id = $1
       AND ($2::text IS NULL OR status = $2)
       AND ($3::text IS NULL OR identifier = $3)
       AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5))
     ORDER BY created_at DESC, id DESC LIMIT $6`,
    [
      environmentId,
      filter.status ?? null,
      filter.identifier ?? null,
      filter.before?.created_at ?? null,
      filter.before?.id ?? null,
      filter.limit,
    ],
  );
}

/** Pending or approved approvals past their expiry, a batch at a time, marked expired. */
export async function expireApprovals(db: Queryable, limit = 500): Promise<ApprovalRow[]> {
  return db.query<ApprovalRow>(
    `UPDATE approvals SET status = 'expired'
     WHERE id IN (
       SELECT id FROM approvals WHERE status IN ('pending', 'approved') AND expires_at <= now()
       ORDER BY expires_at LIMIT $1)
     RETURNING *`,
    [limit],
  );
}
