import type { Queryable } from './db.js';
import { type NamedDefinitionRow, namedDefinitions } from './named-definitions.js';

/** A policy as the API took it (guardrails/policy.ts). */
export type PolicyRow = NamedDefinitionRow;

const policies = namedDefinitions('policies');
export const insertPolicy = policies.insert;
export const replacePolicy = policies.replace;
export const deletePolicy = policies.delete;

/** Every policy of an environment, by name (an environment holds tens, not thousands). */
export function listPolicies(db: Queryable, environmentId: string): Promise<PolicyRow[]> {
  return policies.list(db, environmentId, { limit: 1000 });
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
