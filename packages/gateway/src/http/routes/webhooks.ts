import type { FastifyInstance } from 'fastify';
import {
  CreateWebhookBody,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  UpdateWebhookBody,
} from '../../webhooks/schemas.js';
import type { WebhookService } from '../../webhooks/service.js';

export async function webhookRoutes(app: FastifyInstance, opts: { webhooks: WebhookService }): Promise<void> {
  const { webhooks } = opts;
  const idParams = {
    type: 'object',
    properties: { id: { type: 'string', maxLength: 64 } },
    required: ['id'],
  } as const;
  const retryParams = {
    type: 'object',
    properties: { id: { type: 'string', maxLength: 64 }, event_id: { type: 'string', maxLength: 64 } },
    required: ['id', 'event_id'],
  } as const;

  app.post('/webhooks', { schema: { body: CreateWebhookBody } }, async (req, reply) => {
    const { row, secret } = await webhooks.create(req.principal.environmentId, req.body as CreateWebhookBody);
    // The secret is shown this once: not for caches.
    return reply
      .code(201)
      .header('location', `/api/v1/webhooks/${row.id}`)
      .header('cache-control', 'no-store')
      .send({ ...webhooks.view(row), secret });
  });

  app.get('/webhooks', { schema: { querystring: ListWebhooksQuery } }, async (req) =>
    webhooks.list(req.principal.environmentId, req.query as ListWebhooksQuery),
  );

  app.get<{ Params: { id: string } }>('/webhooks/:id', { schema: { params: idParams } }, async (req) =>
    webhooks.view(await webhooks.get(req.principal.environmentId, req.params.id)),
  );

  app.patch<{ Params: { id: string } }>(
    '/webhooks/:id',
    { schema: { params: idParams, body: UpdateWebhookBody } },
    async (req) =>
      webhooks.view(
        await webhooks.update(req.principal.environmentId, req.params.id, req.body as UpdateWebhookBody),
      ),
  );

  app.delete<{ Params: { id: string } }>(
    '/webhooks/:id',
    { schema: { params: idParams } },
    async (req, reply) => {
      await webhooks.remove(req.principal.environmentId, req.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string } }>(
    '/webhooks/:id/rotate-secret',
    { schema: { params: idParams } },
    async (req, reply) => {
      const { row, secret } = await webhooks.rotateSecret(req.principal.environmentId, req.params.id);
      return reply.header('cache-control', 'no-store').send({ ...webhooks.view(row), secret });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/webhooks/:id/deliveries',
    { schema: { params: idParams, querystring: ListDeliveriesQuery } },
    async (req) =>
      webhooks.deliveries(req.principal.environmentId, req.params.id, req.query as ListDeliveriesQuery),
  );

  app.post<{ Params: { id: string; event_id: string } }>(
    '/webhooks/:id/deliveries/:event_id/retry',
    { schema: { params: retryParams } },
    async (req, reply) =>
      reply
        .code(202)
        .send(await webhooks.retry(req.principal.environmentId, req.params.id, req.params.event_id)),
  );
}
