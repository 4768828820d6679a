import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import { recordEvent } from '../events/outbox.js';
import type { EventType } from '../events/types.js';
import {
  type ApprovalRow,
  type ApprovalStatus,
  expireApprovals,
  findApproval,
  findApprovalById,
  insertApproval,
  listApprovals,
  transitionApproval,
} from '../store/approvals.js';
import type { Database } from '../store/db.js';
import { newId } from '../store/ids.js';
import {
  countPolicyCall,
  deletePolicy,
  insertPolicy,
  listPolicies,
  type PolicyRow,
  prunePolicyUsage,
  replacePolicy,
} from '../store/policies.js';
import type { ApprovedCallRequest, GuardedCall, ToolGuard } from '../tools/engine.js';
import { closestName } from '../validation/closest-name.js';
import type { ApprovalLinkSigner } from './approval-links.js';
import { APPROVAL_LINK_PREFIX } from './approval-links.js';
import {
  appliesTo,
  constraintErrors,
  needsApproval,
  type Policy,
  type PolicyDefinition,
  toolRefusal,
  withDefaults,
} from './policy.js';

/** NOTIFY channel: an environment's policies changed; every process drops its copy. */
export const POLICY_CHANNEL = 'portico_policy';
/** How long an environment's policies are trusted without the database (NOTIFY drops them sooner). */
const CACHE_TTL_MS = 30_000;

export interface PolicyView extends Policy {
  created_at: string;
  updated_at: string;
}

export interface ApprovalView {
  id: string;
  status: ApprovalStatus;
  policy: string;
  tool_name: string;
  connection_name: string;
  identifier: string;
  tool_input: Record<string, unknown>;
  requested_by: string;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  expires_at: string;
  used_at: string | null;
  execution_id: string | null;
  created_at: string;
  url: string;
}

export interface GuardrailDeps {
  db: Database;
  publicUrl: string;
  logger?: Logger;
  /** Signs the one-time decision links sent with approval.requested (none: no links). */
  links?: ApprovalLinkSigner;
}

/**
 * Guardrails on tool calls: the environment's policies (which tools, which inputs, how many calls),
 * and approvals, the calls a policy holds until a person decides. Checked by the tool engine after
 * the input is valid and the account is known, before anything reaches the provider.
 */
export class GuardrailService implements ToolGuard {
  private readonly cache = new Map<string, { until: number; policies: Policy[] }>();

  constructor(private readonly deps: GuardrailDeps) {}

  async start(): Promise<void> {
    await this.deps.db.listen(POLICY_CHANNEL, (environmentId) => this.cache.delete(environmentId));
  }

  // ---- policies ----

  async createPolicy(environmentId: string, definition: PolicyDefinition): Promise<PolicyView> {
    const row = await insertPolicy(this.deps.db, {
      id: newId('pol'),
      environment_id: environmentId,
      name: definition.name,
      definition,
    });
    if (!row) {
      throw new Problem(
        'policy_exists',
        `A policy named "${definition.name}" exists; replace it with PUT /api/v1/policies/${definition.name}.`,
      );
    }
    await this.changed(environmentId);
    return policyView(row);
  }

  async replacePolicy(
    environmentId: string,
    name: string,
    definition: PolicyDefinition,
  ): Promise<PolicyView> {
    if (definition.name !== name) {
      throw new Problem(
        'invalid_input',
        `The body names "${definition.name}" but the URL names "${name}"; send the same name.`,
        {
          errors: [{ path: '/name', message: `must be "${name}"` }],
        },
      );
    }
    const row = await replacePolicy(this.deps.db, environmentId, name, definition);
    if (!row) throw await this.notFound(environmentId, name);
    await this.changed(environmentId);
    return policyView(row);
  }

  async deletePolicy(environmentId: string, name: string): Promise<void> {
    if (!(await deletePolicy(this.deps.db, environmentId, name)))
      throw await this.notFound(environmentId, name);
    await this.changed(environmentId);
  }

  async getPolicy(environmentId: string, name: string): Promise<PolicyView> {
    const row = (await listPolicies(this.deps.db, environmentId)).find((r) => r.name === name);
    if (!row) throw await this.notFound(environmentId, name);
    return policyView(row);
  }

  async listPolicies(environmentId: string): Promise<{ data: PolicyView[] }> {
    return { data: (await listPolicies(this.deps.db, environmentId)).map(policyView) };
  }

  private async notFound(environmentId: string, name: string): Promise<Problem> {
    const names = (await listPolicies(this.deps.db, environmentId)).map((r) => r.name);
    const closest = closestName(name, names);
    return new Problem(
      'policy_not_found',
      `No policy is named "${name}"${closest ? ` (did you mean "${closest}"?)` : ''}; list them with GET /api/v1/policies.`,
    );
  }

  private async changed(environmentId: string): Promise<void> {
    this.cache.delete(environmentId);
    await this.deps.db.notify(POLICY_CHANNEL, environmentId);
  }

  private async policies(environmentId: string): Promise<Policy[]> {
    const now = Date.now();
    const cached = this.cache.get(environmentId);
    if (cached && cached.until > now && this.deps.db.listening()) return cached.policies;
    const policies = (await listPolicies(this.deps.db, environmentId)).map((row) =>
      withDefaults(row.id, row.definition as PolicyDefinition),
    );
    this.cache.set(environmentId, { until: now + CACHE_TTL_MS, policies });
    return policies;
  }

  // ---- the engine's checks ----

  async approvedInput(
    environmentId: string,
    request: ApprovedCallRequest,
  ): Promise<{ input: Record<string, unknown>; connectionName: string }> {
    const approval = await this.liveApproval(environmentId, request.approval_id);
    if (
      approval.tool_name !== request.tool_name ||
      approval.identifier !== request.identifier ||
      (request.connection_name !== undefined && request.connection_name !== approval.connection_name)
    ) {
      throw new Problem(
        'approval_mismatch',
        `Approval ${approval.id} is for ${approval.tool_name} on "${approval.connection_name}" as "${approval.identifier}", not this call; retry the approved call itself.`,
      );
    }
    if (request.tool_input !== undefined && !isDeepStrictEqual(request.tool_input, approval.input)) {
      throw new Problem(
        'approval_mismatch',
        `Approval ${approval.id} approved another input; send the approved tool_input unchanged, or leave tool_input out to run it.`,
        { extensions: { approved_input: approval.input } },
      );
    }
    if (approval.status === 'pending') {
      throw new Problem(
        'approval_pending',
        `Approval ${approval.id} waits for a decision; retry once it is approved.`,
        {
          retryAfterMs: 5000,
          extensions: approvalExtensions(approval, this.deps.publicUrl),
        },
      );
    }
    return { input: approval.input, connectionName: approval.connection_name };
  }

  async admit(call: GuardedCall): Promise<void> {
    const policies = (await this.policies(call.environmentId)).filter((p) =>
      appliesTo(p, call.connectionName, call.identifier),
    );
    for (const policy of policies) {
      const refusal = toolRefusal(policy, call.tool);
      if (refusal) {
        throw new Problem('policy_denied', `${call.tool.name} is not allowed here: ${refusal}.`, {
          extensions: {
            policy: policy.name,
            ...(policy.allow_tools ? { allowed_tools: policy.allow_tools } : {}),
          },
        });
      }
      const errors = constraintErrors(policy, call.tool, call.input);
      if (errors.length) {
        throw new Problem(
          'policy_constraint',
          `Policy "${policy.name}" does not allow this input: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`,
          { errors, extensions: { policy: policy.name } },
        );
      }
    }
    const holding = call.approvalId ? undefined : policies.find((p) => needsApproval(p, call.tool));
    // A held call spends nothing: its budget is counted when it runs.
    if (holding) await this.hold(holding, call);
    for (const policy of policies) await this.spend(policy, call.identifier);
    if (call.approvalId) await this.use(call.environmentId, call.approvalId, call.executionId);
  }

  /** Counts the call against the policy's budget; refuses it once the window's calls are spent. */
  private async spend(policy: Policy, identifier: string): Promise<void> {
    if (!policy.budget) return;
    const periodMs = policy.budget.period_seconds * 1000;
    const windowStart = Math.floor(Date.now() / periodMs) * periodMs;
    const calls = await countPolicyCall(this.deps.db, policy.id, identifier, new Date(windowStart));
    if (calls <= policy.budget.calls) return;
    const retryAfterMs = windowStart + periodMs - Date.now();
    throw new Problem(
      'policy_budget_exceeded',
      `Policy "${policy.name}" allows ${policy.budget.calls} calls per ${policy.budget.period_seconds} s for "${identifier}", and they are spent; retry in ${Math.ceil(retryAfterMs / 1000)} s.`,
      {
        retryAfterMs,
        headers: { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) },
        extensions: { policy: policy.name },
      },
    );
  }

  private async hold(policy: Policy, call: GuardedCall): Promise<never> {
    const approval = await this.deps.db.transaction(async (tx) => {
      const row = await insertApproval(tx, {
        id: newId('apr'),
        environment_id: call.environmentId,
        policy_name: policy.name,
        tool_name: call.tool.name,
        connection_name: call.connectionName,
        identifier: call.identifier,
        input: call.rawInput,
        requested_by: call.requestedBy ?? 'unknown',
        expires_at: new Date(Date.now() + policy.approval_expires_in * 1000),
      });
      await this.event(tx, 'approval.requested', row, this.decisionUrl(row.id));
      return row;
    });
    throw new Problem(
      'approval_required',
      `Policy "${policy.name}" holds ${call.tool.name} for a person's approval (approval ${approval.id}, until ${approval.expires_at.toISOString()}). Once approved, send the same call again with "approval_id": "${approval.id}"; it then runs once, with this input.`,
      { extensions: approvalExtensions(approval, this.deps.publicUrl) },
    );
  }

  /** Spends an approved approval: the one statement that lets the call run once. */
  private async use(environmentId: string, id: string, executionId: string): Promise<void> {
    const used = await transitionApproval(this.deps.db, environmentId, id, 'approved', 'used', {
      execution_id: executionId,
    });
    if (!used) {
      // Another retry spent it first, or it expired or was changed meanwhile.
      const approval = await this.liveApproval(environmentId, id);
      throw new Problem(
        'approval_used',
        `Approval ${approval.id} is ${approval.status}; it cannot run again.`,
      );
    }
  }

  // ---- approvals ----

  async getApproval(environmentId: string, id: string): Promise<ApprovalView> {
    return approvalView(await this.current(environmentId, id), this.deps.publicUrl);
  }

  async listApprovals(
    environmentId: string,
    query: { status?: ApprovalStatus; identifier?: string; page_size?: number; page_token?: string },
  ): Promise<{ data: ApprovalView[]; next_page_token: string | null }> {
    await this.expireDue();
    const limit = query.page_size ?? 50;
    const before = query.page_token ? decodeCursor(query.page_token) : undefined;
    const rows = await listApprovals(this.deps.db, environmentId, {
      ...(query.status ? { status: query.status } : {}),
      ...(query.identifier ? { identifier: query.identifier } : {}),
      ...(before ? { before } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map((row) => approvalView(row, this.deps.publicUrl)),
      next_page_token: rows.length > limit && last ? encodeCursor(last) : null,
    };
  }

  async decide(
    environmentId: string,
    id: string,
    decision: 'approve' | 'deny',
    by: string,
    reason?: string,
  ): Promise<ApprovalView> {
    const to = decision === 'approve' ? 'approved' : 'denied';
    const decided = await this.deps.db.transaction(async (tx) => {
      const row = await transitionApproval(tx, environmentId, id, 'pending', to, {
        decided_by: by,
        reason: reason ?? null,
      });
      if (row) await this.event(tx, to === 'approved' ? 'approval.approved' : 'approval.denied', row);
      return row;
    });
    if (decided) return approvalView(decided, this.deps.publicUrl);
    const current = await this.current(environmentId, id);
    throw new Problem(
      current.status === 'expired' ? 'approval_expired' : 'approval_used',
      `Approval ${id} is ${current.status}${current.decided_by ? ` (by ${current.decided_by})` : ''}; only a pending approval can be decided.`,
    );
  }

  /**
   * The approval a signed decision link names, for its page: the link stands for the approver's
   * credential, so a forged or foreign one reads as not found.
   */
  async approvalForLink(token: string): Promise<ApprovalView> {
    const row = await this.linkedApproval(token);
    return approvalView(await this.current(row.environment_id, row.id), this.deps.publicUrl);
  }

  /** A decision made through a signed link; the approval's state makes the link work once. */
  async decideByLink(
    token: string,
    decision: 'approve' | 'deny',
    reason?: string,
  ): Promise<{ approval: ApprovalView; environmentId: string }> {
    const row = await this.linkedApproval(token);
    const approval = await this.decide(row.environment_id, row.id, decision, 'link', reason);
    return { approval, environmentId: row.environment_id };
  }

  private async linkedApproval(token: string): Promise<ApprovalRow> {
    const id = this.deps.links?.verify(token);
    const row = id ? await findApprovalById(this.deps.db, id) : undefined;
    if (!row) {
      throw new Problem(
        'approval_not_found',
        'This approval link is not one Portico signed (or its key was retired); decide in the dashboard or with POST /api/v1/approvals/{id}/approve.',
      );
    }
    return row;
  }

  private decisionUrl(id: string): string | undefined {
    return this.deps.links
      ? `${this.deps.publicUrl}${APPROVAL_LINK_PREFIX}${this.deps.links.sign(id)}`
      : undefined;
  }

  /** Marks due approvals expired, with their events; run by the scheduler and before listings. */
  async expireDue(): Promise<number> {
    return this.deps.db.transaction(async (tx) => {
      const rows = await expireApprovals(tx);
      for (const row of rows) await this.event(tx, 'approval.expired', row);
      return rows.length;
    });
  }

  async pruneUsage(): Promise<number> {
    // Budget windows run up to 31 days; a window older than that is never read again.
    return prunePolicyUsage(this.deps.db, new Date(Date.now() - 32 * 24 * 3600 * 1000));
  }

  /** The approval, expired first if its time is up. */
  private async current(environmentId: string, id: string): Promise<ApprovalRow> {
    const row = await findApproval(this.deps.db, environmentId, id);
    if (!row) {
      throw new Problem(
        'approval_not_found',
        `No approval has id ${id}; list them with GET /api/v1/approvals.`,
      );
    }
    if ((row.status === 'pending' || row.status === 'approved') && row.expires_at.getTime() <= Date.now()) {
      await this.expireDue();
      return (await findApproval(this.deps.db, environmentId, id)) ?? row;
    }
    return row;
  }

  /** The approval, refused with the problem its state calls for unless it is pending or approved. */
  private async liveApproval(environmentId: string, id: string): Promise<ApprovalRow> {
    const row = await this.current(environmentId, id);
    const extensions = approvalExtensions(row, this.deps.publicUrl);
    if (row.status === 'denied') {
      throw new Problem(
        'approval_denied',
        `Approval ${id} was denied${row.decided_by ? ` by ${row.decided_by}` : ''}${row.reason ? `: ${row.reason}` : ''}; the call will not run.`,
        { extensions },
      );
    }
    if (row.status === 'expired') {
      throw new Problem(
        'approval_expired',
        `Approval ${id} expired at ${row.expires_at.toISOString()} without running; send the call again without approval_id to ask anew.`,
        { extensions },
      );
    }
    if (row.status === 'used') {
      throw new Problem(
        'approval_used',
        `Approval ${id} already ran (execution ${row.execution_id}); it runs once.`,
        {
          extensions,
        },
      );
    }
    return row;
  }

  private event(
    tx: Parameters<typeof recordEvent>[1],
    type: EventType,
    row: ApprovalRow,
    /** Only in approval.requested: whoever receives the event may decide with it, once. */
    decisionUrl?: string,
  ): Promise<void> {
    const view = approvalView(row, this.deps.publicUrl);
    return recordEvent(this.deps.db, tx, {
      environmentId: row.environment_id,
      type,
      subject: row.id,
      data: decisionUrl ? { ...view, decision_url: decisionUrl } : view,
    });
  }
}

function approvalExtensions(row: ApprovalRow, publicUrl: string): Record<string, unknown> {
  return {
    approval_id: row.id,
    approval_status: row.status,
    approval_url: approvalUrl(row.id, publicUrl),
    expires_at: row.expires_at.toISOString(),
    policy: row.policy_name,
  };
}

const approvalUrl = (id: string, publicUrl: string) => `${publicUrl}/api/v1/approvals/${id}`;

function approvalView(row: ApprovalRow, publicUrl: string): ApprovalView {
  return {
    id: row.id,
    status: row.status,
    policy: row.policy_name,
    tool_name: row.tool_name,
    connection_name: row.connection_name,
    identifier: row.identifier,
    tool_input: row.input,
    requested_by: row.requested_by,
    decided_by: row.decided_by,
    decided_at: row.decided_at?.toISOString() ?? null,
    reason: row.reason,
    expires_at: row.expires_at.toISOString(),
    used_at: row.used_at?.toISOString() ?? null,
    execution_id: row.execution_id,
    created_at: row.created_at.toISOString(),
    url: approvalUrl(row.id, publicUrl),
  };
}

function policyView(row: PolicyRow): PolicyView {
  return {
    ...withDefaults(row.id, row.definition as PolicyDefinition),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const encodeCursor = (row: ApprovalRow) =>
  Buffer.from(`${row.created_at.toISOString()}|${row.id}`).toString('base64url');

function decodeCursor(token: string): { created_at: Date; id: string } {
  const [at, id] = Buffer.from(token, 'base64url').toString('utf8').split('|');
  const created = new Date(at ?? '');
  if (!id || Number.isNaN(created.getTime())) {
    throw new Problem(
      'invalid_input',
      'page_token is not one this API gave; send next_page_token as it came.',
      {
        errors: [{ path: '/page_token', message: 'is not a page token of this listing' }],
      },
    );
  }
  return { created_at: created, id };
}
