import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PolicyBody, type PolicyDefinition } from '../../guardrails/policy.js';
import type { GuardrailService } from '../../guardrails/service.js';
import type { ApprovalStatus } from '../../store/approvals.js';

const NameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const ApprovalsQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Union(['pending', 'approved', 'denied', 'expired', 'used'].map((s) => Type.Literal(s))),
    ),
    identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    page_token: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

const DecisionBody = Type.Object(
  {
    reason: Type.Optional(
      Type.String({ maxLength: 1000, description: 'Why; shown to the agent and in events.' }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Policies (what agents may do with the tools) and approvals (the calls policies hold for a person),
 * under /api/v1 with the gateway token.
 */
export async function guardrailRoutes(
  app: FastifyInstance,
  opts: { guardrails: GuardrailService },
): Promise<void> {
  const { guardrails } = opts;
  const tags = ['Guardrails'];
  app.get(
    '/policies',
    { schema: { tags, operationId: 'listPolicies', summary: 'List policies' } },
    async (req) => guardrails.listPolicies(req.principal.environmentId),
  );
  app.post(
    '/policies',
    { schema: { tags, operationId: 'createPolicy', summary: 'Create a policy', body: PolicyBody } },
    async (req, reply) =>
      reply
        .code(201)
        .send(await guardrails.createPolicy(req.principal.environmentId, req.body as PolicyDefinition)),
  );
  app.get<{ Params: { name: string } }>(
    '/policies/:name',
    { schema: { tags, operationId: 'getPolicy', summary: 'Get a policy', params: NameParams } },
    async (req) => guardrails.getPolicy(req.principal.environmentId, req.params.name),
  );
  app.put<{ Params: { name: string } }>(
    '/policies/:name',
    {
      schema: {
        tags,
        operationId: 'replacePolicy',
        summary: 'Replace a policy',
        params: NameParams,
        body: PolicyBody,
      },
    },
    async (req) =>
      guardrails.replacePolicy(req.principal.environmentId, req.params.name, req.body as PolicyDefinition),
  );
  app.delete<{ Params: { name: string } }>(
    '/policies/:name',
    { schema: { tags, operationId: 'deletePolicy', summary: 'Delete a policy', params: NameParams } },
    async (req, reply) => {
      await guardrails.deletePolicy(req.principal.environmentId, req.params.name);
      return reply.code(204).send();
    },
  );

  app.get(
    '/approvals',
    {
      schema: {
        tags,
        operationId: 'listApprovals',
        summary: 'List approvals, newest first',
        querystring: ApprovalsQuery,
      },
    },
    async (req) =>
      guardrails.listApprovals(
        req.principal.environmentId,
        req.query as {
          status?: ApprovalStatus;
          identifier?: string;
          page_size?: number;
          page_token?: string;
        },
      ),
  );
  app.get<{ Params: { id: string } }>(
    '/approvals/:id',
    { schema: { tags, operationId: 'getApproval', summary: 'Get an approval', params: IdParams } },
    async (req) => guardrails.getApproval(req.principal.environmentId, req.params.id),
  );
  for (const decision of ['approve', 'deny'] as const) {
    app.post<{ Params: { id: string }; Body: { reason?: string } }>(
      `/approvals/:id/${decision}`,
      {
        schema: {
          tags,
          operationId: decision === 'approve' ? 'approveApproval' : 'denyApproval',
          summary: decision === 'approve' ? 'Approve a held call' : 'Deny a held call',
          params: IdParams,
          body: DecisionBody,
        },
      },
      async (req) =>
        guardrails.decide(
          req.principal.environmentId,
          req.params.id,
          decision,
          `client:${req.principal.clientId}`,
          req.body?.reason,
        ),
    );
  }
}
