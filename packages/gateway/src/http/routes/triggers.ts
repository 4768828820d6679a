import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantOfPrincipal, listFilter, requireConnection, requireRecord } from '../../auth/access.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import { CreateTriggerBody, ListTriggersQuery, UpdateTriggerBody } from '../../triggers/schemas.js';
import type { TriggerService } from '../../triggers/service.js';

export async function triggerRoutes(
  app: FastifyInstance,
  opts: { triggers: TriggerService; grants: ClientStatusCache },
): Promise<void> {
  const { triggers } = opts;
  const grantOf = (req: FastifyRequest) => grantOfPrincipal(req.principal, opts.grants);
  /** The trigger with this id, answered as missing when its connection is out of the caller's reach. */
  const reachable = async (req: FastifyRequest, id: string) => {
    const row = await triggers.get(req.principal.environmentId, id);
    requireRecord(grantOf(req), { connection_name: row.connection_name }, () => triggers.notFound(id));
    return row;
  };
  const idParams = {
    type: 'object',
    properties: { id: { type: 'string', maxLength: 64 } },
    required: ['id'],
  } as const;
  const nameParams = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 200 } },
    required: ['name'],
  } as const;

  app.get('/trigger-types', async () => triggers.types());

  app.get<{ Params: { name: string } }>(
    '/trigger-types/:name',
    { schema: { params: nameParams } },
    async (req) => triggers.type(req.params.name),
  );

  app.post('/triggers', { schema: { body: CreateTriggerBody } }, async (req, reply) => {
    const body = req.body as CreateTriggerBody;
    requireConnection(grantOf(req), body.connection_name);
    const row = await triggers.create(req.principal.environmentId, body);
    return reply.code(201).header('location', `/api/v1/triggers/${row.id}`).send(triggers.view(row));
  });

  app.get('/triggers', { schema: { querystring: ListTriggersQuery } }, async (req) => {
    const query = req.query as ListTriggersQuery;
    return triggers.list(req.principal.environmentId, {
      ...query,
      connection_names: listFilter(grantOf(req), query.connection_name),
    });
  });

  app.get(
    '/triggers/summary',
    { schema: { querystring: { type: 'object', properties: {}, additionalProperties: false } } },
    async (req) => triggers.summary(req.principal.environmentId, listFilter(grantOf(req))),
  );

  app.get<{ Params: { id: string } }>('/triggers/:id', { schema: { params: idParams } }, async (req) =>
    triggers.view(await reachable(req, req.params.id)),
  );

  app.patch<{ Params: { id: string } }>(
    '/triggers/:id',
    { schema: { params: idParams, body: UpdateTriggerBody } },
    async (req) => {
      await reachable(req, req.params.id);
      return triggers.view(
        await triggers.update(req.principal.environmentId, req.params.id, req.body as UpdateTriggerBody),
      );
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/triggers/:id',
    { schema: { params: idParams } },
    async (req, reply) => {
      await reachable(req, req.params.id);
      await triggers.remove(req.principal.environmentId, req.params.id);
      return reply.code(204).send();
    },
  );
}
