import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { grantOfPrincipal, requireConnection } from '../../auth/access.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import {
  ToolsetBody,
  type ToolsetChange,
  type ToolsetDefinition,
  ToolsetPatch,
} from '../../toolsets/definition.js';
import type { ToolsetService } from '../../toolsets/service.js';

const NameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });
const ListQuery = Type.Object(
  {
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** Toolsets (named sets of tools) of the caller's environment, under /api/v1. */
export async function toolsetRoutes(
  app: FastifyInstance,
  opts: { toolsets: ToolsetService; grants: ClientStatusCache },
): Promise<void> {
  const { toolsets } = opts;
  /** A client limited to some connections names only those in a toolset. */
  const reach = (
    principal: Parameters<typeof grantOfPrincipal>[0],
    connections: readonly string[] | null | undefined,
  ) => {
    const grant = grantOfPrincipal(principal, opts.grants);
    for (const connection of connections ?? []) requireConnection(grant, connection);
  };

  app.post('/toolsets', { schema: { body: ToolsetBody } }, async (req, reply) => {
    const body = req.body as ToolsetDefinition;
    reach(req.principal, body.connections);
    const view = await toolsets.create(req.principal.environmentId, body);
    return reply.code(201).header('location', `/api/v1/toolsets/${view.name}`).send(view);
  });
  app.get('/toolsets', { schema: { querystring: ListQuery } }, async (req) =>
    toolsets.list(req.principal.environmentId, req.query as { page_size?: number; page_token?: string }),
  );
  app.get<{ Params: { name: string } }>('/toolsets/:name', { schema: { params: NameParams } }, async (req) =>
    toolsets.get(req.principal.environmentId, req.params.name),
  );
  app.patch<{ Params: { name: string } }>(
    '/toolsets/:name',
    { schema: { params: NameParams, body: ToolsetPatch } },
    async (req) => {
      const change = req.body as ToolsetChange;
      reach(req.principal, change.connections);
      return toolsets.update(req.principal.environmentId, req.params.name, change);
    },
  );
  app.delete<{ Params: { name: string } }>(
    '/toolsets/:name',
    { schema: { params: NameParams } },
    async (req, reply) => {
      await toolsets.delete(req.principal.environmentId, req.params.name);
      return reply.code(204).send();
    },
  );
}
