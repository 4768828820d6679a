import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AccountTokens } from './accounts/account-tokens.js';
import { AccountService } from './accounts/service.js';
import { AuditService } from './audit/service.js';
import { AccessTokenIssuer } from './auth/access-tokens.js';
import { bootstrapStore } from './auth/bootstrap.js';
import { ClientStatusCache } from './auth/client-status.js';
import { GatewayClientService, type IssuedClient } from './auth/gateway-clients.js';
import { McpOAuthService } from './auth/mcp-oauth.js';
import { McpTokenService } from './auth/mcp-tokens.js';
import { ProxyTokenService } from './auth/proxy-tokens.js';
import { BrandingService } from './authorization/branding.js';
import { AuthorizationLinks } from './authorization/links.js';
import { AuthorizationService } from './authorization/service.js';
import type { Config } from './config.js';
import { ProviderCatalogService } from './connections/providers.js';
import { ConnectionService } from './connections/service.js';
import type { NewAdmin } from './dashboard/admins.js';
import { AdminService } from './dashboard/admins.js';
import { Problem } from './errors/problem.js';
import { EventService } from './events/service.js';
import { ExecutionService } from './executions/service.js';
import { RateGovernor } from './governor/governor.js';
import { ReplicaPresence } from './governor/replicas.js';
import { ApprovalLinkSigner } from './guardrails/approval-links.js';
import { GuardrailService } from './guardrails/service.js';
import { buildApp } from './http/app.js';
import { listenProxyOrigin, type ProxyOrigin } from './http/proxy-origin.js';
import { embeddedSandbox } from './http/sandbox-emulators.js';
import { PORTICO_VERSION } from './http/version.js';
import { createLogger } from './logging/logger.js';
import { originPolicy } from './mcp/origins.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { listenMetrics } from './metrics/server.js';
import {
  type ConnectionPlace,
  guardEndpoints,
  type ProviderEndpoints,
  resolveEndpoints,
} from './oauth/endpoints.js';
import type { ProviderDefinition } from './providers/catalog.js';
import { PROXY_PREFIX } from './proxy/path.js';
import { ProxyService } from './proxy/service.js';
import { sandboxMcpServer } from './sandbox/mcp.js';
import { disabledSandbox, remoteSandbox, type Sandbox } from './sandbox/sandbox.js';
import { SandboxState } from './sandbox/state.js';
import { type Keyring, loadKeyring } from './secrets/keyring.js';
import { countAccounts } from './store/accounts.js';
import { findConnectionById } from './store/connections.js';
import { lockDataDir } from './store/data-dir-lock.js';
import { type Database, openDatabase } from './store/db.js';
import { migrate } from './store/migrate.js';
import { refreshStatistics, STATISTICS_INTERVAL_MS } from './store/statistics.js';
import { specificationTools } from './tools/catalog.js';
import { compiledSources } from './tools/compiled/source.js';
import { ToolEngine } from './tools/engine.js';
import { ToolRegistry } from './tools/registry.js';
import { RemoteMcpTools } from './tools/remote-mcp/source.js';
import { ToolsetService } from './toolsets/service.js';
import type { Tracing } from './tracing/tracing.js';
import { TriggerChannels } from './triggers/channels.js';
import { TriggerPoller } from './triggers/poller.js';
import { TriggerPush } from './triggers/push.js';
import { TriggerService } from './triggers/service.js';
import { UpstreamHttp } from './upstream/http.js';
import { OutboundRefusedError } from './upstream/outbound-guard.js';
import { WebhookService } from './webhooks/service.js';
import { DeliveryWorker } from './webhooks/worker.js';

export interface Gateway {
  app: FastifyInstance;
  config: Config;
  db: Database;
  keyring: Keyring;
  logger: Logger;
  accountTokens: AccountTokens;
  authorization: AuthorizationService;
  accounts: AccountService;
  connections: ConnectionService;
  /** Built-in and custom providers, per environment. */
  providers: ProviderCatalogService;
  sandbox: Sandbox;
  engine: ToolEngine;
  executions: ExecutionService;
  http: UpstreamHttp;
  events: EventService;
  webhooks: WebhookService;
  deliveries: DeliveryWorker;
  triggers: TriggerService;
  triggerPoller: TriggerPoller;
  admins: AdminService;
  /** The audit log (append-only). */
  audit: AuditService;
  metrics: GatewayMetrics;
  /** Credentials created on this start (first start on an empty store only). */
  bootstrapClient?: IssuedClient;
  /** The first dashboard admin, created on this start when there was none. */
  bootstrapAdmin?: NewAdmin;
  /** Listens on config.host:config.port; resolves with the bound URL. */
  listen(): Promise<string>;
  /** The origin serving the proxy at its root (PORTICO_PROXY_PORT), once listening. */
  proxyOrigin(): string | undefined;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), closes the store. */
  close(): Promise<void>;
}

export interface GatewayOverrides {
  logger?: Logger;
  /** An already open database (tests); closed by the gateway on close(). */
  db?: Database;
  /** PostgreSQL schema to use (tests). */
  schema?: string;
}

/** How often accounts whose refresh tokens go unused are looked for. */
const KEEP_ALIVE_INTERVAL_MS = 60 * 60_000;

/** How often abandoned PENDING_AUTH accounts are looked for. */
const PRUNE_INTERVAL_MS = 10 * 60_000;
/** How often the account count deltas are folded into the counts (a reading sums what is left). */
const COUNT_FOLD_INTERVAL_MS = 5_000;
/** How long a call waits for its turn under a provider's rate limit, and how many may wait per lane. */
const GOVERNOR_MAX_WAIT_MS = 30_000;
const GOVERNOR_MAX_QUEUE = 1000;
/** Of those, most one end user holds in a connection-wide queue, so others still get their turns. */
const GOVERNOR_MAX_QUEUE_PER_ACCOUNT = 100;

export function embeddedDataPath(config: Config): string {
  return path.join(config.dataDir, 'db');
}

/**
 * The configured store. The embedded one is locked to this process while open (see
 * ./store/data-dir-lock.ts); a second process gets DataDirInUseError instead of losing writes.
 */
export async function openStore(config: Config, schema?: string, logger?: Logger): Promise<Database> {
  if (config.databaseUrl) {
    return openDatabase({
      url: config.databaseUrl,
      listenUrl: config.databaseListenUrl,
      heartbeat: config.databaseHeartbeat,
      logger,
      ...(schema ? { schema } : {}),
    });
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const release = await lockDataDir(config.dataDir);
  try {
    const db = await openDatabase({ dataDir: embeddedDataPath(config), ...(schema ? { schema } : {}) });
    return {
      ...db,
      kind: db.kind,
      async close() {
        try {
          await db.close();
        } finally {
          await release();
        }
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/** The composition root: config in, a ready (not yet listening) gateway out. */
export async function createGateway(config: Config, overrides: GatewayOverrides = {}): Promise<Gateway> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const { keyring, source } = await loadKeyring({
    masterKeys: config.masterKeys,
    usesPostgres: Boolean(config.databaseUrl),
    dataDir: config.dataDir,
  });
  if (source !== 'environment') {
    logger.warn(
      { key_file: path.join(config.dataDir, 'master.key'), generated: source === 'generated' },
      'PORTICO_MASTER_KEY is not set: stored secrets are sealed with a key kept in the data directory. Set PORTICO_MASTER_KEY for production.',
    );
  }
  // Loaded only when configured: a gateway without an endpoint never imports the SDK.
  const tracing: Tracing | undefined = config.tracing
    ? (await import('./tracing/tracing.js')).Tracing.start(config.tracing, {
        version: PORTICO_VERSION,
        logger,
      })
    : undefined;
  const db =
    overrides.db ??
    (await openStore(config, overrides.schema, logger).catch(async (error) => {
      await tracing?.shutdown();
      throw error;
    }));
  try {
    const migrated = await migrate(db);
    if (migrated.applied.length) logger.info({ applied: migrated.applied }, 'database migrated');
    const { client, environment } = await bootstrapStore(db);
    const admins = new AdminService(db);
    const firstAdmin = await admins.ensureFirstAdmin(environment.id);
    const audit = new AuditService(db, logger, environment.id, config.failedSignInRetentionDays);
    // What the first start creates on its own is recorded as the system's doing.
    const bootstrap = { actorType: 'system', actorId: 'bootstrap', credential: null } as const;
    if (client) {
      audit.record({
        ...bootstrap,
        action: 'client.created',
        resourceType: 'client',
        resourceId: client.client_id,
      });
    }
    if (firstAdmin) {
      audit.record({
        ...bootstrap,
        action: 'admin.created',
        resourceType: 'admin',
        resourceId: firstAdmin.username,
        details: { role: 'admin' },
      });
    }
    const metrics = new GatewayMetrics({
      async accountsByStatus() {
        const counts: Record<string, number> = {};
        for (const c of await countAccounts(db)) counts[c.status] = (counts[c.status] ?? 0) + c.count;
        return counts;
      },
      databaseStatements: {
        store: db.kind === 'pglite' ? 'embedded' : 'postgres',
        count: () => db.statements(),
      },
    });

    const tokens = new AccessTokenIssuer(keyring, config.publicUrl, config.accessTokenTtlSeconds);
    // The sandbox is known before the services that use it; embedded emulators are mounted with the app.
    const { sandbox, mount: mountSandbox } = configuredSandbox(
      config,
      logger,
      new SandboxState(db, keyring, logger),
    );
    const endpoints = (
      provider: ProviderDefinition,
      connection: ConnectionPlace,
      accountMetadata?: Record<string, unknown>,
    ): ProviderEndpoints => {
      if (!connection.sandbox) {
        // A definition's (or an account's) word: every URL the gateway calls goes through the outbound guard.
        const allowPrivate =
          config.outboundAllowPrivate.includes('*') || config.outboundAllowPrivate.includes(provider.key);
        try {
          return guardEndpoints(resolveEndpoints(provider, undefined, connection, accountMetadata), {
            allowPrivate,
            selfOrigins: [new URL(config.publicUrl).origin],
          });
        } catch (error) {
          if (!(error instanceof OutboundRefusedError)) throw error;
          throw new Problem(
            'upstream_error',
            `Portico does not send to ${error.url}: ${error.reason}. Fix the provider definition or the account's value${allowPrivate ? '' : `, or allow private targets for this provider with PORTICO_OUTBOUND_ALLOW_PRIVATE=${provider.key}`}.`,
            { retryable: false },
          );
        }
      }
      const location = sandbox.location();
      if (!location) {
        throw new Problem(
          'service_unavailable',
          'This is a sandbox connection but sandbox mode is off (PORTICO_SANDBOX=false).',
          { retryable: false },
        );
      }
      return resolveEndpoints(provider, location, connection, accountMetadata);
    };
    // Names resolving to private addresses are reached only for the sandbox's emulators, or when an
    // operator allowed private targets for some provider (the guard cannot tell its hosts by name).
    const sandboxHosts = () => {
      const location = sandbox.location();
      return location ? [location.internalBase, location.publicBase].map((u) => new URL(u).hostname) : [];
    };
    const http = new UpstreamHttp(
      {
        ...config.upstream,
        privateHostAllowed: (hostname) =>
          config.outboundAllowPrivate.length > 0 || sandboxHosts().includes(hostname),
      },
      tracing,
    );
    const providers = new ProviderCatalogService({ db, logger });
    await providers.start();
    const connections = new ConnectionService({
      db,
      keyring,
      providers,
      publicUrl: config.publicUrl,
      sandboxAvailable: config.sandbox,
      sandboxMcp: () => {
        const location = sandbox.location();
        return location && sandboxMcpServer(location);
      },
      outboundPolicy: (providerKey) => ({
        allowPrivate:
          config.outboundAllowPrivate.includes('*') || config.outboundAllowPrivate.includes(providerKey),
        selfOrigins: [new URL(config.publicUrl).origin],
      }),
    });
    const links = new AuthorizationLinks({
      db,
      publicUrl: config.publicUrl,
      linkTtlSeconds: config.linkTtlSeconds,
    });
    const accountTokens = new AccountTokens({
      db,
      keyring,
      logger,
      endpoints,
      provider: (environmentId, key) => providers.resolve(environmentId, key),
      async connection(connectionId, tx) {
        const row = await findConnectionById(tx, connectionId);
        if (!row) throw new Problem('connection_not_found', `No connection has id ${connectionId}.`);
        const clientSecret = connections.clientSecret(row);
        if (row.sandbox) {
          const provider = await providers.resolve(row.environment_id, row.provider);
          await sandbox.ensureClient(row, provider, clientSecret, connections.redirectUri(row.id));
        }
        return { row, client: { clientId: row.client_id, clientSecret } };
      },
      outboundFetch: http.fetch,
      notActive: (account) => links.notActiveProblem(account),
      authorizationLink: async (accountId, tx) => {
        const { link, expires_at } = await links.linkFor({ id: accountId }, undefined, undefined, tx);
        return { link, expires_at };
      },
      metrics,
      cacheSize: config.credentialCacheSize,
      tracing,
    });
    const branding = new BrandingService(db);
    const authorization = new AuthorizationService({
      db,
      keyring,
      logger,
      connections,
      accountTokens,
      links,
      endpoints,
      redirectUrlAllowlist: config.redirectUrlAllowlist,
      requestTtlSeconds: config.authRequestTtlSeconds,
      providers,
      branding,
      outboundFetch: http.fetch,
      prepareSandbox: (connection, provider, secret) =>
        sandbox.registerClient(connection, provider, secret, connections.redirectUri(connection.id)),
    });
    const accounts = new AccountService({
      db,
      keyring,
      logger,
      connections,
      accountTokens,
      endpoints,
      providers,
      outboundFetch: http.fetch,
    });
    connections.beforeRemove((row) => accounts.disconnectAllOf(row));
    await accountTokens.start();
    // The one catalog every reader asks: the engine, formats, docs, MCP, gRPC and REST.
    const registry = new ToolRegistry([
      specificationTools,
      ...(config.compiledTools ? compiledSources() : []),
    ]);
    const executions = new ExecutionService(
      db,
      logger,
      () => Object.fromEntries(registry.list().map((t) => [t.name, t.provider])),
      config.executionRetentionDays,
    );
    // Keeps calls under the providers' documented limits; replicas share each limit (replicas.ts).
    let presence: ReplicaPresence | undefined;
    const governor = new RateGovernor({
      maxWaitMs: GOVERNOR_MAX_WAIT_MS,
      maxQueue: GOVERNOR_MAX_QUEUE,
      maxQueuePerAccount: GOVERNOR_MAX_QUEUE_PER_ACCOUNT,
      replicas: () => presence?.count() ?? 1,
      share: (accountId, ms) => presence?.shareSlowDown(accountId, ms),
      registry: metrics.registry,
    });
    presence = new ReplicaPresence(db, (accountId, ms) => governor.slowDown(accountId, ms, true), logger);
    await presence.start();
    const guardrails = new GuardrailService({
      db,
      publicUrl: config.publicUrl,
      logger,
      links: new ApprovalLinkSigner(keyring),
    });
    await guardrails.start();
    const remoteMcpTools = new RemoteMcpTools({
      db,
      accountTokens,
      http,
      governor: config.rateGovernor ? governor : undefined,
      logger,
    });
    registry.register(remoteMcpTools);
    accountTokens.onAccountChanged(() => remoteMcpTools.accountsChanged());
    const engine = new ToolEngine({
      executions,
      logger,
      accountTokens,
      http,
      registry,
      guard: guardrails,
      governor: config.rateGovernor ? governor : undefined,
      tracing,
      environmentTools: remoteMcpTools,
    });
    const proxy = new ProxyService({
      accountTokens,
      http,
      metrics,
      governor: config.rateGovernor ? governor : undefined,
      proxyBase: `${config.publicUrl}${PROXY_PREFIX}`,
    });
    const toolsets = new ToolsetService({ db, engine, connections, publicUrl: config.publicUrl });
    const clients = new ClientStatusCache(db);
    await clients.start();
    const gatewayClients = new GatewayClientService(db, clients);
    const mcpTokens = new McpTokenService({ db, clients, connections, engine, publicUrl: config.publicUrl });
    const proxyTokens = new ProxyTokenService({ db, clients, connections });
    await proxyTokens.start();
    const mcpOAuth = new McpOAuthService({
      db,
      logger,
      clients,
      tokens: mcpTokens,
      publicUrl: config.publicUrl,
      allowPrivateClientMetadata: config.mcpClientMetadataAllowPrivate,
    });
    const events = new EventService(db, logger, config.eventRetentionDays);
    const webhooks = new WebhookService({ db, keyring, allowPrivate: config.webhooks.allowPrivate });
    const deliveries = new DeliveryWorker({ db, keyring, logger, config: config.webhooks, tracing });
    // Trigger polls call providers as the end user, like the tools: same transport and governor.
    const endUser = { http, metrics, governor: config.rateGovernor ? governor : undefined };
    const triggerChannels = new TriggerChannels({
      db,
      keyring,
      logger,
      publicUrl: config.publicUrl,
      config: { enabled: config.triggers.push, channelSeconds: config.triggers.channelSeconds },
    });
    const triggers = new TriggerService({
      db,
      logger,
      accountTokens,
      endUser,
      minIntervalSeconds: config.triggers.minIntervalSeconds,
      channels: triggerChannels,
      wake: () => triggerPoller.wake(),
    });
    const triggerPoller = new TriggerPoller({
      db,
      logger,
      accountTokens,
      endUser,
      config: config.triggers,
      channels: triggerChannels,
    });
    const triggerPush = new TriggerPush({
      db,
      keyring,
      logger,
      channels: triggerChannels,
      publicUrl: config.publicUrl,
      async connection(id) {
        const row = await connections.getById(id).catch(() => undefined);
        return row && { row, clientSecret: () => connections.clientSecret(row) };
      },
      wake: () => triggerPoller.wake(),
    });
    const app = await buildApp({
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      headersTimeoutMs: config.headersTimeoutMs,
      bodyTimeoutMs: config.bodyTimeoutMs,
      bodyMinBytesPerSec: config.bodyMinBytesPerSec,
      connections: config.connections,
      proxyReplayLimitBytes: config.proxyReplayLimitBytes,
      tls: config.tls,
      secureCookies: config.publicUrl.startsWith('https:'),
      mcp: {
        origins: originPolicy(config.publicUrl, config.mcpAllowedOrigins),
        pageSize: config.mcpPageSize,
      },
      ...(config.metricsToken ? { metricsToken: config.metricsToken } : {}),
      services: {
        readiness: db,
        tokens,
        connections,
        providers,
        accounts,
        authorization,
        engine,
        executions,
        proxy,
        clients,
        gatewayClients,
        mcpTokens,
        proxyTokens,
        guardrails,
        toolsets,
        mcpOAuth,
        events,
        webhooks,
        triggers,
        triggerPush,
        admins,
        audit,
        metrics,
        sandbox,
      },
      mount: mountSandbox,
      tracing,
    });

    // Accounts whose authorization was abandoned go once nothing can complete it any more; events
    // once their retention has passed.
    const pruning = setInterval(() => {
      void accounts.pruneAbandoned().catch((err: unknown) => logger.warn({ err }, 'pruning failed'));
      void events.prune().catch((err: unknown) => logger.warn({ err }, 'event pruning failed'));
      void executions.prune().catch((err: unknown) => logger.warn({ err }, 'execution pruning failed'));
      void audit
        .pruneFailedSignIns()
        .catch((err: unknown) => logger.warn({ err }, 'failed sign-in pruning failed'));
      void guardrails.expireDue().catch((err: unknown) => logger.warn({ err }, 'approval expiry failed'));
      void guardrails.pruneUsage().catch((err: unknown) => logger.warn({ err }, 'budget pruning failed'));
      void authorization
        .pruneUnverified()
        .catch((err: unknown) => logger.warn({ err }, 'unverified token pruning failed'));
    }, PRUNE_INTERVAL_MS);
    pruning.unref();
    const keepAlive = setInterval(
      () =>
        void accountTokens
          .refreshIdleAccounts()
          .catch((err: unknown) => logger.warn({ err }, 'keep-alive failed')),
      KEEP_ALIVE_INTERVAL_MS,
    );
    keepAlive.unref();
    const countFold = setInterval(
      () =>
        void accounts.foldCounts().catch((err: unknown) => logger.warn({ err }, 'account count fold failed')),
      COUNT_FOLD_INTERVAL_MS,
    );
    countFold.unref();
    // The embedded store has no autovacuum to keep the planner's statistics current (a no-op on
    // PostgreSQL, whose server does it).
    const analyze = () =>
      void refreshStatistics(db).catch((err: unknown) => logger.warn({ err }, 'statistics refresh failed'));
    analyze();
    const statistics = setInterval(analyze, STATISTICS_INTERVAL_MS);
    statistics.unref();
    await deliveries.start();
    triggerPoller.start();

    let metricsServer: import('node:http').Server | undefined;
    let proxyOrigin: ProxyOrigin | undefined;
    let closing: Promise<void> | undefined;
    return {
      app,
      config,
      db,
      keyring,
      logger,
      accountTokens,
      authorization,
      accounts,
      connections,
      providers,
      engine,
      executions,
      http,
      events,
      webhooks,
      deliveries,
      triggers,
      triggerPoller,
      admins,
      audit,
      metrics,
      sandbox,
      ...(client ? { bootstrapClient: client } : {}),
      ...(firstAdmin ? { bootstrapAdmin: firstAdmin } : {}),
      async listen() {
        const url = await app.listen({ port: config.port, host: config.host });
        http.warm();
        if (config.metricsPort) metricsServer = await listenMetrics(metrics, config.host, config.metricsPort);
        if (config.proxyPort) {
          proxyOrigin = await listenProxyOrigin(app, {
            host: config.host,
            port: config.proxyPort,
            tls: config.tls,
            headersTimeoutMs: config.headersTimeoutMs,
            bodyTimeoutMs: config.bodyTimeoutMs,
            limits: config.connections,
            logger,
          });
        }
        // Fastify knows only the HTTP server behind the TLS layer.
        return config.tls ? url.replace(/^http:/, 'https:') : url;
      },
      proxyOrigin: () => proxyOrigin?.url,
      close() {
        closing ??= (async () => {
          clearInterval(pruning);
          clearInterval(keepAlive);
          clearInterval(countFold);
          clearInterval(statistics);
          governor.close();
          presence?.stop();
          const force = setTimeout(() => {
            app.server.closeAllConnections();
            proxyOrigin?.closeAllConnections();
          }, config.shutdownGraceMs);
          force.unref();
          try {
            metricsServer?.close();
            const proxyOriginClosed = proxyOrigin?.close();
            await app.close();
            await proxyOriginClosed;
          } finally {
            clearTimeout(force);
            await triggerPoller.close();
            await accountTokens.close();
            await executions.close();
            await audit.close();
            await deliveries.close();
            await http.close();
            await db.close();
            await tracing?.shutdown();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await db.close();
    await tracing?.shutdown();
    throw error;
  }
}

/**
 * The sandbox the configuration asks for: off, a standalone emulator server, or the emulators
 * embedded under /sandbox, which `mount` routes on the app.
 */
function configuredSandbox(
  config: Config,
  logger: Logger,
  state: SandboxState,
): { sandbox: Sandbox; mount?: (app: FastifyInstance) => Promise<void> } {
  if (!config.sandbox) return { sandbox: disabledSandbox() };
  if (config.sandboxUrl) return { sandbox: remoteSandbox(config.sandboxUrl) };
  return embeddedSandbox({
    publicUrl: config.publicUrl,
    tls: Boolean(config.tls),
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    state,
  });
}
