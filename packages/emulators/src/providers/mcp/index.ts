import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser, EmulatorModule, OAuthProfile, ProviderContext } from '../../core/types.js';
import { ADDABLE_TOOLS, MCP_TOOLS, type McpToolSpec, type Note, runTool } from './tools.js';

/**
 * A remote MCP server (Streamable HTTP, protocol 2025-06-18) with its own OAuth authorization
 * server, as the MCP authorization specification has them: a 401 naming the protected-resource
 * metadata, that metadata (RFC 9728), the authorization server's (RFC 8414), PKCE S256 required and
 * the resource indicator (RFC 8707) checked. Each variant is a server of its own under
 * `/mcp/{variant}`: `dcr` registers clients dynamically (RFC 7591), `preregistered` knows only the
 * clients registered through the control API, `stepup` is `dcr` whose writing tools need the
 * `notes:write` scope and answer 403 insufficient_scope without it, `cimd` takes client ID
 * metadata documents only (no registration endpoint): a client_id that is an https URL is fetched
 * at the authorize endpoint, and its document must name that URL and the redirect URI asked for.
 * `open` asks for no authorization at all (no 401, one shared notes list, `_notes/anonymous`).
 * `sse` is `dcr` on the older HTTP+SSE transport (2024-11-05) only, at `/mcp/sse/sse`: a POST
 * there answers 405; a GET opens the event stream whose first `endpoint` event names the URL to
 * POST messages to, and every answer arrives on that stream.
 * A variant's tool list grows when a test adds a tool (POST `/mcp/{variant}/_tools/{name}`): each
 * open session is then told `notifications/tools/list_changed` in the event stream of its next
 * request, before that request's answer, as a Streamable HTTP server may.
 */
export type McpVariant = 'dcr' | 'preregistered' | 'stepup' | 'cimd' | 'open' | 'sse';
const VARIANTS: readonly McpVariant[] = ['dcr', 'preregistered', 'stepup', 'cimd', 'open', 'sse'];
/** Whose notes a request of the `open` variant (no authorization) reads and writes. */
const ANONYMOUS = 'anonymous';

/**
 * A client ID metadata document, fetched as an authorization server does (draft-ietf-oauth-client-
 * id-metadata-document): https only, JSON naming the URL itself as client_id, with redirect_uris.
 */
async function clientFromMetadataDocument(clientId: string) {
  if (!clientId.startsWith('https://')) return undefined;
  const response = await fetch(clientId, { headers: { accept: 'application/json' }, redirect: 'error' });
  if (!response.ok) return undefined;
  const document = (await response.json()) as { client_id?: unknown; redirect_uris?: unknown };
  if (document.client_id !== clientId || !Array.isArray(document.redirect_uris)) return undefined;
  return {
    clientId,
    clientSecret: '',
    redirectUris: document.redirect_uris.filter((u): u is string => typeof u === 'string'),
  };
}
export const MCP_PROTOCOL_VERSION = '2025-06-18';

export interface McpState {
  /** Each user's notes, per variant (a server of its own). */
  notes: Map<string, Note[]>;
  /** Open sessions: their variant, and whether they are owed a list_changed notification. */
  sessions: Map<string, { variant: McpVariant; listChanged: boolean }>;
  /** The tools added to each variant's list (ADDABLE_TOOLS). */
  added: Map<McpVariant, Set<string>>;
}

export const mcpUsers: EmulatedUser[] = [
  { id: 'mcp-user-1', name: 'Mae Jemison', email: 'mae.jemison@example.com' },
  { id: 'mcp-user-2', name: 'Alan Turing', email: 'alan.turing@example.com' },
];

const profile: OAuthProfile = {
  authorizePath: '/oauth/authorize',
  tokenPath: '/oauth/token',
  clientAuth: ['client_secret_post', 'client_secret_basic'],
  // Clients of client ID metadata documents have no secret: PKCE stands in for one.
  publicClients: true,
  resolveClient: clientFromMetadataDocument,
  tokenBodyFormats: ['form'],
  pkce: 'required',
  scopeSeparator: ' ',
  providerName: 'Remote MCP server',
  accessTokenTtlSeconds: 3600,
  refreshTokens: 'rotate',
  validateAuthorizeRequest(params) {
    // RFC 8707: an MCP client names the server its token is for.
    if (!params.resource || !/\/mcp\/((dcr|preregistered|stepup|cimd)\/mcp|sse)$/.test(params.resource))
      return 'resource must name this MCP server (RFC 8707 resource indicator).';
    return null;
  },
  tokenResponse(issue, ctx) {
    return {
      access_token: issue.access.token,
      token_type: 'Bearer',
      ...(issue.access.expiresAt !== null
        ? { expires_in: Math.max(0, Math.round((issue.access.expiresAt - ctx.clock()) / 1000)) }
        : {}),
      ...(issue.refreshToken !== undefined ? { refresh_token: issue.refreshToken } : {}),
      scope: issue.grant.scopes.join(' '),
    };
  },
  tokenError(kind, description) {
    return {
      status: kind === 'invalid_client' ? 401 : 400,
      body: { error: kind, error_description: description },
    };
  },
  tokenPrefix: { access: 'mcp_at_', refresh: 'mcp_rt_', code: 'mcp_code_' },
};

function variantOf(req: FastifyRequest): McpVariant | undefined {
  const variant = (req.params as { variant?: string }).variant;
  return VARIANTS.includes(variant as McpVariant) ? (variant as McpVariant) : undefined;
}

function urls(ctx: ProviderContext, req: FastifyRequest, variant: McpVariant) {
  const base = ctx.publicBase(req);
  return {
    base,
    issuer: `${base}/${variant}`,
    // The older transport's server has two URLs (the stream, the messages): the resource is their parent.
    resource: variant === 'sse' ? `${base}/sse` : `${base}/${variant}/mcp`,
    resourceMetadata: `${base}/${variant}/.well-known/oauth-protected-resource`,
  };
}

/** The variant's tools: the base list and the tools a test added. */
function listedTools(state: McpState, variant: McpVariant): McpToolSpec[] {
  const added = state.added.get(variant);
  return added ? [...MCP_TOOLS, ...ADDABLE_TOOLS.filter((t) => added.has(t.name))] : MCP_TOOLS;
}

function rpcError(id: unknown, code: number, message: string) {
  return { jsonrpc: '2.0', id: id ?? null, error: { code, message } };
}

export const mcpEmulator: EmulatorModule<McpState> = {
  key: 'mcp',
  prefix: '/mcp',
  users: mcpUsers,
  oauth: profile,
  createState() {
    return { notes: new Map(), sessions: new Map(), added: new Map() };
  },
  registerRoutes(app, ctx, getState) {
    const unknownVariant = (reply: FastifyReply) =>
      reply.code(404).send({ error: 'not_found', error_description: `Variants: ${VARIANTS.join(', ')}.` });

    app.get('/:variant/.well-known/oauth-protected-resource', async (req, reply) => {
      const variant = variantOf(req);
      if (!variant) return unknownVariant(reply);
      const u = urls(ctx, req, variant);
      return {
        resource: u.resource,
        authorization_servers: [u.issuer],
        scopes_supported: ['notes:read', 'notes:write'],
        bearer_methods_supported: ['header'],
      };
    });

    const asMetadata = async (req: FastifyRequest, reply: FastifyReply) => {
      const variant = variantOf(req);
      if (!variant) return unknownVariant(reply);
      const u = urls(ctx, req, variant);
      return {
        issuer: u.issuer,
        authorization_endpoint: `${u.base}${profile.authorizePath}`,
        token_endpoint: `${u.base}${profile.tokenPath}`,
        ...(variant === 'preregistered' || variant === 'cimd'
          ? {}
          : { registration_endpoint: `${u.issuer}/register` }),
        ...(variant === 'cimd' ? { client_id_metadata_document_supported: true } : {}),
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported:
          variant === 'cimd' ? ['none'] : ['client_secret_post', 'client_secret_basic'],
        scopes_supported: ['notes:read', 'notes:write'],
      };
    };
    app.get('/:variant/.well-known/oauth-authorization-server', asMetadata);
    // An issuer with a path has its RFC 8414 document at the origin's root, outside this emulator's
    // prefix; clients find it as OpenID Connect discovery appends it, which must then be complete.
    app.get('/:variant/.well-known/openid-configuration', async (req, reply) => {
      const metadata = await asMetadata(req, reply);
      if (!metadata || typeof metadata !== 'object' || !('issuer' in metadata)) return metadata;
      return {
        ...metadata,
        jwks_uri: `${metadata.issuer}/jwks`,
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      };
    });
    app.get('/:variant/jwks', async () => ({ keys: [] }));

    app.post('/:variant/register', async (req, reply) => {
      const variant = variantOf(req);
      if (!variant || variant === 'preregistered' || variant === 'cimd') return unknownVariant(reply);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const redirectUris = body.redirect_uris;
      if (
        !Array.isArray(redirectUris) ||
        redirectUris.length === 0 ||
        !redirectUris.every((u) => typeof u === 'string' && /^https?:\/\//.test(u))
      ) {
        return reply.code(400).send({
          error: 'invalid_redirect_uri',
          error_description: 'redirect_uris must list http(s) URLs.',
        });
      }
      const clientId = `mcp-client-${ctx.randomId(8)}`;
      const clientSecret = ctx.randomId(24);
      ctx.registerClient({ clientId, clientSecret, redirectUris: redirectUris as string[] });
      return reply.code(201).send({
        client_id: clientId,
        client_secret: clientSecret,
        client_id_issued_at: Math.floor(ctx.clock() / 1000),
        client_secret_expires_at: 0,
        redirect_uris: redirectUris,
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        ...(typeof body.client_name === 'string' ? { client_name: body.client_name } : {}),
      });
    });

    // What a test reads back: a user's notes on one variant, never through MCP.
    app.get('/:variant/_notes/:userId', async (req, reply) => {
      const variant = variantOf(req);
      if (!variant) return unknownVariant(reply);
      return { notes: getState().notes.get(`${variant}:${(req.params as { userId: string }).userId}`) ?? [] };
    });

    // A test changes a variant's tool list; the server tells every open session.
    app.post('/:variant/_tools/:name', async (req, reply) => {
      const variant = variantOf(req);
      if (!variant) return unknownVariant(reply);
      const name = (req.params as { name: string }).name;
      if (!ADDABLE_TOOLS.some((t) => t.name === name)) {
        return reply.code(404).send({
          error: 'not_found',
          error_description: `Tools to add: ${ADDABLE_TOOLS.map((t) => t.name).join(', ')}.`,
        });
      }
      const state = getState();
      if (!state.added.has(variant)) state.added.set(variant, new Set());
      state.added.get(variant)!.add(name);
      for (const session of state.sessions.values())
        if (session.variant === variant) session.listChanged = true;
      return { tools: listedTools(state, variant).map((t) => t.name) };
    });

    // The HTTP+SSE transport (2024-11-05) of the `sse` variant: one event stream per session.
    const streams = new Map<string, FastifyReply>();
    const unauthorized = (req: FastifyRequest, reply: FastifyReply, reason: string) => {
      const u = urls(ctx, req, 'sse');
      const error = reason === 'missing' ? '' : ', error="invalid_token"';
      return reply
        .code(401)
        .header('www-authenticate', `Bearer resource_metadata="${u.resourceMetadata}"${error}`)
        .send(rpcError(null, -32001, 'Unauthorized'));
    };
    app.post('/sse/sse', async (_req, reply) =>
      reply
        .code(405)
        .header('allow', 'GET')
        .send({ error: 'This server speaks the HTTP+SSE transport: GET this URL.' }),
    );
    app.get('/sse/sse', async (req, reply) => {
      const auth = ctx.authenticate(req);
      if (!auth.ok) return unauthorized(req, reply, auth.reason);
      const id = ctx.randomId(16);
      streams.set(id, reply);
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      reply.raw.write(
        `event: endpoint\ndata: ${ctx.publicBase(req).replace(/^https?:\/\/[^/]+/, '')}/sse/messages?session_id=${id}\n\n`,
      );
      reply.raw.on('close', () => streams.delete(id));
    });
    app.post('/sse/messages', async (req, reply) => {
      const auth = ctx.authenticate(req);
      if (!auth.ok) return unauthorized(req, reply, auth.reason);
      const stream = streams.get(String((req.query as { session_id?: unknown }).session_id));
      if (!stream) return reply.code(404).send({ error: 'No such session: open the event stream first.' });
      const message = (req.body ?? {}) as {
        id?: unknown;
        method?: unknown;
        params?: Record<string, unknown>;
      };
      const answer = async (): Promise<unknown> => {
        switch (message.method) {
          case 'initialize':
            return {
              protocolVersion: '2024-11-05',
              capabilities: { tools: {} },
              serverInfo: { name: 'portico-emulated-mcp-sse', version: '1.0.0' },
            };
          case 'ping':
            return {};
          case 'tools/list':
            return { tools: MCP_TOOLS.map(({ scope: _scope, ...tool }) => tool) };
          case 'tools/call': {
            const name = String(message.params?.name);
            const key = `sse:${auth.user.id}`;
            const state = getState();
            if (!state.notes.has(key)) state.notes.set(key, []);
            const args = (message.params?.arguments ?? {}) as Record<string, unknown>;
            return (
              (await runTool(state.notes.get(key)!, name, args, () => `note_${ctx.randomId(6)}`)) ?? {
                content: [{ type: 'text', text: `Unknown tool: ${name}` }],
                isError: true,
              }
            );
          }
          default:
            return undefined;
        }
      };
      if (message.id !== undefined) {
        const result = await answer();
        const body =
          result === undefined
            ? rpcError(message.id, -32601, `Method not found: ${String(message.method)}`)
            : { jsonrpc: '2.0', id: message.id, result };
        stream.raw.write(`event: message\ndata: ${JSON.stringify(body)}\n\n`);
      }
      return reply.code(202).send();
    });

    app.get('/:variant/mcp', async (_req, reply) =>
      reply
        .code(405)
        .header('allow', 'POST')
        .send(rpcError(null, -32000, 'This server offers no SSE stream.')),
    );

    app.post('/:variant/mcp', async (req, reply) => {
      const variant = variantOf(req);
      if (!variant) return unknownVariant(reply);
      const u = urls(ctx, req, variant);
      const checked = ctx.authenticate(req);
      const auth =
        variant === 'open' && !checked.ok
          ? ({ ok: true, user: { id: ANONYMOUS }, token: { scopes: [] as string[] } } as const)
          : checked;
      if (!auth.ok) {
        const error = auth.reason === 'missing' ? '' : ', error="invalid_token"';
        return reply
          .code(401)
          .header('www-authenticate', `Bearer resource_metadata="${u.resourceMetadata}"${error}`)
          .send(rpcError(null, -32001, 'Unauthorized'));
      }
      const state = getState();
      const message = (req.body ?? {}) as {
        id?: unknown;
        method?: unknown;
        params?: Record<string, unknown>;
      };
      const sessionId = req.headers['mcp-session-id'];
      if (typeof sessionId === 'string' && !state.sessions.has(sessionId))
        return reply.code(404).send(rpcError(message.id, -32001, 'Session not found'));
      if (typeof message.method !== 'string')
        return reply.code(400).send(rpcError(message.id, -32600, 'Invalid Request'));
      if (message.id === undefined) return reply.code(202).send();
      const method = message.method;
      const session = typeof sessionId === 'string' ? state.sessions.get(sessionId) : undefined;
      const streams = String(req.headers.accept ?? '').includes('text/event-stream');

      /** The JSON-RPC answer, as JSON or as an event stream, after a notification the session is owed. */
      const send = (answer: unknown, stream = false) => {
        const owed = session?.listChanged === true && streams;
        if (!owed && !(stream && streams)) return reply.send(answer);
        if (session) session.listChanged = false;
        const notice = owed
          ? `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`
          : '';
        return reply
          .header('content-type', 'text/event-stream')
          .send(`${notice}event: message\ndata: ${JSON.stringify(answer)}\n\n`);
      };

      switch (method) {
        case 'initialize': {
          const id = ctx.randomId(16);
          state.sessions.set(id, { variant, listChanged: false });
          return reply.header('mcp-session-id', id).send({
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: MCP_PROTOCOL_VERSION,
              capabilities: { tools: { listChanged: true } },
              serverInfo: { name: `portico-emulated-mcp-${variant}`, version: '1.0.0' },
            },
          });
        }
        case 'ping':
          return send({ jsonrpc: '2.0', id: message.id, result: {} });
        case 'tools/list':
          return send({
            jsonrpc: '2.0',
            id: message.id,
            result: { tools: listedTools(state, variant).map(({ scope: _scope, ...tool }) => tool) },
          });
        case 'tools/call': {
          const name = message.params?.name;
          const spec = listedTools(state, variant).find((t) => t.name === name);
          if (!spec) return send(rpcError(message.id, -32602, `Unknown tool: ${String(name)}`));
          if (variant === 'stepup' && !auth.token.scopes.includes(spec.scope)) {
            const wanted = [...new Set([...auth.token.scopes, spec.scope])].join(' ');
            return reply
              .code(403)
              .header(
                'www-authenticate',
                `Bearer error="insufficient_scope", scope="${wanted}", resource_metadata="${u.resourceMetadata}"`,
              )
              .send(rpcError(message.id, -32001, `${spec.name} needs the ${spec.scope} scope.`));
          }
          const key = `${variant}:${auth.user.id}`;
          if (!state.notes.has(key)) state.notes.set(key, []);
          const args = (message.params?.arguments ?? {}) as Record<string, unknown>;
          const result = await runTool(
            state.notes.get(key)!,
            spec.name,
            args,
            () => `note_${ctx.randomId(6)}`,
          );
          // Tool calls answer as an SSE stream where the client takes one, as servers may.
          return send({ jsonrpc: '2.0', id: message.id, result }, true);
        }
        default:
          return send(rpcError(message.id, -32601, `Method not found: ${method}`));
      }
    });
  },
  sendAuthError(reply) {
    return reply.code(401).send({ error: 'invalid_token' });
  },
  sendNotFound(reply, req) {
    return reply
      .code(404)
      .send({ error: 'not_found', error_description: `No route ${req.method} ${req.url}.` });
  },
};
