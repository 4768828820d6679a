import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ClientStatusCache } from '../../auth/client-status.js';
import { createGatewayClient, listClients, revokeClient } from '../../auth/gateway-clients.js';
import { Problem } from '../../errors/problem.js';
import type { Database } from '../../store/db.js';

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
  opts: { db: Database; clients: ClientStatusCache },
): Promise<void> {
  const { db } = opts;
  const ofEnvironment = async (environmentId: string) =>
    (await listClients(db)).filter((c) => c.environment_id === environmentId);

  app.get('/clients', { schema: { summary: 'List gateway clients (never their secrets)' } }, async (req) => ({
    data: await ofEnvironment(req.principal.environmentId),
  }));

  app.post(
    '/clients',
    { schema: { summary: 'Create a gateway client; the secret is returned once', body: CreateClientBody } },
    async (req, reply) => {
      const { name } = req.body as { name: string };
      const client = await createGatewayClient(db, req.principal.environmentId, name);
      const created = (await ofEnvironment(req.principal.environmentId)).find(
        (c) => c.client_id === client.client_id,
      );
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...created, client_secret: client.client_secret });
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
      const { client_id: id } = req.params;
      const client = (await ofEnvironment(req.principal.environmentId)).find((c) => c.client_id === id);
      if (!client || client.revoked_at) {
        throw new Problem(
          'client_not_found',
          `No active gateway client ${id}; GET /api/v1/clients lists them (revoked ones have revoked_at set).`,
        );
      }
      await revokeClient(db, id);
      opts.clients.forget(id);
      return reply.code(204).send();
    },
  );
}
