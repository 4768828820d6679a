import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { GatewayClientService } from '../../auth/gateway-clients.js';

const CreateClientBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\x00-\\x1f]+$' }) },
  { additionalProperties: false },
);

/**
 * Gateway clients over HTTP (as `portico clients …` does): list, create (the secret is in the
 * response only), revoke (its tokens stop working at once in every process).
 */
export async function clientRoutes(
  app: FastifyInstance,
  opts: { clients: GatewayClientService },
): Promise<void> {
  const { clients } = opts;
  app.get('/clients', { schema: { summary: 'List gateway clients (never their secrets)' } }, async (req) => ({
    data: await clients.list(req.principal.environmentId),
  }));

  app.post(
    '/clients',
    { schema: { summary: 'Create a gateway client; the secret is returned once', body: CreateClientBody } },
    async (req, reply) => {
      const { name } = req.body as { name: string };
      const created = await clients.create(req.principal.environmentId, name);
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );

  app.delete<{ Params: { client_id: string } }>(
    '/clients/:client_id',
    {
      schema: {
        summary: 'Revoke a gateway client',
        params: {
          type: 'object',
          properties: { client_id: { type: 'string', maxLength: 64 } },
          required: ['client_id'],
        },
      },
    },
    async (req, reply) => {
      await clients.revoke(req.principal.environmentId, req.params.client_id);
      return reply.code(204).send();
    },
  );
}
