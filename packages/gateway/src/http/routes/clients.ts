import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ClientStatusCache } from '../../auth/client-status.js';
import type { GatewayClientService } from '../../auth/gateway-clients.js';
import { ALL_SCOPES, SCOPE_PRESETS } from '../../auth/scopes.js';

const CreateClientBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\x00-\\x1f]+$' }),
    scopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 40 }), {
        maxItems: 40,
        description: `Scopes or presets (${Object.keys(SCOPE_PRESETS).join(', ')}); default: every scope of the creating client. Scopes: ${ALL_SCOPES.join(', ')}.`,
      }),
    ),
    connection_names: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 200,
        description: 'The only connections it may reach (links, tools, proxy); default: all.',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Gateway clients over HTTP (as `portico clients …` does): list, create (the secret is in the
 * response only), revoke (its tokens stop working at once in every process).
 */
export async function clientRoutes(
  app: FastifyInstance,
  opts: { clients: GatewayClientService; grants: ClientStatusCache },
): Promise<void> {
  const { clients } = opts;
  app.get('/clients', { schema: { summary: 'List gateway clients (never their secrets)' } }, async (req) => ({
    data: await clients.list(req.principal.environmentId),
  }));

  app.post(
    '/clients',
    { schema: { summary: 'Create a gateway client; the secret is returned once', body: CreateClientBody } },
    async (req, reply) => {
      const { name, ...options } = req.body as {
        name: string;
        scopes?: string[];
        connection_names?: string[];
      };
      const creator = req.principal.admin
        ? undefined
        : { id: req.principal.clientId, grant: opts.grants.grantOf(req.principal.clientId) };
      const created = await clients.create(req.principal.environmentId, name, options, creator);
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
      await clients.revoke(
        req.principal.environmentId,
        req.params.client_id,
        req.principal.admin ? undefined : { grant: opts.grants.grantOf(req.principal.clientId) },
      );
      return reply.code(204).send();
    },
  );
}
