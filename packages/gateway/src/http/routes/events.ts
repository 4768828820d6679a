import type { FastifyInstance } from 'fastify';
import { type EventService, ListEventsQuery } from '../../events/service.js';

export async function eventRoutes(app: FastifyInstance, opts: { events: EventService }): Promise<void> {
  app.get('/events', { schema: { querystring: ListEventsQuery } }, async (req) =>
    opts.events.list(req.principal.environmentId, req.query as ListEventsQuery),
  );
}
