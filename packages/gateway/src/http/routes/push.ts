import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TriggerPush } from '../../triggers/push.js';

/**
 * The receiving routes providers push trigger notifications to, under the public URL and without
 * a gateway token: each delivery is authenticated by the provider's own mechanism (in
 * triggers/push.ts) and refused with 401 otherwise. Bodies are read as text, since HubSpot and
 * Notion sign the bytes as sent.
 */
export async function pushRoutes(app: FastifyInstance, opts: { push: TriggerPush }): Promise<void> {
  const { push } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  const raw = (req: FastifyRequest) => (typeof req.body === 'string' ? req.body : '');
  const connectionParams = {
    type: 'object',
    properties: { connection_id: { type: 'string', maxLength: 64 } },
    required: ['connection_id'],
  } as const;

  app.post('/google', async (req, reply) => {
    await push.google(req.headers);
    return reply.code(204).send();
  });

  app.post<{ Querystring: { validationToken?: string } }>(
    '/microsoft',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { validationToken: { type: 'string', maxLength: 4096 } },
        },
      },
    },
    async (req, reply) => {
      // Graph's validation handshake: the token echoed as text/plain, at once.
      const token = req.query.validationToken;
      if (token !== undefined) return reply.code(200).type('text/plain').send(token);
      let body: unknown;
      try {
        body = JSON.parse(raw(req));
      } catch {
        body = undefined;
      }
      await push.microsoft(body);
      return reply.code(202).send();
    },
  );

  app.post<{ Params: { connection_id: string } }>(
    '/hubspot/:connection_id',
    { schema: { params: connectionParams } },
    async (req, reply) => {
      await push.hubspot(req.params.connection_id, {
        method: req.method,
        url: req.url,
        rawBody: raw(req),
        headers: req.headers,
      });
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { connection_id: string } }>(
    '/notion/:connection_id',
    { schema: { params: connectionParams } },
    async (req, reply) => {
      await push.notion(req.params.connection_id, { rawBody: raw(req), headers: req.headers });
      return reply.code(204).send();
    },
  );
}
