import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { grantOfPrincipal, listFilter, newAccountRefusal, requireRecord } from '../../auth/access.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import {
  type ExecutionQuery,
  type ExecutionService,
  STATS_WINDOWS,
  type StatsWindow,
} from '../../executions/service.js';
import { getProvider, PROVIDER_KEYS, type ProviderKey } from '../../providers/catalog.js';
import type { ExecuteRequest, ToolEngine } from '../../tools/engine.js';
import { formatTool, TOOL_FORMATS, type ToolFormat } from '../../tools/formats.js';

const ExecuteBody = Type.Object(
  {
    tool_name: Type.String({ minLength: 1, maxLength: 100 }),
    identifier: Type.String({ minLength: 1, maxLength: 256 }),
    connection_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    tool_input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    schema_version: Type.Optional(Type.String({ maxLength: 20 })),
    tool_version: Type.Optional(Type.String({ maxLength: 20 })),
    upstream_version: Type.Optional(Type.String({ maxLength: 40 })),
    approval_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Runs a call a policy held, once approved: the approved input, once.',
      }),
    ),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    provider: Type.Optional(Type.Union(PROVIDER_KEYS.map((k) => Type.Literal(k)))),
    format: Type.Optional(Type.Union(TOOL_FORMATS.map((f) => Type.Literal(f)))),
  },
  { additionalProperties: false },
);

const ExecutionsQuery = Type.Object(
  {
    tool_name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    status: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('error')])),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'an RFC 3339 date-time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'an RFC 3339 date-time' })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    page_token: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

export async function toolRoutes(
  app: FastifyInstance,
  opts: { engine: ToolEngine; executions: ExecutionService; grants: ClientStatusCache },
): Promise<void> {
  const { engine } = opts;

  app.get('/tools', { schema: { querystring: ListQuery } }, async (req) => {
    const query = req.query as { provider?: string; format?: ToolFormat };
    const { environmentId } = req.principal;
    await engine.prepare(environmentId);
    const tools = engine.list({ environmentId, ...(query.provider ? { provider: query.provider } : {}) });
    const data = tools.map((t) => formatTool(t, query.format ?? 'json_schema'));
    const provider = query.provider ? getProvider(query.provider as ProviderKey) : undefined;
    if (provider && !provider.toolPrefix && !provider.mcp) {
      // An empty list alone would look like a mistake; say where this provider is reached instead.
      return {
        data,
        notice: `${provider.displayName} is proxy-only: it has no tools. Call its API through /proxy with the connection_name and identifier headers (see the README's Proxy section).`,
      };
    }
    return { data };
  });

  app.get<{ Params: { name: string } }>(
    '/tools/:name',
    {
      schema: {
        querystring: Type.Object({ format: ListQuery.properties.format }, { additionalProperties: false }),
      },
    },
    async (req) => {
      const { environmentId } = req.principal;
      if (!engine.registry.get(req.params.name, environmentId))
        await engine.prepare(environmentId, req.params.name);
      return engine.describe(
        req.params.name,
        (req.query as { format?: ToolFormat }).format ?? 'json_schema',
        environmentId,
      );
    },
  );

  app.post('/tools/execute', { schema: { body: ExecuteBody } }, async (req) => {
    const grant = grantOfPrincipal(req.principal, opts.grants);
    return engine.execute(req.principal.environmentId, req.body as ExecuteRequest, {
      id: req.principal.admin ? `admin:${req.principal.clientId}` : `client:${req.principal.clientId}`,
      connectionNames: grant.connectionNames,
      refuseNewAccount: newAccountRefusal(grant),
    });
  });

  app.get('/executions', { schema: { querystring: ExecutionsQuery } }, async (req) =>
    opts.executions.list(req.principal.environmentId, {
      ...(req.query as ExecutionQuery),
      connection_names: listFilter(grantOfPrincipal(req.principal, opts.grants)),
    }),
  );

  app.get(
    '/executions/stats',
    {
      schema: {
        summary: 'Executions per hour by outcome, top error codes, p50/p95 duration per provider',
        querystring: Type.Object(
          {
            window: Type.Optional(
              Type.Union(
                Object.keys(STATS_WINDOWS).map((w) => Type.Literal(w)),
                { description: 'the last 24 hours (default) or 7 days' },
              ),
            ),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req) =>
      opts.executions.stats(
        req.principal.environmentId,
        (req.query as { window?: StatsWindow }).window ?? '24h',
      ),
  );

  app.get<{ Params: { id: string } }>('/executions/:id', async (req) =>
    requireRecord(
      grantOfPrincipal(req.principal, opts.grants),
      (await opts.executions.get(req.principal.environmentId, req.params.id)) as {
        connection_name?: string | null;
      },
      () => opts.executions.notFound(req.params.id),
    ),
  );
}
