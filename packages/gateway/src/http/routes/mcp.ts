import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Grant, requireScope } from '../../auth/access.js';
import type { AccessTokenIssuer } from '../../auth/access-tokens.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import { MCP_SCOPE, type McpOAuthService } from '../../auth/mcp-oauth.js';
import {
  MCP_TOKEN_PREFIX,
  type McpScope,
  type McpTokenService,
  type MintInput,
} from '../../auth/mcp-tokens.js';
import { Problem } from '../../errors/problem.js';
import type { EventService } from '../../events/service.js';
import { jsonRpcFault, UnparseableBody } from '../../mcp/jsonrpc.js';
import { ToolListChanges } from '../../mcp/list-changes.js';
import { MCP_MODES, type McpMode } from '../../mcp/meta-tools.js';
import type { OriginPolicy } from '../../mcp/origins.js';
import type { McpServerDeps, McpSession } from '../../mcp/server.js';
import type { ToolsetService } from '../../toolsets/service.js';
import { bearerAuthentication } from '../authenticate.js';
import { browserAccess, preflightRoutes } from '../mcp-browser-access.js';

const MintBody = Type.Object(
  {
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'The end user the token acts for.',
    }),
    connection_names: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description: 'Only these connections (default: all).',
      }),
    ),
    tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        minItems: 1,
        maxItems: 200,
        uniqueItems: true,
        description: 'Only these tools (default: all).',
      }),
    ),
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

/** Minting, listing and revoking per-user MCP tokens (under /api/v1, gateway token required). */
export async function mcpTokenRoutes(app: FastifyInstance, opts: { tokens: McpTokenService }): Promise<void> {
  app.post('/mcp/tokens', { schema: { body: MintBody } }, async (req, reply) => {
    const minted = await opts.tokens.mint(req.principal, req.body as MintInput);
    return reply.code(201).header('cache-control', 'no-store').send(minted);
  });
  app.get('/mcp/tokens', { schema: { querystring: ListQuery } }, async (req) =>
    opts.tokens.list(req.principal.environmentId, req.query as { identifier?: string }),
  );
  app.delete<{ Params: { id: string } }>(
    '/mcp/tokens/:id',
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

declare module 'fastify' {
  interface FastifyRequest {
    mcpScope?: McpScope;
  }
}

/**
 * The MCP SDKs and Portico's MCP servers, loaded at the first MCP request rather than at start:
 * they are about 20 MiB of resident memory a gateway without MCP clients never needs (the v2 SDK
 * about 4 MiB of it). The v1 SDK serves the 2025-era revisions (2025-11-25 and older), the v2 SDK
 * the 2026-07-28 revision.
 */
let mcpModules:
  | Promise<
      [
        typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
        typeof import('../../mcp/server.js'),
        typeof import('../../mcp/modern-server.js'),
      ]
    >
  | undefined;
const loadMcp = () =>
  (mcpModules ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('../../mcp/server.js'),
    import('../../mcp/modern-server.js'),
  ]));

const MCP_BEARER = new RegExp(`^Bearer\\s+(${MCP_TOKEN_PREFIX}[A-Za-z0-9]+)\\s*$`, 'i');

/**
 * The MCP endpoint (Streamable HTTP, stateless): a minted per-user token (or one an MCP client got
 * with OAuth), or the gateway token plus the end user's `identifier` header. /mcp/e/{environment_id}
 * is the same server for one environment's tokens only: the resource its OAuth clients use when
 * /mcp cannot tell their environment (see auth/mcp-oauth.ts). A 401 names the resource's metadata.
 * Browsers are let in from allowed origins only (see mcp/origins.ts).
 */
export async function mcpEndpointRoutes(
  app: FastifyInstance,
  opts: {
    tokens: McpTokenService;
    server: McpServerDeps;
    accessTokens: AccessTokenIssuer;
    clients: ClientStatusCache;
    oauth: McpOAuthService;
    origins: OriginPolicy;
    events: EventService;
    toolsets: ToolsetService;
  },
): Promise<void> {
  app.addHook('onRequest', browserAccess(opts.origins, { refuseForeign: true }));
  preflightRoutes(app, ['/mcp', '/mcp/e/:environment_id', '/mcp/t/:toolset']);
  // Unparseable JSON is the protocol's -32700 to answer, not the HTTP problem other routes send.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (error) {
      done(null, new UnparseableBody((error as Error).message));
    }
  });

  const changes = new ToolListChanges(opts.server.logger);
  await opts.events.onRecorded(() => changes.wake());
  // A remote MCP server's list changed (heard by this replica and listed again).
  opts.server.engine.registry.onChange(() => changes.wake());

  const gatewayAuthentication = bearerAuthentication(opts.accessTokens, opts.clients);
  app.addHook('onRequest', (req, reply, next) => {
    if (req.method === 'OPTIONS') return next();
    const environmentId = (req.params as { environment_id?: string }).environment_id;
    const done = (error?: Error) => {
      if (!error && environmentId && req.mcpScope?.environmentId !== environmentId) {
        error = new Problem('unauthenticated', 'This token is for another environment’s MCP server.', {
          headers: { 'www-authenticate': 'Bearer realm="portico", error="invalid_token"' },
        });
      }
      const resource =
        environmentId && /^[A-Za-z0-9_]{1,64}$/.test(environmentId) ? environmentId : undefined;
      next(error && withResourceMetadata(error, opts.oauth.resourceMetadataUrl(resource)));
    };
    if (req.headers.authorization === undefined) return done(noCredential());
    const minted = MCP_BEARER.exec(req.headers.authorization)?.[1];
    if (!minted) {
      gatewayAuthentication(req, reply, (error) => {
        if (error) return done(error);
        try {
          req.mcpScope = scopeFromHeaders(req, opts.clients.grantOf(req.principal.clientId));
          done();
        } catch (problem) {
          done(problem as Error);
        }
      });
      return;
    }
    opts.tokens.authenticate(minted).then((scope) => {
      if (!scope) {
        done(
          new Problem(
            'unauthenticated',
            'This MCP token is unknown, expired or revoked; ask the application for a new one.',
            {
              headers: { 'www-authenticate': 'Bearer realm="portico", error="invalid_token"' },
            },
          ),
        );
        return;
      }
      req.mcpScope = scope;
      done();
    }, done);
  });

  /** The URL's mode and toolset (/mcp/t/{toolset}), resolved in the token's environment. */
  const sessionOf = async (req: FastifyRequest): Promise<McpSession> => {
    const mode = modeOf(req);
    const name = (req.params as { toolset?: string }).toolset;
    if (name === undefined) return { mode };
    const { toolset, accept, acceptKey } = await opts.toolsets.selection(req.mcpScope!.environmentId, name);
    return { mode, toolset: { name: toolset.name, mode: toolset.mcp_mode, accept, acceptKey } };
  };

  /** The request as the SDK's web-standard transport reads it. */
  const webRequest = (req: FastifyRequest, signal?: AbortSignal) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    return new Request(`http://localhost${req.url}`, {
      method: req.method,
      headers,
      ...(signal ? { signal } : {}),
    });
  };

  /**
   * A POST: a 2026-07-28 request (it carries the revision's per-request envelope; the v2 SDK's own
   * predicate decides) goes to the v2 server, anything else to the v1 server, which negotiates the
   * 2025-era revisions with initialize as before.
   */
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const fault = jsonRpcFault(req.body);
    if (fault) return reply.code(fault.status).type('application/json').send(fault.body);
    const scope = req.mcpScope!;
    const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer }, modern] = await loadMcp();
    if (!(await modern.isLegacyRequest(webRequest(req), req.body))) return serveModern(req, reply, modern);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = createMcpServer(opts.server, scope, req.id, await sessionOf(req));
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(webRequest(req), { parsedBody: req.body });
      return await sendBuffered(reply, response);
    } finally {
      await server.close();
    }
  };

  /**
   * A 2026-07-28 request, on the v2 SDK's per-request handler. A subscriptions/listen request
   * stays open as an event stream: it carries notifications/tools/list_changed whenever the
   * user's tool list changes, as the GET stream does for 2025-era clients.
   */
  const serveModern = async (
    req: FastifyRequest,
    reply: FastifyReply,
    modern: typeof import('../../mcp/modern-server.js'),
  ) => {
    const scope = req.mcpScope!;
    const [, { toolListState }] = await loadMcp();
    const mcp = modern.createModernMcpHandler(opts.server, scope, req.id, await sessionOf(req));
    const listening = (req.body as { method?: unknown }).method === 'subscriptions/listen';
    // Watched from before the stream opens, so a change while it opens is not lost.
    const stop = listening
      ? await changes.watch(
          () => toolListState(opts.server, scope),
          () => mcp.notify.toolsChanged(),
        )
      : undefined;
    const aborted = new AbortController();
    const close = () => {
      stop?.();
      aborted.abort();
      mcp.close().catch(() => {});
    };
    reply.raw.once('close', close);
    const response = await mcp.fetch(webRequest(req, aborted.signal), { parsedBody: req.body });
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return sendBuffered(reply, response);
    }
    sendStream(reply, response);
  };

  /**
   * GET opens the stream of server-initiated messages for 2025-era clients: Portico sends
   * notifications/tools/list_changed on it whenever the user's tool list changes (an account
   * authorized, disconnected or expired), so clients that cache the list see new tools without
   * polling. (A 2026-07-28 client opens subscriptions/listen instead.)
   */
  const stream = async (req: FastifyRequest, reply: FastifyReply) => {
    const scope = req.mcpScope!;
    const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer, toolListState }] =
      await loadMcp();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = createMcpServer(opts.server, scope, req.id, await sessionOf(req));
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest(req));
    if (response.status !== 200 || !response.body) {
      await server.close();
      return sendBuffered(reply, response);
    }
    const stop = await changes.watch(
      () => toolListState(opts.server, scope),
      () => {
        server.sendToolListChanged().catch(() => {});
      },
    );
    const close = () => {
      stop();
      server.close().catch(() => {});
    };
    req.raw.once('close', close);
    sendStream(reply, response);
  };

  // No sessions (stateless): DELETE has nothing to end, and says so with 204 rather than an error,
  // so clients that end their session on close see it succeed.
  const endSession = async (_req: FastifyRequest, reply: FastifyReply) => reply.code(204).send();

  app.post('/mcp', handler);
  app.get('/mcp', stream);
  app.delete('/mcp', endSession);
  const environment = {
    schema: { params: Type.Object({ environment_id: Type.String({ maxLength: 64 }) }) },
  };
  app.post('/mcp/e/:environment_id', environment, handler);
  app.get('/mcp/e/:environment_id', environment, stream);
  app.delete('/mcp/e/:environment_id', environment, endSession);
  // A toolset's own MCP server: the same users and tokens, only the toolset's tools.
  const toolset = { schema: { params: Type.Object({ toolset: Type.String({ maxLength: 64 }) }) } };
  app.post('/mcp/t/:toolset', toolset, handler);
  app.get('/mcp/t/:toolset', toolset, stream);
  app.delete('/mcp/t/:toolset', toolset, endSession);
}

/**
 * How the session offers the provider tools (`?mode=search`: a search tool and a call tool instead
 * of the whole list; see mcp/meta-tools.ts). A mode the server does not know is refused before the
 * protocol starts, so a typo does not silently serve the other mode.
 */
function modeOf(req: FastifyRequest): McpMode | undefined {
  const raw = (req.query as { mode?: unknown } | undefined)?.mode;
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && (MCP_MODES as readonly string[]).includes(raw)) return raw as McpMode;
  throw new Problem('invalid_input', `mode must be one of: ${MCP_MODES.join(', ')} (or left out for full).`, {
    errors: [{ path: '/mode', message: `must be one of: ${MCP_MODES.join(', ')}` }],
  });
}

/**
 * The 401 for a request without any credential: no error code (RFC 6750 §3.1: the client did not
 * try), the scope an MCP client asks its authorization server for, and the two ways to get a token.
 */
function noCredential(): Problem {
  return new Problem(
    'unauthenticated',
    'This MCP server needs a bearer token: an MCP client gets one with OAuth from the authorization server named in the protected resource metadata (see WWW-Authenticate), or the application mints one per user with POST /api/v1/mcp/tokens.',
    { headers: { 'www-authenticate': `Bearer realm="portico", scope="${MCP_SCOPE}"` } },
  );
}

/** A 401 that also names the protected resource metadata (RFC 9728 §5.1), for MCP clients doing OAuth. */
function withResourceMetadata(error: Error, metadataUrl: string): Error {
  if (!(error instanceof Problem) || error.status !== 401) return error;
  let challenge = error.options.headers?.['www-authenticate'] ?? 'Bearer realm="portico"';
  // Which scope to ask for (MCP authorization, scope selection): the client need not guess.
  if (!/\bscope=/.test(challenge)) challenge = `${challenge}, scope="${MCP_SCOPE}"`;
  return new Problem(error.code, error.detail, {
    ...error.options,
    headers: {
      ...error.options.headers,
      'www-authenticate': `${challenge}, resource_metadata="${metadataUrl}"`,
    },
  });
}

function scopeFromHeaders(req: FastifyRequest, grant: Grant): McpScope {
  requireScope(grant, 'tools', 'the MCP server');
  const raw = req.headers.identifier ?? req.headers['x-identifier'];
  const identifier = Array.isArray(raw) ? raw[0] : raw;
  if (!identifier) {
    throw new Problem(
      'missing_header',
      'With a gateway access token, name the end user in the "identifier" header (or mint a per-user token with POST /api/v1/mcp/tokens).',
    );
  }
  return {
    environmentId: req.principal.environmentId,
    identifier,
    connectionNames: grant.connectionNames ? [...grant.connectionNames] : null,
    tools: null,
    grant,
  };
}

/** An SDK's answer as it is: status, headers and the whole body. */
async function sendBuffered(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    reply.header(name, value);
  });
  return reply.send(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
}

/**
 * An SDK's event stream, written by hand so the headers leave at once: the stream may carry
 * nothing for hours, and a client waits for the headers to know its stream is open.
 */
function sendStream(reply: FastifyReply, response: Response): void {
  reply.hijack();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (typeof value === 'string') headers[name] = value;
  }
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  reply.raw.writeHead(response.status, headers);
  reply.raw.flushHeaders();
  Readable.fromWeb(response.body as import('node:stream/web').ReadableStream)
    .on('error', () => reply.raw.destroy())
    .pipe(reply.raw);
}
