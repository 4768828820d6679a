import { camelKeys, snakeKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import { segment } from './connections.js';

type Raw = Record<string, unknown>;

export interface PolicyConstraint {
  /** Tool names or patterns ("calendar_*", "@destructive", "@writes"); default every tool. */
  tools?: string[];
  /** A JSON Pointer into tool_input, e.g. "/calendar_id". */
  path: string;
  oneOf?: Array<string | number | boolean>;
  prefix?: string;
  max?: number;
  /** Refuse calls that leave the field out (default: allowed). */
  required?: boolean;
}

export interface PolicyInput {
  name: string;
  description?: string;
  /** Only this connection's calls (default: every connection). */
  connectionName?: string | null;
  /** Only this end user's calls (default: every end user). */
  identifier?: string | null;
  allowTools?: string[];
  denyTools?: string[];
  /** Calls held for a person's approval; default ["@destructive"], [] for none. */
  approvalTools?: string[];
  /** Seconds an approval stays open and, once approved, usable (default 3600). */
  approvalExpiresIn?: number;
  constraints?: PolicyConstraint[];
  budget?: { calls: number; periodSeconds: number };
  enabled?: boolean;
}

export interface Policy extends PolicyInput {
  id: string;
  approvalTools: string[];
  approvalExpiresIn: number;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'used';

export interface Approval {
  id: string;
  status: ApprovalStatus;
  policy: string;
  toolName: string;
  connectionName: string;
  identifier: string;
  /** The input exactly as the agent sent it: what runs once approved. */
  toolInput: Record<string, unknown>;
  requestedBy: string;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  expiresAt: string;
  usedAt: string | null;
  executionId: string | null;
  createdAt: string;
  url: string;
}

function toWire(input: PolicyInput): Raw {
  return snakeKeys({
    ...input,
    constraints: input.constraints?.map((c) => snakeKeys(c)),
    budget: input.budget && snakeKeys(input.budget),
  });
}

function fromWire(raw: Raw): Policy {
  const policy = camelKeys<Policy & { constraints?: Raw[]; budget?: Raw }>(raw);
  return {
    ...policy,
    ...(raw.constraints
      ? { constraints: (raw.constraints as Raw[]).map((c) => camelKeys<PolicyConstraint>(c)) }
      : {}),
    ...(raw.budget ? { budget: camelKeys<{ calls: number; periodSeconds: number }>(raw.budget as Raw) } : {}),
  } as Policy;
}

/** Policies: which tools agents may call, with which inputs, how often, and which wait for approval. */
export class Policies {
  constructor(private readonly transport: Transport) {}

  async create(input: PolicyInput): Promise<Policy> {
    return fromWire(
      await this.transport.json<Raw>({ method: 'POST', path: '/api/v1/policies', json: toWire(input) }),
    );
  }

  async replace(input: PolicyInput): Promise<Policy> {
    return fromWire(
      await this.transport.json<Raw>({
        method: 'PUT',
        path: `/api/v1/policies/${segment(input.name)}`,
        json: toWire(input),
      }),
    );
  }

  async get(name: string): Promise<Policy> {
    return fromWire(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/policies/${segment(name)}` }),
    );
  }

  async list(): Promise<Policy[]> {
    const raw = await this.transport.json<{ data: Raw[] }>({ method: 'GET', path: '/api/v1/policies' });
    return raw.data.map(fromWire);
  }

  async delete(name: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: `/api/v1/policies/${segment(name)}` });
  }
}

/** Calls a policy held for a person: list them, approve or deny them. */
export class Approvals {
  constructor(private readonly transport: Transport) {}

  list(
    options: { status?: ApprovalStatus; identifier?: string; pageSize?: number } = {},
  ): PageList<Approval> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/approvals',
        query: {
          status: options.status,
          identifier: options.identifier,
          page_size: options.pageSize,
          page_token: pageToken,
        },
      });
      return { data: raw.data.map((a) => camelKeys<Approval>(a)), nextPageToken: raw.next_page_token };
    });
  }

  async get(id: string): Promise<Approval> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/approvals/${segment(id)}` }),
    );
  }

  async approve(id: string, reason?: string): Promise<Approval> {
    return this.decide(id, 'approve', reason);
  }

  async deny(id: string, reason?: string): Promise<Approval> {
    return this.decide(id, 'deny', reason);
  }

  private async decide(id: string, decision: 'approve' | 'deny', reason?: string): Promise<Approval> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'POST',
        path: `/api/v1/approvals/${segment(id)}/${decision}`,
        json: reason === undefined ? {} : { reason },
      }),
    );
  }
}
