import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import formbody from '@fastify/formbody';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import type { AccountService } from '../accounts/service.js';
import type { AuditService } from '../audit/service.js';
import type { AccessTokenIssuer } from '../auth/access-tokens.js';
import type { ClientStatusCache } from '../auth/client-status.js';
import type { GatewayClientService } from '../auth/gateway-clients.js';
import type { McpOAuthService } from '../auth/mcp-oauth.js';
import type { McpTokenService } from '../auth/mcp-tokens.js';
import type { ProxyTokenService } from '../auth/proxy-tokens.js';
import type { AuthorizationService } from '../authorization/service.js';
import type { ProviderCatalogService } from '../connections/providers.js';
import type { ConnectionService } from '../connections/service.js';
import type { AdminService } from '../dashboard/admins.js';
import { PROBLEM_CONTENT_TYPE, Problem } from '../errors/problem.js';
import type { EventService } from '../events/service.js';
import type { ExecutionService } from '../executions/service.js';
import type { GrpcDeps } from '../grpc/server.js';
import type { GuardrailService } from '../guardrails/service.js';
import { deferredChildLogger, loggedPath, requestLineWriter } from '../logging/logger.js';
import type { OriginPolicy } from '../mcp/origins.js';
import { familyOf, type GatewayMetrics } from '../metrics/metrics.js';
import { PROXY_PREFIX } from '../proxy/path.js';
import { hasBody, type ProxyService } from '../proxy/service.js';
import { SANDBOX_PREFIX, type Sandbox } from '../sandbox/sandbox.js';
import type { ToolEngine } from '../tools/engine.js';
import type { ToolsetService } from '../toolsets/service.js';
import type { Tracing } from '../tracing/tracing.js';
import type { TriggerPush } from '../triggers/push.js';
import type { TriggerService } from '../triggers/service.js';
import { unsafeInput } from '../validation/text-safety.js';
import { bodyAjv, DeferredValidators, queryAjv, summarize } from '../validation/validator.js';
import type { WebhookService } from '../webhooks/service.js';
import { auditHooks } from './audit.js';
import {
  bearerAuthentication,
  bearerPrincipal,
  connectionAuthorization,
  knownPrincipal,
  proxyAuthentication,
  scopeAuthorization,
} from './authenticate.js';
import { adminAccountRoutes } from './dashboard/admins-routes.js';
import { dashboardPages } from './dashboard/pages.js';
import { adminSessionRoutes } from './dashboard/session-routes.js';
import {
  answerError,
  answerErrorRaw,
  clientErrorHandler,
  loggedAsFailed,
  rawProblemResponse,
  registerProblemHandlers,
} from './errors.js';
import { type ConnectionLimits, serveAllProtocols, trustSession } from './listener.js';
import { registerApiDescription } from './openapi.js';
import { htmlPageHeaders } from './page-headers.js';
import type { ProxyBodyLimits } from './proxy/body.js';
import { fastProxy } from './proxy/fast-path.js';
import { proxyRoutes } from './proxy/route.js';
import { BodyRates, closeIfAnsweredEarly } from './request-body.js';
import { approvalLinkRoutes } from './routes/approval-links.js';
import { auditRoutes } from './routes/audit.js';
import { clientRoutes } from './routes/clients.js';
import { connectedAccountRoutes } from './routes/connected-accounts.js';
import { connectionRoutes } from './routes/connections.js';
import { environmentRoutes } from './routes/environment.js';
import { eventRoutes } from './routes/events.js';
import { guardrailRoutes } from './routes/guardrails.js';
import { healthRoutes, type StoreReadiness } from './routes/health.js';
import { hostedFlowRoutes } from './routes/hosted-flow.js';
import { mcpEndpointRoutes, mcpTokenRoutes } from './routes/mcp.js';
import { mcpOAuthApiRoutes, mcpOAuthRoutes } from './routes/mcp-oauth.js';
import { metricsRoutes } from './routes/metrics.js';
import { providerRoutes } from './routes/providers.js';
import { proxyTokenRoutes } from './routes/proxy-tokens.js';
import { pushRoutes } from './routes/push.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { tokenRoutes } from './routes/token.js';
import { toolRoutes } from './routes/tools.js';
import { toolsetRoutes } from './routes/toolsets.js';
import { triggerRoutes } from './routes/triggers.js';
import { webhookRoutes } from './routes/webhooks.js';
import { ExecuteBody } from './tool-calls/execute.js';
import { fastToolCalls } from './tool-calls/fast-path.js';
import { traceRequests } from './tracing.js';
import { PORTICO_VERSION } from './version.js';

export interface AppServices {
  /** The store, as far as /readyz needs it (ping, listener, kind). */
  readiness: StoreReadiness;
  tokens: AccessTokenIssuer;
  connections: ConnectionService;
  providers: ProviderCatalogService;
  accounts: AccountService;
  authorization: AuthorizationService;
  engine: ToolEngine;
  executions: ExecutionService;
  proxy: ProxyService;
  events: EventService;
  webhooks: WebhookService;
  /** Trigger subscriptions: provider changes delivered as events. */
  triggers: TriggerService;
  triggerPush: TriggerPush;
  sandbox: Sandbox;
  clients: ClientStatusCache;
  gatewayClients: GatewayClientService;
  mcpTokens: McpTokenService;
  /** Proxy tokens: one connection and end user each, for provider SDKs with only a token option. */
  proxyTokens: ProxyTokenService;
  /** Policies and approvals on tool calls. */
  guardrails: GuardrailService;
  /** Named sets of tools: listings, adapters and MCP URLs of their own take them. */
  toolsets: ToolsetService;
  /** OAuth for MCP clients: metadata, registration, authorization, tokens. */
  mcpOAuth: McpOAuthService;
  admins: AdminService;
  /** The audit log: every change made through the API, sign-ins, CLI actions. */
  audit: AuditService;
  metrics: GatewayMetrics;
}

export interface AppOptions {
  logger: Logger;
  bodyLimitBytes: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Slowest a streamed body may arrive, averaged over each body timeout (PORTICO_BODY_MIN_BYTES_PER_SEC). */
  bodyMinBytesPerSec: number;
  /** What one client address, and everyone together, may hold open. */
  connections: ConnectionLimits;
  /** Largest proxied body held for a replay after a 401 (PORTICO_PROXY_REPLAY_LIMIT). */
  proxyReplayLimitBytes: number;
  services: AppServices;
  /** Certificate and key when Portico terminates TLS itself (PORTICO_TLS_CERT / PORTICO_TLS_KEY). */
  tls?: { cert: string; key: string } | undefined;
  /** Session cookies get the Secure attribute (the public URL is https). */
  secureCookies: boolean;
  /** Browser origins allowed at /mcp, and the size of its list pages. */
  mcp: { origins: OriginPolicy; pageSize: number };
  /** Bearer token guarding GET /metrics; without it /metrics is not served here. */
  metricsToken?: string;
  /** Mounts extra plugins at the root (the sandbox emulators). */
  mount?: (app: FastifyInstance) => Promise<void>;
  /** Set only when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT): a server span per request. */
  tracing?: Tracing | undefined;
}

/**
 * One line per request, written when it completes (a failed one is the line ./errors.ts writes as
 * it answers). Only the path is logged (see loggedPath).
 */
class RequestLines {
  private readonly lines: ReturnType<typeof requestLineWriter>;

  constructor(logger: Logger) {
    this.lines = requestLineWriter(logger);
  }

  enabled(): boolean {
    return this.lines.enabled();
  }

  write(requestId: string, method: string, url: string, status: number, durationMs: number): void {
    this.lines.write({
      request_id: requestId,
      method,
      path: loggedPath(url),
      status,
      duration_ms: Math.round(durationMs * 100) / 100,
    });
  }
}

/** The field request ids are logged under, in every Fastify application of the gateway. */
export const REQUEST_ID_LOG_LABEL = 'request_id';

/** How paths match routes, in every Fastify application of the gateway (the emulators' too). */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 500 } as const;

class RequestLogController extends LogController {
  constructor(private readonly lines: RequestLines) {
    super({ requestIdLogLabel: REQUEST_ID_LOG_LABEL });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, req: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error(
        {
          method: req.method,
          path: loggedPath(req.url),
          status: reply.statusCode,
          duration_ms: Math.round(reply.elapsedTime * 100) / 100,
          err: error,
        },
        'request errored',
      );
    } else if (this.lines.enabled() && !loggedAsFailed(reply.raw)) {
      this.lines.write(String(req.id), req.method, req.url, reply.statusCode, reply.elapsedTime);
    }
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// Unique across processes without a random draw per request: a random prefix and a counter.
const REQUEST_ID_PREFIX = `req_${randomBytes(8).toString('hex')}`;
let requestCount = 0;
const newRequestId = () => `${REQUEST_ID_PREFIX}${(++requestCount).toString(36)}`;
// A caller's request id is kept (so logs correlate across services); otherwise one is made.
const requestIdOf = (req: Pick<IncomingMessage, 'headers'>) => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
};

const SLASH = 47;

/**
 * The path and query of an absolute-form request target (`GET http://host/proxy/x`): the authority
 * names nothing here (the gateway is not a forward proxy) and must not leak into upstream paths.
 */
function originForm(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  if (!scheme) return url;
  const rest = url.slice(scheme[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * Node's HTTP server as Fastify would make it, with the proxy's and the tool calls' fast paths in
 * front of Fastify's handler (./proxy/fast-path.ts, ./tool-calls/fast-path.ts; `fast` is set once
 * the services are wired), and HTTP/2 and TLS on
 * the same port (./listener.ts): HTTP/2 carries gRPC.
 */
/** What answers a request before Fastify does (false: Fastify's handler, `route`, takes it). */
interface FastPaths {
  serve?: (
    req: IncomingMessage,
    res: ServerResponse,
    route: (req: IncomingMessage, res: ServerResponse) => void,
  ) => boolean;
}

function serverWithFastPath(
  fast: FastPaths,
  options: AppOptions,
  http2: (req: Http2ServerRequest, res: Http2ServerResponse) => void,
) {
  const { headersTimeoutMs } = options;
  return (handler: (req: IncomingMessage, res: ServerResponse) => void, opts: Record<string, unknown>) => {
    // Repeated headers arrive joined ("a, b"), never silently reduced to the first: two
    // Authorization headers then fail authentication instead of being accepted by order.
    const serverOptions: ServerOptions = {
      ...(opts.http as ServerOptions),
      joinDuplicateHeaders: true,
      headersTimeout: headersTimeoutMs,
      // Node checks header deadlines on this interval (30 s by default): often enough to keep them.
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs / 2),
    };
    const server = createServer(serverOptions, (req, res) => {
      if (req.url?.charCodeAt(0) !== SLASH) req.url = originForm(req.url ?? '');
      if (!fast.serve?.(req, res, handler)) handler(req, res);
    });
    server.keepAliveTimeout = opts.keepAliveTimeout as number;
    server.requestTimeout = opts.requestTimeout as number;
    server.setTimeout(opts.connectionTimeout as number);
    if ((opts.maxRequestsPerSocket as number) > 0)
      server.maxRequestsPerSocket = opts.maxRequestsPerSocket as number;
    serveAllProtocols(server, {
      http2,
      tls: options.tls,
      headersTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      limits: options.connections,
      refusePlaintext,
      requestId: newRequestId,
      logger: options.logger,
    });
    return server;
  };
}

/** A cleartext request to a TLS port: a problem the client can read, then the connection closes. */
function refusePlaintext(socket: Socket): void {
  const problem = new Problem(
    'tls_required',
    'This port speaks TLS only (PORTICO_TLS_CERT is set): use an https:// URL (for gRPC, a TLS channel).',
  );
  socket.end(rawProblemResponse(problem, newRequestId()));
  socket.once('error', () => {});
}

/**
 * HTTP/2 on this port is for gRPC; anything else is told to use HTTP/1.1, which every REST client,
 * browser and the proxy speak (TLS clients offering both are given HTTP/1.1 already).
 *
 * A gRPC call is authenticated here first, from its headers: with a valid gateway token it goes to
 * the gRPC handler (which checks it again, as for every call) and its session counts as
 * authenticated (trustSession keeps it open); without one it is refused here, at once. The gRPC
 * handler would load its modules for it and wait for the whole message before authenticating, and
 * its state for a pending call is tens of KiB of heap: 20,000 stalled unauthenticated calls held
 * over a GiB that V8, idle afterwards, never collected.
 */
function http2Requests(
  grpc: (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  auth: { tokens: AccessTokenIssuer; clients: ClientStatusCache },
  logger: Logger,
) {
  const lines = requestLineWriter(logger);
  const admit = (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const { session } = req.stream;
    if (session) trustSession(session);
    grpc(req, res);
  };
  return (req: Http2ServerRequest, res: Http2ServerResponse) => {
    if (req.headers['content-type']?.startsWith('application/grpc')) {
      const header = req.headers.authorization;
      if (knownPrincipal(auth.tokens, auth.clients, header)) {
        admit(req, res);
        return;
      }
      const startedAt = performance.now();
      bearerPrincipal(auth.tokens, auth.clients, header).then(
        () => admit(req, res),
        (error: unknown) => {
          // Anything but a refused token (the store unreachable, say) is the gRPC handler's to answer.
          if (!(error instanceof Problem) || error.code !== 'unauthenticated') grpc(req, res);
          else refuseGrpcCall(req, res, error, startedAt, lines);
        },
      );
      return;
    }
    req.resume();
    const body = new Problem(
      'not_implemented',
      'HTTP/2 on this port carries gRPC only; send REST, proxy and browser requests over HTTP/1.1.',
    ).toBody(newRequestId());
    res.writeHead(501, { 'content-type': PROBLEM_CONTENT_TYPE });
    res.end(JSON.stringify(body));
  };
}

/** gRPC's UNAUTHENTICATED, written here so that refusing a call needs none of the gRPC modules. */
const GRPC_UNAUTHENTICATED = '16';

/**
 * A trailers-only gRPC answer (the status in the response headers) refusing a call's token, with
 * the request line the gRPC handler writes. The SDK answers UNAUTHENTICATED by fetching a new token
 * and retrying once. The body is not read: the stream is reset once answered (./listener.ts).
 */
function refuseGrpcCall(
  req: Http2ServerRequest,
  res: Http2ServerResponse,
  problem: Problem,
  startedAt: number,
  lines: ReturnType<typeof requestLineWriter>,
): void {
  const requestId = requestIdOf(req);
  res.writeHead(200, {
    'content-type': 'application/grpc+proto',
    'grpc-status': GRPC_UNAUTHENTICATED,
    'grpc-message': encodeURIComponent(problem.detail),
    'x-request-id': requestId,
  });
  res.end();
  if (lines.enabled()) {
    lines.write({
      request_id: requestId,
      method: 'POST',
      path: loggedPath(req.url),
      status: 200,
      grpc_status: 'Unauthenticated',
      duration_ms: Math.round((performance.now() - startedAt) * 100) / 100,
    });
  }
}

/**
 * Text no store or provider can hold (NUL, unpaired surrogates) and absurd nesting are refused
 * before a route of Portico's own runs, wherever they are: body, query string or path parameters.
 */
function refuseUnsafeInput(req: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const found =
    unsafeInput(req.params, '/path') ?? unsafeInput(req.query, '/query') ?? unsafeInput(req.body, '');
  if (found) done(new Problem('invalid_input', summarize([found], 'The request'), { errors: [found] }));
  else done();
}

/**
 * A JSON or form body must arrive within `ms` of its headers: a client that stalls halfway would
 * otherwise hold a socket (and, on /oauth/token, an unauthenticated one) for as long as it likes.
 * The answer is 408 and the connection is closed, since the rest of the body may still come. Under
 * /sandbox bodies stream (the emulators take uploads of any size) and must keep up the minimum
 * rate instead. A route that answers before the body is in (a 401, a GET sent with a body) closes
 * the connection at once (closeIfAnsweredEarly), the proxy's routes included; a 413, which lets
 * the rest be read so the connection can stay, is cut at the same deadline.
 */
function bodyDeadline(ms: number, rates: BodyRates) {
  return (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const raw = req.raw;
    if (raw.complete || !hasBody(raw.headers)) {
      done();
      return;
    }
    closeIfAnsweredEarly(raw, reply.raw);
    // The proxy reads (or streams) its bodies itself, with its own deadlines.
    if (req.url.startsWith(`${PROXY_PREFIX}/`)) {
      done();
      return;
    }
    const streamed = req.url.startsWith(`${SANDBOX_PREFIX}/`);
    let timer: NodeJS.Timeout | undefined;
    const expire = () => {
      if (raw.complete) return;
      clearTimeout(timer);
      if (reply.raw.headersSent) {
        if (reply.raw.writableFinished) raw.socket?.destroy();
        return;
      }
      const problem = streamed
        ? rates.tooSlow()
        : new Problem(
            'request_timeout',
            `The request body did not arrive within ${ms} ms of its headers; send it again, whole.`,
          );
      reply.hijack();
      reply.raw.setHeader('connection', 'close');
      answerErrorRaw(reply.raw, problem, String(req.id), req.log);
      reply.raw.on('finish', () => raw.socket?.destroy());
    };
    if (streamed) {
      rates.watch(raw, expire);
    } else {
      timer = setTimeout(expire, ms).unref();
      raw.once('end', () => clearTimeout(timer));
      raw.once('close', () => clearTimeout(timer));
    }
    done();
  };
}

/**
 * The gRPC surface, loaded at its first call rather than at start: its modules (the Scalekit SDK's
 * descriptors, Connect) are about 40 MiB of resident memory a gateway without gRPC clients never
 * needs. A call that arrives while they load waits; its body stays buffered in its HTTP/2 stream.
 */
function lazyGrpcHandler(deps: GrpcDeps): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  let loading: Promise<(req: Http2ServerRequest, res: Http2ServerResponse) => void> | undefined;
  return (req, res) => {
    loading ??= import('../grpc/server.js').then((grpc) => grpc.grpcHandler(deps));
    loading.then(
      (handler) => handler(req, res),
      (error: unknown) => {
        deps.logger.error({ err: error }, 'the gRPC modules failed to load');
        res.writeHead(200, {
          'content-type': 'application/grpc',
          'grpc-status': '13',
          'grpc-message': 'gRPC is unavailable',
        });
        res.end();
      },
    );
  };
}

/** Builds the HTTP application; routes stay thin and call the services. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services } = options;
  const lines = new RequestLines(options.logger);
  const fast: FastPaths = {};
  const grpc = lazyGrpcHandler({
    tokens: services.tokens,
    clients: services.clients,
    accounts: services.accounts,
    authorization: services.authorization,
    connections: services.connections,
    engine: services.engine,
    logger: options.logger,
    readMaxBytes: options.bodyLimitBytes,
  });
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimitBytes,
    genReqId: requestIdOf,
    serverFactory: serverWithFastPath(
      fast,
      options,
      http2Requests(grpc, { tokens: services.tokens, clients: services.clients }, options.logger),
    ),
    logController: new RequestLogController(lines),
    childLoggerFactory: (logger, bindings, options) =>
      deferredChildLogger(logger as Logger, bindings, options) as FastifyBaseLogger,
    return503OnClosing: true,
    clientErrorHandler: clientErrorHandler(newRequestId),
    // Errors raised while routing (a malformed percent-escape) never reach the error handler.
    frameworkErrors: (error, req, reply) => void answerError(error, req, reply),
    forceCloseConnections: 'idle',
    routerOptions: { ...ROUTER_OPTIONS },
  });

  const validators = new DeferredValidators();
  app.setValidatorCompiler(({ schema, httpPart }) =>
    validators.validator(httpPart === 'body' ? bodyAjv : queryAjv, schema),
  );
  app.addHook('onListen', (done) => {
    validators.compileInBackground((error) =>
      app.log.error({ err: error }, 'a route schema does not compile'),
    );
    done();
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  if (options.tracing) traceRequests(app, options.tracing);
  const { metrics } = services;
  app.addHook('onResponse', (req, reply, done) => {
    metrics.request(familyOf(req.url), reply.statusCode, reply.elapsedTime);
    done();
  });
  registerProblemHandlers(app);
  app.addHook('onSend', htmlPageHeaders);
  // Every route, including the API description and the sandbox emulators mounted beside Portico's own.
  const rates = new BodyRates(options.bodyMinBytesPerSec, options.bodyTimeoutMs);
  const proxyBodies: ProxyBodyLimits = {
    replayLimitBytes: options.proxyReplayLimitBytes,
    timeoutMs: options.bodyTimeoutMs,
    rates,
  };
  app.addHook('onRequest', bodyDeadline(options.bodyTimeoutMs, rates));
  await app.register(formbody);
  await registerApiDescription(app);

  // Portico's own routes; the proxy and the sandbox emulators pass bodies through as they are.
  await app.register(async (own) => {
    own.addHook('preValidation', refuseUnsafeInput);
    await own.register(healthRoutes, { store: services.readiness });
    await own.register(tokenRoutes, { clients: services.gatewayClients, tokens: services.tokens });
    await own.register(hostedFlowRoutes, {
      authorization: services.authorization,
      clientMetadata: (id) => services.connections.clientMetadataDocument(id),
    });
    await own.register(approvalLinkRoutes, { guardrails: services.guardrails, audit: services.audit });
    await own.register(dashboardPages);
    await own.register(adminSessionRoutes, {
      prefix: '/api/v1',
      admins: services.admins,
      secureCookies: options.secureCookies,
      audit: services.audit,
    });
    if (options.metricsToken) await own.register(metricsRoutes, { metrics, token: options.metricsToken });
    await own.register(
      async (api) => {
        api.addHook('onRequest', bearerAuthentication(services.tokens, services.clients, services.admins));
        api.addHook('onRequest', scopeAuthorization(services.clients));
        api.addHook('preHandler', connectionAuthorization(services.clients));
        api.addHook('onRoute', auditHooks(services.audit).onRoute);
        await api.register(auditRoutes, { audit: services.audit });
        await api.register(adminAccountRoutes, { admins: services.admins });
        await api.register(connectionRoutes, { connections: services.connections, grants: services.clients });
        await api.register(connectedAccountRoutes, {
          accounts: services.accounts,
          authorization: services.authorization,
          grants: services.clients,
        });
        await api.register(toolRoutes, {
          engine: services.engine,
          executions: services.executions,
          grants: services.clients,
          connections: services.connections,
          toolsets: services.toolsets,
        });
        await api.register(eventRoutes, { events: services.events });
        await api.register(webhookRoutes, { webhooks: services.webhooks });
        await api.register(triggerRoutes, { triggers: services.triggers, grants: services.clients });
        await api.register(sandboxRoutes, {
          connections: services.connections,
          providers: services.providers,
          sandbox: services.sandbox,
        });
        await api.register(mcpTokenRoutes, { tokens: services.mcpTokens });
        await api.register(proxyTokenRoutes, { tokens: services.proxyTokens });
        await api.register(guardrailRoutes, { guardrails: services.guardrails });
        await api.register(toolsetRoutes, { toolsets: services.toolsets, grants: services.clients });
        await api.register(mcpOAuthApiRoutes, { oauth: services.mcpOAuth });
        await api.register(clientRoutes, { clients: services.gatewayClients, grants: services.clients });
        await api.register(providerRoutes, { providers: services.providers });
        await api.register(environmentRoutes, {
          redirects: services.authorization.redirects,
          branding: services.authorization.branding,
        });
      },
      { prefix: '/api/v1' },
    );
    await own.register(pushRoutes, { prefix: '/push', push: services.triggerPush });
    await own.register(mcpOAuthRoutes, { oauth: services.mcpOAuth, origins: options.mcp.origins });
    await own.register(mcpEndpointRoutes, {
      tokens: services.mcpTokens,
      toolsets: services.toolsets,
      oauth: services.mcpOAuth,
      origins: options.mcp.origins,
      events: services.events,
      accessTokens: services.tokens,
      clients: services.clients,
      server: {
        engine: services.engine,
        accounts: services.accounts,
        connections: services.connections,
        authorization: services.authorization,
        logger: options.logger,
        version: PORTICO_VERSION,
        pageSize: options.mcp.pageSize,
      },
    });
  });
  await app.register(
    async (proxy) => {
      proxy.addHook(
        'onRequest',
        proxyAuthentication(services.tokens, services.clients, services.proxyTokens),
      );
      await proxy.register(proxyRoutes, {
        proxy: services.proxy,
        body: proxyBodies,
        grants: services.clients,
      });
    },
    { prefix: PROXY_PREFIX },
  );
  await options.mount?.(app);

  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const served = {
    logger: app.log,
    requestId: requestIdOf,
    logsRequests: () => lines.enabled(),
    completed: (id: string, req: IncomingMessage, res: ServerResponse, startedAt: number) => {
      if (!loggedAsFailed(res))
        lines.write(
          id,
          req.method as string,
          req.url as string,
          res.statusCode,
          performance.now() - startedAt,
        );
    },
    closing: () => closing,
    metrics,
    body: proxyBodies,
  };
  const proxied = fastProxy({
    ...served,
    tokens: services.tokens,
    clients: services.clients,
    proxyTokens: services.proxyTokens,
    proxy: services.proxy,
  });
  const toolCalls = fastToolCalls({
    ...served,
    tokens: services.tokens,
    clients: services.clients,
    engine: services.engine,
    validate: validators.validator(bodyAjv, ExecuteBody),
  });
  fast.serve = (req, res, route) => proxied(req, res) || toolCalls(req, res, route);
  // With tracing on, proxied requests and tool calls take their routes, whose hooks make the spans.
  if (options.tracing) delete fast.serve;
  return app;
}
