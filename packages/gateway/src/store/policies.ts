import type { Queryable } from './db.js';

export interface PolicyRow {
  id: string;
  environment_id: string;
  name: string;
  /** The policy as the API took it (guardrails/policy.ts), validated before it is stored. */
  definition: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export async function insertPolicy(
  db: Queryable,
  row: Pick<PolicyRow, 'id' | 'environment_id' | 'name' | 'definition'>,
): Promise<PolicyRow | undefined> {
  const rows = await db.query<PolicyRow>(
    `INSERT INTO policies (id, environment_id, name, definition) VALUES ($1, $2, $3, $4)
     ON CONFLICT (environment_id, name) DO NOTHING RETURNING *`,
    [row.id, row.environment_id, row.name, JSON.stringify(row.definition)],
  );
  return rows[0];
}

export async function replacePolicy(
  db: Queryable,
  environmentId: string,
  name: string,
  definition: Record<string, unknown>,
): Promise<PolicyRow | undefined> {
  const rows = await db.query<PolicyRow>(
    `UPDATE policies SET definition = $3, updated_at = now()
     WHERE environment_id = $1 AND name = $2 RETURNING *`,
    [environmentId, name, JSON.stringify(definition)],
  );
  return rows[0];
}

export async function deletePolicy(db: Queryable, environmentId: string, name: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    'DELETE FROM policies WHERE environment_id = $1 AND name = $2 RETURNING id',
    [environmentId, name],
  );
  return rows.length > 0;
}

/** Every policy of an environment, by name (an environment holds tens, not thousands). */
export async function listPolicies(db: Queryable, environmentId: string): Promise<PolicyRow[]> {
  return db.query<PolicyRow>('SELECT * FROM policies WHERE environment_id = $1 ORDER BY name LIMIT 1000', [
    environmentId,
  ]);
}

/**
 * Counts one call against a policy's budget for an end user in the current window and returns the
 * count so far, in one statement (so replicas share one count).
 */
export async function countPolicyCall(
  db: Queryable,
  policyId: string,
  identifier: string,
  windowStart: Date,
): Promise<number> {
  const rows = await db.query<{ calls: number }>(
    `INSERT INTO policy_usage (policy_id, identifier, window_start, calls) VALUES ($1, $2, $3, 1)
     ON CONFLICT (policy_id, identifier, window_start) DO UPDATE SET calls = policy_usage.calls + 1
     RETURNING calls`,
    [policyId, identifier, windowStart],
  );
  return Number(rows[0]!.calls);
}

/** Windows that ended before `before`: nothing reads them again. */
export async function prunePolicyUsage(db: Queryable, before: Date): Promise<number> {
  const rows = await db.query<{ policy_id: string }>(
    `DELETE FROM policy_usage WHERE ctid IN (SELECT ctid FROM policy_usage WHERE window_start < $1 LIMIT 5000)
     RETURNING policy_id`,
    [before],
  );
  return rows.length;
}
