import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Counters, type CountersSnapshot } from './counters.js';
import { type FaultSpec, FaultStore } from './faults.js';
import { oauthEndpoints } from './oauth-routes.js';
import { type GrantFilter, type OAuthSnapshot, OAuthStore } from './oauth-store.js';
import type { ModuleRuntime } from './runtime.js';
import type {
  DefinitionCatalog,
  EmulatedUser,
  EmulatorKey,
  EmulatorModule,
  ProviderContext,
  RegisteredClient,
} from './types.js';

export type { ModuleRuntime } from './runtime.js';

export interface IssueTokenOptions {
  /** Emulated user id (or email). */
  userId: string;
  clientId?: string;
  scopes?: string[];
  /** Definitions emulator: the definition the token is for, when `clientId` names no client of it. */
  provider?: string;
}

export interface IssuedToken {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  user_id: string;
  client_id: string;
}

/** The in-process test handle; the `/_emulator` HTTP API is a thin layer over it. */
export interface EmulatorControl {
  /** Keys of the emulators this host runs. */
  emulators(): EmulatorKey[];
  /** Path prefix of an emulator under the root, e.g. '/notion'. */
  prefix(key: EmulatorKey): string;
  /** OAuth endpoint paths under the emulator root, e.g. '/notion/v1/oauth/token' (Fastify params like ':tenant' kept). */
  oauthEndpoints(key: EmulatorKey): { authorize: string; token: string };
  registerClient(key: EmulatorKey, client: RegisteredClient): void;
  clients(key: EmulatorKey): RegisteredClient[];
  /** Re-seeds state and clears tokens, grants, codes, faults and counters; clients survive unless asked. */
  reset(opts?: { clients?: boolean }): void;
  /** Expires matching access tokens now; returns how many. */
  expireAccessTokens(key: EmulatorKey, filter?: GrantFilter): number;
  /** Revokes matching grants (refresh fails with invalid_grant, access tokens are refused); returns how many. */
  revokeGrants(key: EmulatorKey, filter?: GrantFilter): number;
  /** Lifetime of access tokens issued from now on; null = never expire. */
  setAccessTokenTtl(key: EmulatorKey, seconds: number | null): void;
  addFault(spec: FaultSpec): string;
  clearFaults(): void;
  counters(): CountersSnapshot;
  resetCounters(): void;
  /** The module's live state, for asserting effects. */
  state<S = unknown>(key: EmulatorKey): S;
  users(key: EmulatorKey): EmulatedUser[];
  /** Mints an access token without the browser flow (registers an internal client when needed). */
  issueToken(key: EmulatorKey, opts: IssueTokenOptions): IssuedToken;
  /** The OAuth bookkeeping (grants, tokens, codes) of one emulator. */
  oauth(key: EmulatorKey): OAuthStore;
  /**
   * Gives the definitions emulator a provider definition to play (the JSON of
   * packages/gateway/providers/provider.schema.json); the latest for a key wins. Returns the key;
   * throws when the definition cannot be played. Definitions, like clients, survive a reset.
   */
  registerDefinition(definition: object): string;
  /** Keys of the definitions the definitions emulator plays. */
  definitions(): string[];
  /** Refuses an API key (or a Basic password) of a definition from now on, until reset. */
  revokeApiKey(provider: string, key: string): void;
  /** Every emulator's grants and live tokens, to keep across a restart. */
  exportOAuth(): OAuthSnapshots;
  /** Takes back what `exportOAuth` gave (emulators not running here are skipped). */
  importOAuth(snapshots: OAuthSnapshots): void;
}

export type OAuthSnapshots = Partial<Record<EmulatorKey, OAuthSnapshot>>;

export interface HostOptions {
  clock?: () => number;
  tokenTtlSeconds?: Partial<Record<EmulatorKey, number | null>>;
  /**
   * Called after each change to grants and tokens; its promise is awaited before a token response
   * leaves, so a token handed out is one that a restart keeps.
   */
  onOAuthChange?: () => Promise<void>;
}

/** Client used by `issueToken` when the test names none. */
export const INTERNAL_CLIENT_ID = 'emulator-internal-client';

/** Hosts a set of emulator modules: their state, OAuth stores, faults and counters. */
export class EmulatorHost {
  readonly runtimes = new Map<EmulatorKey, ModuleRuntime>();
  readonly counters = new Counters();
  readonly faults = new FaultStore();
  readonly clock: () => number;
  /** External prefix the emulators are reachable under (for publicBase). */
  mountPrefix = '';
  /** Prefix of the hosting Fastify scope, stripped from URLs to get paths within the emulator root. */
  routePrefix = '';
  readonly control: EmulatorControl;
  private persisting: Promise<void> = Promise.resolve();

  constructor(modules: EmulatorModule[], options: HostOptions = {}) {
    this.clock = options.clock ?? Date.now;
    const onOAuthChange = options.onOAuthChange;
    for (const module of modules) {
      if (this.runtimes.has(module.key)) throw new Error(`emulator ${module.key} listed twice`);
      const ttl =
        options.tokenTtlSeconds && module.key in options.tokenTtlSeconds
          ? (options.tokenTtlSeconds[module.key] ?? null)
          : module.oauth.accessTokenTtlSeconds;
      const store = new OAuthStore(module.oauth, this.clock, ttl);
      if (onOAuthChange) store.onChange = () => (this.persisting = onOAuthChange());
      const runtime: ModuleRuntime = {
        module,
        store,
        ctx: this.createContext(module, store),
        state: undefined,
      };
      runtime.state = module.createState(runtime.ctx);
      this.runtimes.set(module.key, runtime);
    }
    this.control = this.createControl();
  }

  /** Resolves once the latest change to grants and tokens is kept (at once without a keeper). */
  persisted(): Promise<void> {
    return this.persisting;
  }

  runtime(key: EmulatorKey): ModuleRuntime {
    const runtime = this.runtimes.get(key);
    if (!runtime) throw new Error(`emulator ${key} is not running here`);
    return runtime;
  }

  /** Path of a request within the emulator root, e.g. "/notion/v1/users" (no query, no mount prefix). */
  pathWithinRoot(url: string): string {
    const path = url.split('?')[0] ?? '/';
    return this.routePrefix && path.startsWith(this.routePrefix) ? path.slice(this.routePrefix.length) : path;
  }

  /** Lets tests name a user by email as well as by id. */
  userFilter(key: EmulatorKey, filter: GrantFilter = {}): GrantFilter {
    if (filter.userId === undefined) return filter;
    const user = this.runtime(key).module.users.find(
      (u) => u.id === filter.userId || u.email === filter.userId,
    );
    return { ...filter, userId: user?.id ?? filter.userId };
  }

  private createContext(module: EmulatorModule, store: OAuthStore): ProviderContext {
    const host = this;
    // The runtime as the OAuth endpoints see it; they read no state.
    const runtime = (): ModuleRuntime => ({ module, store, ctx, state: undefined });
    // A plain function, not a method: routes may destructure the context.
    const resolveAccessToken: ProviderContext['resolveAccessToken'] = (token) => {
      const resolved = store.resolveAccessToken(token);
      if (!resolved.ok) return resolved;
      const user = module.users.find((u) => u.id === resolved.record.userId);
      if (!user) return { ok: false, reason: 'revoked' };
      return { ok: true, token: resolved.record, user };
    };
    const ctx: ProviderContext = {
      key: module.key,
      users: module.users,
      clock: this.clock,
      authenticate(req) {
        const header = req.headers.authorization;
        if (header === undefined || header === '') return { ok: false, reason: 'missing' };
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!match) return { ok: false, reason: 'malformed' };
        return resolveAccessToken(match[1]!);
      },
      resolveAccessToken,
      grantForRefreshToken(token) {
        const grant = store.grantForRefreshToken(token);
        return grant && !grant.revoked ? grant : undefined;
      },
      publicBase(req: FastifyRequest) {
        return `${requestOrigin(req)}${host.mountPrefix}${module.prefix}`;
      },
      revokeToken(token) {
        return store.revokeToken(token);
      },
      hasGrant(clientId, userId) {
        return store.liveGrants(clientId, userId).length > 0;
      },
      revokeGrants(filter) {
        return store.revokeGrants(host.userFilter(module.key, filter));
      },
      verifyClient(clientId, clientSecret) {
        return store.verifyClient(clientId, clientSecret);
      },
      randomId(bytes = 16) {
        return randomBytes(bytes).toString('hex');
      },
      client: (clientId) => store.clients.get(clientId),
      registerClient: (client) => store.registerClient(client),
      serveOAuth: (profile) => oauthEndpoints(runtime(), host, profile),
    };
    return ctx;
  }

  /** The definitions catalog of an emulator that has one (else the control call is a mistake). */
  catalog(key: EmulatorKey): DefinitionCatalog {
    const catalog = this.runtime(key).module.definitions;
    if (!catalog) throw new Error(`emulator ${key} plays no provider definitions`);
    return catalog;
  }

  /** Mints a token without the browser flow; the internal client is per definition for definitions. */
  issueToken(key: EmulatorKey, opts: IssueTokenOptions): IssuedToken {
    const { module, store } = this.runtime(key);
    const user = module.users.find((u) => u.id === opts.userId || u.email === opts.userId);
    if (!user) throw new Error(`no ${key} user ${opts.userId}`);
    const provider = opts.provider;
    if (module.definitions && opts.clientId === undefined && !provider) {
      throw new Error(`issuing a ${key} token needs a clientId or a provider`);
    }
    const clientId = opts.clientId ?? (provider ? `${INTERNAL_CLIENT_ID}.${provider}` : INTERNAL_CLIENT_ID);
    if (!store.clients.has(clientId)) {
      const secret = randomBytes(16).toString('hex');
      store.registerClient({
        clientId,
        clientSecret: secret,
        redirectUris: [],
        ...(provider ? { provider } : {}),
      });
    }
    const grant = store.createGrant(clientId, user.id, opts.scopes ?? []);
    const access = store.issueAccessToken(grant);
    const issued: IssuedToken = { access_token: access.token, user_id: user.id, client_id: clientId };
    if (grant.refreshToken) issued.refresh_token = grant.refreshToken;
    if (access.expiresAt !== null) issued.expires_in = Math.round((access.expiresAt - this.clock()) / 1000);
    return issued;
  }

  /** Revokes grants, and for an emulator of definitions the API keys the filter names too. */
  revokeGrants(key: EmulatorKey, filter?: GrantFilter): number {
    const runtime = this.runtime(key);
    const resolved = this.userFilter(key, filter);
    const keys = runtime.module.definitions?.revokeKeys(runtime.state, resolved) ?? 0;
    return runtime.store.revokeGrants(resolved) + keys;
  }

  private createControl(): EmulatorControl {
    const host = this;
    return {
      emulators: () => [...host.runtimes.keys()],
      prefix: (key) => host.runtime(key).module.prefix,
      oauthEndpoints(key) {
        const { prefix, oauth } = host.runtime(key).module;
        return { authorize: prefix + oauth.authorizePath, token: prefix + oauth.tokenPath };
      },
      registerClient(key, client) {
        if (!client.clientId || !client.clientSecret)
          throw new Error('clientId and clientSecret are required');
        const runtime = host.runtime(key);
        // A client of the definitions emulator serves one definition; without one it would serve none.
        if (runtime.module.definitions && !client.provider) {
          throw new Error(`a ${key} client needs the provider (definition key) it belongs to`);
        }
        runtime.store.registerClient(client);
      },
      clients: (key) => [...host.runtime(key).store.clients.values()],
      reset(opts = {}) {
        for (const runtime of host.runtimes.values()) {
          runtime.store.reset(opts);
          runtime.state = runtime.module.createState(runtime.ctx);
        }
        host.faults.clear();
        host.counters.reset();
      },
      expireAccessTokens: (key, filter) =>
        host.runtime(key).store.expireAccessTokens(host.userFilter(key, filter)),
      revokeGrants: (key, filter) => host.revokeGrants(key, filter),
      setAccessTokenTtl(key, seconds) {
        if (seconds !== null && !(Number.isFinite(seconds) && seconds >= 0)) {
          throw new Error('access token TTL must be a non-negative number of seconds or null');
        }
        host.runtime(key).store.ttlSeconds = seconds;
      },
      addFault(spec) {
        if (spec.emulator) host.runtime(spec.emulator);
        return host.faults.add(spec).id;
      },
      clearFaults: () => host.faults.clear(),
      counters: () => host.counters.snapshot(),
      resetCounters: () => host.counters.reset(),
      state: <S>(key: EmulatorKey) => host.runtime(key).state as S,
      users: (key) => host.runtime(key).module.users,
      issueToken: (key, opts) => host.issueToken(key, opts),
      oauth: (key) => host.runtime(key).store,
      registerDefinition: (definition) => host.catalog('definitions').register(definition),
      definitions: () => host.catalog('definitions').keys(),
      revokeApiKey(provider, key) {
        host.catalog('definitions').revokeKey(host.runtime('definitions').state, provider, key);
      },
      exportOAuth() {
        const out: OAuthSnapshots = {};
        for (const [key, runtime] of host.runtimes) out[key] = runtime.store.snapshot();
        return out;
      },
      importOAuth(snapshots) {
        for (const [key, snapshot] of Object.entries(snapshots) as [EmulatorKey, OAuthSnapshot][]) {
          host.runtimes.get(key)?.store.restore(snapshot);
        }
      },
    };
  }
}

/** Scheme and host as the client saw them (a proxy in front may say so with X-Forwarded-*). */
export function requestOrigin(req: FastifyRequest): string {
  const forwardedProto = firstHeader(req.headers['x-forwarded-proto']);
  const forwardedHost = firstHeader(req.headers['x-forwarded-host']);
  const proto = forwardedProto ?? req.protocol;
  const host = forwardedHost ?? req.headers.host ?? `${req.hostname}`;
  return `${proto}://${host}`;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  const first = raw?.split(',')[0]?.trim();
  return first ? first : undefined;
}
