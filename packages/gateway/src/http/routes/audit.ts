import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ACTOR_TYPES, type AuditQuery, type AuditService } from '../../audit/service.js';

const Filters = {
  actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  actor_type: Type.Optional(Type.Union(ACTOR_TYPES.map((t) => Type.Literal(t)))),
  action: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[a-z0-9_.]+$',
      description: 'An action (connection.created), or a prefix ending with "." (connection.).',
    }),
  ),
  resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  since: Type.Optional(Type.String({ format: 'date-time' })),
  until: Type.Optional(Type.String({ format: 'date-time' })),
};

const ListQuery = Type.Object(
  {
    ...Filters,
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    page_token: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

const ExportQuery = Type.Object(Filters, { additionalProperties: false });

/** The audit log: listed newest first (keyset pages) and exported as JSON lines. */
export async function auditRoutes(app: FastifyInstance, opts: { audit: AuditService }): Promise<void> {
  const { audit } = opts;
  app.get('/audit', { schema: { querystring: ListQuery } }, async (req) =>
    audit.list(req.principal.environmentId, req.query as AuditQuery),
  );

  app.get('/audit/export', { schema: { querystring: ExportQuery } }, async (req, reply) => {
    const entries = audit.export(req.principal.environmentId, req.query as AuditQuery);
    // Read before answering: a bad filter is a problem response, not a broken stream.
    const first = await entries.next();
    async function* lines() {
      if (!first.done) yield `${JSON.stringify(first.value)}\n`;
      for await (const entry of entries) yield `${JSON.stringify(entry)}\n`;
    }
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="portico-audit.jsonl"')
      .send(Readable.from(lines()));
  });
}
