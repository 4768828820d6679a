import type { FastifyInstance } from 'fastify';
import { grantOfPrincipal, listFilter } from '../../auth/access.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import {
  CreateConnectionBody,
  ListConnectionsQuery,
  UpdateConnectionBody,
} from '../../connections/schemas.js';
import type { ConnectionService } from '../../connections/service.js';

export async function connectionRoutes(
  app: FastifyInstance,
  opts: { connections: ConnectionService; grants: ClientStatusCache },
): Promise<void> {
  const { connections } = opts;
  const nameParams = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 64 } },
    required: ['name'],
  } as const;

  app.post('/connections', { schema: { body: CreateConnectionBody } }, async (req, reply) => {
    const row = await connections.create(req.principal.environmentId, req.body as CreateConnectionBody);
    return reply.code(201).header('location', `/api/v1/connections/${row.name}`).send(connections.view(row));
  });

  app.get('/connections', { schema: { querystring: ListConnectionsQuery } }, async (req) => {
    const { rows, nextPageToken } = await connections.list(req.principal.environmentId, {
      ...(req.query as ListConnectionsQuery),
      names: listFilter(grantOfPrincipal(req.principal, opts.grants)),
    });
    return { data: rows.map((r) => connections.view(r)), next_page_token: nextPageToken };
  });

  app.get<{ Params: { name: string } }>(
    '/connections/:name',
    { schema: { params: nameParams } },
    async (req) =>
      connections.view(
        await connections.get(
          req.principal.environmentId,
          req.params.name,
          listFilter(grantOfPrincipal(req.principal, opts.grants)),
        ),
      ),
  );

  app.patch<{ Params: { name: string } }>(
    '/connections/:name',
    { schema: { params: nameParams, body: UpdateConnectionBody } },
    async (req) =>
      connections.view(
        await connections.update(
          req.principal.environmentId,
          req.params.name,
          req.body as UpdateConnectionBody,
        ),
      ),
  );

  app.delete<{ Params: { name: string } }>(
    '/connections/:name',
    { schema: { params: nameParams } },
    async (req, reply) => {
      await connections.remove(req.principal.environmentId, req.params.name);
      return reply.code(204).send();
    },
  );
}
