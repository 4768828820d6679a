import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { grantOfPrincipal, listFilter, requireConnection, requireRecord } from '../../auth/access.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import type { ConnectionService } from '../../connections/service.js';
import {
  type ExecutionQuery,
  type ExecutionService,
  STATS_WINDOWS,
  type StatsWindow,
} from '../../executions/service.js';
import { getProvider, PROVIDER_KEYS, type ProviderKey } from '../../providers/catalog.js';
import { type ExecuteRequest, resultJson, type ToolEngine } from '../../tools/engine.js';
import { formattedJson, TOOL_FORMATS, type ToolFormat } from '../../tools/formats.js';
import { DEFAULT_SEARCH_PAGE_SIZE, MAX_PAGE_SIZE } from '../../tools/search/listing.js';
import type { SearchHit } from '../../tools/search/tool-search.js';
import type { ToolsetService } from '../../toolsets/service.js';
import { callerOf, ExecuteBody, heldBodyFirst } from '../tool-calls/execute.js';

const ListQuery = Type.Object(
  {
    query: Type.Optional(
      Type.String({
        maxLength: 500,
        description:
          'A task in plain words ("send an email to Ann", "list the open pull requests"): the tools are ranked by how well they fit it, best first.',
      }),
    ),
    provider: Type.Optional(Type.Union(PROVIDER_KEYS.map((k) => Type.Literal(k)))),
    connection: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "Only the tools of this connection (its provider's, or its remote MCP server's).",
      }),
    ),
    read_only: Type.Optional(
      Type.Boolean({ description: 'true: only tools that never change data; false: only those that may.' }),
    ),
    tags: Type.Optional(
      Type.Array(Type.String({ maxLength: 200 }), {
        maxItems: 10,
        description:
          'Only tools with every one of these tags (repeat the parameter or separate with commas): specification, compiled, remote-mcp, read-only, writes, destructive, and the provider category (calendar, e-mail, file-storage, …).',
      }),
    ),
    toolset: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "Only this toolset's tools." }),
    ),
    format: Type.Optional(Type.Union(TOOL_FORMATS.map((f) => Type.Literal(f)))),
    page_size: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_SIZE,
        description: `Default: every tool, or ${DEFAULT_SEARCH_PAGE_SIZE} with query.`,
      }),
    ),
    page_token: Type.Optional(
      Type.String({ maxLength: 200, description: 'next_page_token of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);

interface ListQuery {
  query?: string;
  provider?: string;
  connection?: string;
  read_only?: boolean;
  tags?: string[];
  toolset?: string;
  format?: ToolFormat;
  page_size?: number;
  page_token?: string;
}

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

/** Bytes of a listing written at a time (a write per tool would cost a syscall each). */
const LISTING_CHUNK = 64 * 1024;

/**
 * A listing page as JSON text, `{"data":[…], …tail}`, from each tool's definition serialized once
 * (tools/formats.ts formattedJson): a full listing of the compiled tools allocates next to nothing
 * per request. The json_schema format adds each hit's tags and, ranked, its score.
 */
function* listingChunks(
  hits: readonly SearchHit[],
  format: ToolFormat,
  ranked: boolean,
  tail: Record<string, unknown>,
): Generator<string> {
  let chunk = '{"data":[';
  for (let i = 0; i < hits.length; i++) {
    const hit = hits[i]!;
    const json = formattedJson(hit.tool, format);
    const entry =
      format === 'json_schema'
        ? `${json.slice(0, -1)},"tags":${JSON.stringify(hit.tags)}${ranked ? `,"score":${JSON.stringify(hit.score)}` : ''}}`
        : json;
    chunk += i ? `,${entry}` : entry;
    if (chunk.length >= LISTING_CHUNK) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}],${JSON.stringify(tail).slice(1)}`;
}

export async function toolRoutes(
  app: FastifyInstance,
  opts: {
    engine: ToolEngine;
    executions: ExecutionService;
    grants: ClientStatusCache;
    connections: ConnectionService;
    toolsets: ToolsetService;
  },
): Promise<void> {
  const { engine } = opts;

  app.get('/tools', { schema: { querystring: ListQuery } }, async (req, reply) => {
    const query = req.query as ListQuery;
    const { environmentId } = req.principal;
    const format = query.format ?? 'json_schema';
    let connection: { name: string; provider: string } | undefined;
    if (query.connection) {
      requireConnection(grantOfPrincipal(req.principal, opts.grants), query.connection);
      const row = await opts.connections.get(environmentId, query.connection);
      connection = { name: row.name, provider: row.provider };
    }
    const selection = query.toolset ? await opts.toolsets.selection(environmentId, query.toolset) : undefined;
    const listing = await engine.find(environmentId, {
      ...(selection ? { accept: selection.accept, acceptKey: selection.acceptKey } : {}),
      query: query.query,
      provider: query.provider,
      connection,
      readOnly: query.read_only,
      tags: query.tags,
      pageSize: query.page_size,
      pageToken: query.page_token,
    });
    const ranked = Boolean(query.query?.trim());
    const provider = query.provider ? getProvider(query.provider as ProviderKey) : undefined;
    const tail: Record<string, unknown> = { total: listing.total, next_page_token: listing.nextPageToken };
    if (provider && !provider.toolPrefix && !provider.mcp) {
      // An empty list alone would look like a mistake; say where this provider is reached instead.
      tail.notice = `${provider.displayName} is proxy-only: it has no tools. Call its API through /proxy with the connection_name and identifier headers (see docs/guides/proxy.md and docs/providers/${provider.key}.md#proxy).`;
    }
    return reply
      .type('application/json; charset=utf-8')
      .send(Readable.from(listingChunks(listing.hits, format, ranked, tail), { objectMode: false }));
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
      const format = (req.query as { format?: ToolFormat }).format ?? 'json_schema';
      const described = engine.describe(req.params.name, format, environmentId);
      const tool = engine.registry.get(req.params.name, environmentId);
      return format === 'json_schema' && tool
        ? { ...described, tags: engine.search.tagsOf(tool) }
        : described;
    },
  );

  // Most calls are served before Fastify (../tool-calls/fast-path.ts); those it leaves come here.
  app.post(
    '/tools/execute',
    { schema: { body: ExecuteBody }, preParsing: heldBodyFirst },
    async (req, reply) => {
      const result = await engine.execute(
        req.principal.environmentId,
        req.body as ExecuteRequest,
        callerOf(req.principal, grantOfPrincipal(req.principal, opts.grants)),
      );
      return reply.type('application/json; charset=utf-8').send(resultJson(result));
    },
  );

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
