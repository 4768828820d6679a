import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ProxyTokenMintInput, ProxyTokenService } from '../../auth/proxy-tokens.js';

const MintBody = Type.Object(
  {
    connection_name: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The connection the token reaches.',
    }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'The end user whose account the token reaches.',
    }),
    expires_in: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 365 * 24 * 3600, description: 'Seconds; default 30 days.' }),
    ),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/**
 * Minting, listing and revoking proxy tokens (under /api/v1, gateway token required): each reaches
 * one end user's account on one connection through the proxy, with no routing headers.
 */
export async function proxyTokenRoutes(
  app: FastifyInstance,
  opts: { tokens: ProxyTokenService },
): Promise<void> {
  app.post('/proxy/tokens', { schema: { body: MintBody } }, async (req, reply) => {
    const minted = await opts.tokens.mint(req.principal, req.body as ProxyTokenMintInput);
    return reply.code(201).header('cache-control', 'no-store').send(minted);
  });
  app.get('/proxy/tokens', { schema: { querystring: ListQuery } }, async (req) =>
    opts.tokens.list(req.principal.environmentId, req.query as { identifier?: string }),
  );
  app.delete<{ Params: { id: string } }>(
    '/proxy/tokens/:id',
    {
      schema: {
        params: { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] },
      },
    },
    async (req, reply) => {
      await opts.tokens.revoke(req.principal.environmentId, req.params.id);
      return reply.code(204).send();
    },
  );
}
