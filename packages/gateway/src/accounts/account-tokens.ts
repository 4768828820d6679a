import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { unknownConnection } from '../connections/unknown-connection.js';
import { Problem } from '../errors/problem.js';
import { recordEvent } from '../events/outbox.js';
import type { GatewayMetrics } from '../metrics/metrics.js';
import { type ProviderOAuthClient, refreshAccessToken, TokenEndpointError } from '../oauth/client.js';
import type { ConnectionPlace, ProviderEndpoints } from '../oauth/endpoints.js';
import { PROVIDERS, type ProviderDefinition, type ProviderKey } from '../providers/catalog.js';
import type { Keyring } from '../secrets/keyring.js';
import { ACCOUNT_ACCESS_TOKEN, ACCOUNT_REFRESH_TOKEN } from '../secrets/sealed-columns.js';
import {
  type AccountRow,
  type AccountWithConnection,
  accountsWithIdleRefreshTokens,
  claimRefreshLease,
  deactivateAccount,
  findAccount,
  findAccountByIdentifier,
  listAccounts,
  lockAccount,
  releaseRefreshLease,
  storeTokens,
  touchAccounts,
  upsertPendingAccount,
} from '../store/accounts.js';
import { type ConnectionRow, findConnectionByName, listConnections } from '../store/connections.js';
import type { Database, Queryable } from '../store/db.js';
import type { Tracing } from '../tracing/tracing.js';
import type { OutboundFetch } from '../upstream/http.js';
import { sealTokens } from './sealed-tokens.js';
import { accountView } from './view.js';

/**
 * How long a cached credential is trusted without the database: NOTIFY drops it at once on every
 * change; this bounds the damage of a notification missed for any other reason.
 */
const CACHE_TTL_MS = 60_000;

/** NOTIFY channel: an account's credentials changed; every process drops its cached copy. */
export const ACCOUNT_CHANNEL = 'portico_account';
const LAST_USED_FLUSH_MS = 5_000;

/** What a tool or the proxy needs to call a provider as one end user. */
export interface Credential {
  accountId: string;
  environmentId: string;
  connectionId: string;
  connectionName: string;
  identifier: string;
  provider: ProviderDefinition;
  endpoints: ProviderEndpoints;
  accessToken: string;
  /** Epoch ms; null when the provider's tokens do not expire. */
  expiresAt: number | null;
  version: number;
  /** Epoch ms of the refresh this process made to get this token (execution records report it). */
  refreshedAt?: number;
}

export interface AccountRef {
  environmentId: string;
  connectionName: string;
  identifier: string;
}

/**
 * Whether a caller may create an end user's account on a connection (auth/access.ts decides: the
 * `links` scope, and the connection within reach): the refusal to answer instead, or undefined.
 * Without one, an end user's first call creates the account PENDING_AUTH.
 */
export type NewAccountRefusal = ((identifier: string, connectionName: string) => Problem | undefined) & {
  /** The connections the caller may reach (null: all), among which an unknown name's suggestion is chosen. */
  readonly within?: readonly string[] | null;
};

export interface AccountTokensDeps {
  db: Database;
  keyring: Keyring;
  logger: Logger;
  /** The connection row and its plaintext client credentials, read through `db` (the open transaction). */
  connection(
    connectionId: string,
    db: Queryable,
  ): Promise<{ row: ConnectionRow; client: ProviderOAuthClient }>;
  /**
   * Where the provider is for this connection and, when given, this account (whose token response
   * may name its own API host).
   */
  endpoints(
    provider: ProviderDefinition,
    connection: ConnectionPlace,
    accountMetadata?: Record<string, unknown>,
  ): ProviderEndpoints;
  /** How token, revocation and user-info requests reach the provider (upstream/http.ts OutboundFetch). */
  outboundFetch: OutboundFetch;
  /** The definition of a connection's provider: built-in, or one of the environment's own. */
  provider(environmentId: string, key: string): Promise<ProviderDefinition>;
  /** The error for an account that cannot be used, carrying a fresh authorization link. */
  notActive(account: AccountWithConnection | AccountRow): Promise<Problem>;
  /** A fresh authorization link for the account, created in `tx` (for the expiry event). */
  authorizationLink(accountId: string, tx: Queryable): Promise<{ link: string; expires_at: string }>;
  clock?: () => number;
  metrics?: GatewayMetrics;
  /** Most credentials held in memory (PORTICO_CREDENTIAL_CACHE_SIZE); the least recently used go first. */
  cacheSize?: number;
  /** Set only when tracing is on: each refresh is then a span. */
  tracing?: Tracing | undefined;
}

/** About 1 KB per credential: 100,000 hold a replica's working set in roughly 100 MB at most. */
export const DEFAULT_CREDENTIAL_CACHE_SIZE = 100_000;

type RefreshOutcome = { ok: true; credential: Credential } | { ok: false; account: AccountRow };

/** What the claiming transaction of a refresh decided. */
type RefreshStep =
  | { failed: Problem }
  | { done: RefreshOutcome }
  | { wait: true }
  | {
      claimed: {
        row: AccountRow;
        connection: ConnectionRow;
        client: ProviderOAuthClient;
        provider: ProviderDefinition;
      };
    };

/** How long a refresh claim lasts: the provider call's timeout (10 s) and both commits, with room. */
const REFRESH_LEASE_MS = 30_000;
/**
 * The keep-alive job (refreshIdleAccounts) reads idle accounts IDLE_REFRESH_BATCH at a time (on
 * their index), refreshes at most IDLE_REFRESH_PER_TICK per run and starts at most
 * IDLE_REFRESH_PER_SECOND refreshes a second: a million accounts going idle together are worked off
 * over hours (24,000 a day at the hourly tick) instead of hitting a provider's token endpoint and
 * the database in one burst.
 */
const IDLE_REFRESH_BATCH = 100;
const IDLE_REFRESH_PER_TICK = 1000;
const IDLE_REFRESH_PER_SECOND = 5;

/**
 * The token lifecycle, in one module: tools and the proxy only ask it for a valid access token.
 *
 * - Hot path: an active account with an unexpired token is served from memory (no database read);
 *   the cache is dropped on refresh, re-authorization and deletion, in every process (NOTIFY).
 * - Refresh happens before expiry (the provider's margin) or once after an upstream 401. Exactly
 *   one refresh per account runs at a time across processes: an in-process single flight, then a
 *   row lock in the database, re-reading the token under the lock. The new token set is committed
 *   before it is used, so a rotated refresh token is never lost.
 */
export class AccountTokens {
  /**
   * The credential cache, least recently used first (a Map keeps insertion order, and a hit moves
   * its entry to the end), bounded by `cacheSize`: memory stays flat whatever the number of
   * accounts, and an evicted account costs one read on its next call.
   */
  private readonly byAccount = new Map<string, { credential: Credential; until: number }>();
  private readonly byRef = new Map<string, string>();
  /** Identifier + provider → its one active account, for tools called without connection_name. */
  private readonly byIdentity = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<RefreshOutcome>>();
  /** Names this process in refresh leases and in its change notifications. */
  private readonly leaseOwner = `proc_${randomBytes(8).toString('hex')}`;
  /** Epoch ms of each account's latest use, written in batches. */
  private readonly lastUsed = new Map<string, number>();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly clock: () => number;
  private readonly cacheSize: number;

  constructor(private readonly deps: AccountTokensDeps) {
    this.clock = deps.clock ?? Date.now;
    this.cacheSize = Math.max(1, deps.cacheSize ?? DEFAULT_CREDENTIAL_CACHE_SIZE);
    deps.metrics?.watchCredentialCache(() => this.byAccount.size);
    this.flushTimer = setInterval(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS);
    this.flushTimer.unref();
  }

  private readonly changeListeners = new Set<(accountId: string) => void>();

  async start(): Promise<void> {
    await this.deps.db.listen(ACCOUNT_CHANNEL, (payload) => {
      const [accountId = '', origin] = payload.split(' ');
      // This process applied its own changes when it made them.
      if (origin === this.leaseOwner) return;
      this.forget(accountId);
      // Which account an identifier resolves to may have changed (one connected, one removed).
      this.byIdentity.clear();
      this.tellChanged(accountId);
    });
    // A deletion or re-authorization notified while the listener was down never arrived.
    this.deps.db.onNotificationsMissed(() => {
      this.byAccount.clear();
      this.byRef.clear();
      this.byIdentity.clear();
    });
  }

  /** The remembered credential when it needs no refresh, without waiting (the proxy's hot path). */
  cachedForRef(ref: AccountRef): Credential | undefined {
    const accountId = this.byRef.get(refKey(ref));
    if (accountId !== undefined) return this.fresh(accountId);
    this.deps.metrics?.credentialLookup(false);
    return undefined;
  }

  /** A valid access token for the account (connection name + identifier). */
  async forRef(ref: AccountRef, refuseNew?: NewAccountRefusal): Promise<Credential> {
    const accountId = this.byRef.get(refKey(ref));
    if (accountId) {
      const cached = this.fresh(accountId);
      if (cached) return cached;
      return this.forAccount(accountId);
    }
    const account = await findAccountByIdentifier(
      this.deps.db,
      ref.environmentId,
      ref.connectionName,
      ref.identifier,
    );
    if (!account) {
      const connection = await findConnectionByName(this.deps.db, ref.environmentId, ref.connectionName);
      if (!connection) {
        // Without a refusal the caller's grant is whole: every connection is within its reach.
        throw await unknownConnection(
          this.deps.db,
          ref.environmentId,
          ref.connectionName,
          refuseNew ? refuseNew.within : null,
          'list them with GET /api/v1/connections.',
        );
      }
      return this.pendingOrAuthorized(connection, ref.identifier, refuseNew);
    }
    return this.load(account);
  }

  /**
   * A valid access token for the identifier's single active account of `provider` (tools called
   * without connection_name). The resolution is remembered until any account changes.
   */
  async forIdentity(
    environmentId: string,
    identifier: string,
    provider: ProviderKey,
    refuseNew?: NewAccountRefusal,
  ): Promise<Credential> {
    const key = `${environmentId}\u0000${identifier}\u0000${provider}`;
    // While the listener is unconfirmed, another account may have been connected or removed unheard.
    const known = this.deps.db.listening() ? this.byIdentity.get(key) : undefined;
    if (known) return this.fresh(known) ?? this.forAccount(known);
    const accounts = await listAccounts(this.deps.db, environmentId, { identifier, provider, limit: 20 });
    const active = accounts.filter((a) => a.status === 'ACTIVE');
    if (active.length === 1) {
      const credential = await this.forAccount(active[0]!.id);
      this.byIdentity.set(key, credential.accountId);
      return credential;
    }
    if (active.length > 1) {
      throw new Problem(
        'ambiguous_account',
        `Identifier "${identifier}" has ${active.length} active ${provider} accounts (connections: ${active.map((a) => a.connection_name).join(', ')}); pass connection_name to choose one.`,
        { extensions: { connection_names: active.map((a) => a.connection_name) } },
      );
    }
    // Not active: let the lifecycle explain it and hand out a fresh authorization link.
    if (accounts.length) return this.forAccount(accounts[0]!.id);
    // Never seen: when one connection serves the provider, the user can be sent to it at once.
    const connections = await listConnections(this.deps.db, environmentId, { provider, limit: 20 });
    if (connections.length === 1) return this.pendingOrAuthorized(connections[0]!, identifier, refuseNew);
    throw new Problem(
      'account_not_found',
      connections.length
        ? `Identifier "${identifier}" has no ${provider} account and ${connections.length} connections serve ${provider} (${connections.map((c) => c.name).join(', ')}); pass connection_name to choose one, and the answer carries the link the user opens.`
        : `Identifier "${identifier}" has no ${provider} account and no connection serves ${provider}; create one with POST /api/v1/connections.`,
      connections.length ? { extensions: { connection_names: connections.map((c) => c.name) } } : {},
    );
  }

  /**
   * An end user who has never authorized the connection: their account is created PENDING_AUTH as
   * get-or-create would, and the answer is account_not_active with the link that authorizes it;
   * or, for a caller that may not create accounts, `refuseNew`'s answer and nothing created.
   */
  private async pendingOrAuthorized(
    connection: ConnectionRow,
    identifier: string,
    refuseNew: NewAccountRefusal | undefined,
  ): Promise<Credential> {
    const refused = refuseNew?.(identifier, connection.name);
    if (refused) throw refused;
    const { db } = this.deps;
    const account = await db.transaction(async (tx) => {
      const row = await upsertPendingAccount(tx, connection.environment_id, connection.id, identifier);
      if (row.inserted)
        await recordEvent(db, tx, {
          environmentId: connection.environment_id,
          type: 'connected_account.created',
          subject: row.id,
          data: accountView(row, connection),
        });
      return row;
    });
    // Another request may have created and authorized it meanwhile.
    if (account.status === 'ACTIVE') return this.forAccount(account.id);
    throw await this.deps.notActive(account);
  }

  /** A valid access token for the account id. */
  async forAccount(accountId: string): Promise<Credential> {
    const cached = this.fresh(accountId);
    if (cached) return cached;
    const account = await findAccount(this.deps.db, accountId);
    if (!account) throw new Problem('account_not_found', `No connected account ${accountId}.`);
    return this.load(account);
  }

  /**
   * After the provider refused `stale` with a 401: refresh once (unless another request or process
   * already did) and return the new credential. Throws when the account cannot be refreshed.
   */
  async afterUnauthorized(stale: Credential): Promise<Credential> {
    this.forget(stale.accountId);
    const outcome = await this.refresh(stale.accountId, stale.accessToken);
    if (!outcome.ok) throw await this.deps.notActive(outcome.account);
    return outcome.credential;
  }

  /**
   * Refreshes accounts whose refresh token the provider would soon expire for lack of use (Google,
   * Microsoft), so users who are idle for months are not lost; a few at a time. Returns how many
   * were refreshed. A refused grant expires the account as any refresh would.
   */
  async refreshIdleAccounts(
    opts: { limit?: number; maxPerTick?: number; perSecond?: number; concurrency?: number } = {},
  ): Promise<number> {
    // Refreshed a fortnight before the provider's limit, so a day of downtime changes nothing.
    const byProvider = Object.values(PROVIDERS).flatMap((p) =>
      p.oauth?.refreshTokenIdleDays !== undefined
        ? [{ provider: p.key, idleDays: p.oauth.refreshTokenIdleDays - 14 }]
        : [],
    );
    const batch = Math.max(1, opts.limit ?? IDLE_REFRESH_BATCH);
    const maxPerTick = Math.max(1, opts.maxPerTick ?? IDLE_REFRESH_PER_TICK);
    const gapMs = 1000 / Math.max(0.001, opts.perSecond ?? IDLE_REFRESH_PER_SECOND);
    // Refreshes start on a shared schedule, one every gapMs, whatever the concurrency.
    // Real time, not this.clock (tests set that to move token expiry, not to pace).
    let nextStart = performance.now();
    const turn = async () => {
      const now = performance.now();
      const wait = nextStart - now;
      nextStart = Math.max(now, nextStart) + gapMs;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    };
    // An account whose refresh failed (the provider down) is still idle and comes first again:
    // tried once per run, and a batch of nothing new ends the run.
    const tried = new Set<string>();
    let refreshed = 0;
    while (tried.size < maxPerTick && !this.closed) {
      const found = await accountsWithIdleRefreshTokens(
        this.deps.db,
        byProvider,
        // Enough to see past the accounts that failed this run (refreshed ones are no longer idle).
        Math.min(batch, maxPerTick - tried.size) + tried.size - refreshed,
      );
      const ids = found.filter((id) => !tried.has(id)).slice(0, maxPerTick - tried.size);
      if (!ids.length) break;
      for (const id of ids) tried.add(id);
      refreshed += await this.refreshEach(ids, turn, opts.concurrency ?? 4);
    }
    if (tried.size) this.deps.logger.info({ accounts: tried.size, refreshed }, 'idle refresh tokens renewed');
    return refreshed;
  }

  private async refreshEach(ids: string[], turn: () => Promise<void>, concurrency: number): Promise<number> {
    let refreshed = 0;
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id && !this.closed; id = queue.shift()) {
        await turn();
        try {
          const row = await findAccount(this.deps.db, id);
          if (!row?.access_token) continue;
          const current = this.deps.keyring.open(row.access_token, {
            ...ACCOUNT_ACCESS_TOKEN,
            rowId: row.id,
          });
          if ((await this.refresh(id, current)).ok) refreshed++;
        } catch (error) {
          this.deps.logger.warn({ err: error, account_id: id }, 'keep-alive refresh failed');
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return refreshed;
  }

  /** Drops the cached credential of an account in this process and, via NOTIFY, in all others. */
  async invalidate(accountId: string): Promise<void> {
    this.forget(accountId);
    // Here at once; other processes when the notification arrives.
    this.byIdentity.clear();
    this.tellChanged(accountId);
    await this.notifyChange(accountId).catch(() => {});
  }

  /**
   * Calls `listener` when an account was authorized, disconnected or otherwise changed, here at
   * once and from other processes when their notification arrives (what is listed per account,
   * such as a remote MCP server's tools, is then asked again).
   */
  onAccountChanged(listener: (accountId: string) => void): void {
    this.changeListeners.add(listener);
  }

  private tellChanged(accountId: string): void {
    for (const listener of this.changeListeners) listener(accountId);
  }

  /** Tells every process an account changed (after `tx` commits, when given), naming this one. */
  private notifyChange(accountId: string, tx?: Queryable): Promise<void> {
    return this.deps.db.notify(ACCOUNT_CHANNEL, `${accountId} ${this.leaseOwner}`, tx);
  }

  private closed = false;

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.flushTimer);
    await this.flushLastUsed();
  }

  /** Writes the batched last-used times (also on an interval). */
  async flushLastUsed(): Promise<void> {
    if (!this.lastUsed.size) return;
    const batch = new Map([...this.lastUsed].map(([id, at]) => [id, new Date(at)]));
    this.lastUsed.clear();
    try {
      await touchAccounts(this.deps.db, batch);
    } catch (error) {
      this.deps.logger.warn({ err: error, accounts: batch.size }, 'could not record last_used_at');
    }
  }

  private forget(accountId: string): void {
    const credential = this.byAccount.get(accountId)?.credential;
    this.byAccount.delete(accountId);
    if (!credential) return;
    // The same connection and identifier may point to another account since (re-created).
    const key = refKey(credential);
    if (this.byRef.get(key) === accountId) this.byRef.delete(key);
  }

  /** The cached credential when it is far enough from expiry; records the use. */
  private fresh(accountId: string): Credential | undefined {
    const cached = this.byAccount.get(accountId);
    const credential = cached?.credential;
    if (
      !cached ||
      !credential ||
      // While the listener is down a deletion elsewhere would go unheard: read through instead.
      !this.deps.db.listening() ||
      cached.until <= this.clock() ||
      this.needsRefresh(credential.provider, credential.expiresAt)
    ) {
      this.deps.metrics?.credentialLookup(false);
      return undefined;
    }
    this.deps.metrics?.credentialLookup(true);
    // Most recently used now: to the end of the eviction order.
    this.byAccount.delete(accountId);
    this.byAccount.set(accountId, cached);
    this.lastUsed.set(accountId, this.clock());
    return credential;
  }

  private needsRefresh(provider: ProviderDefinition, expiresAt: number | null): boolean {
    const margin = provider.oauth?.refreshMarginSeconds ?? 0;
    return expiresAt !== null && expiresAt - margin * 1000 <= this.clock();
  }

  private async load(account: AccountWithConnection): Promise<Credential> {
    if (account.status !== 'ACTIVE' || !account.access_token) throw await this.deps.notActive(account);
    const provider = await this.deps.provider(account.environment_id, account.provider);
    const expiresAt = account.token_expires_at?.getTime() ?? null;
    if (this.needsRefresh(provider, expiresAt)) {
      const outcome = await this.refresh(account.id);
      if (!outcome.ok) throw await this.deps.notActive(outcome.account);
      return this.remember(outcome.credential);
    }
    return this.remember(
      await this.credentialOf(
        account,
        {
          name: account.connection_name,
          sandbox: account.sandbox,
          tenant: account.tenant,
          parameters: account.connection_parameters,
          mcp_server: account.mcp_server,
        },
        provider,
      ),
    );
  }

  private remember(credential: Credential): Credential {
    this.byAccount.delete(credential.accountId);
    this.byAccount.set(credential.accountId, { credential, until: this.clock() + CACHE_TTL_MS });
    this.byRef.set(refKey(credential), credential.accountId);
    while (this.byAccount.size > this.cacheSize) {
      const oldest = this.byAccount.keys().next().value as string;
      this.forget(oldest);
      this.deps.metrics?.credentialEvicted();
    }
    // Identifier resolutions are dropped wholesale on any change; past the bound, likewise.
    if (this.byIdentity.size > this.cacheSize) this.byIdentity.clear();
    this.lastUsed.set(credential.accountId, this.clock());
    return credential;
  }

  private async credentialOf(
    account: AccountRow,
    connection: ConnectionPlace & { name: string },
    provider: ProviderDefinition,
  ): Promise<Credential> {
    return {
      accountId: account.id,
      environmentId: account.environment_id,
      connectionId: account.connection_id,
      connectionName: connection.name,
      identifier: account.identifier,
      provider,
      endpoints: this.deps.endpoints(provider, connection, account.provider_metadata),
      accessToken: this.deps.keyring.open(account.access_token!, {
        ...ACCOUNT_ACCESS_TOKEN,
        rowId: account.id,
      }),
      expiresAt: account.token_expires_at?.getTime() ?? null,
      version: account.token_version,
    };
  }

  /** One refresh per account per process at a time; callers share its outcome. */
  private refresh(accountId: string, staleAccessToken?: string): Promise<RefreshOutcome> {
    let pending = this.inflight.get(accountId);
    if (!pending) {
      const tracing = this.deps.tracing;
      pending = (
        tracing
          ? tracing.inSpan(
              'portico.token.refresh',
              SpanKind.INTERNAL,
              { 'portico.account.id': accountId },
              async (span) => {
                const outcome = await this.refreshWithLease(accountId, staleAccessToken);
                span.setAttribute(
                  'portico.refresh.outcome',
                  outcome.ok ? 'refreshed' : outcome.account.status,
                );
                if (outcome.ok) span.setAttribute('portico.provider', outcome.credential.provider.key);
                return outcome;
              },
            )
          : this.refreshWithLease(accountId, staleAccessToken)
      ).finally(() => this.inflight.delete(accountId));
      this.inflight.set(accountId, pending);
    }
    return pending;
  }

  /**
   * Refreshes with the provider call outside any transaction, so a slow token endpoint holds no
   * database connection and no row lock:
   * 1. a short transaction locks the row, re-checks it (another request or process may have
   *    refreshed meanwhile) and takes a lease (owner + expiry) unless another owner holds one;
   * 2. the provider is called with the refresh token (10 s timeout; the lease lasts 30 s);
   * 3. a short transaction stores the new token set if the row is still at the version read
   *    (compare-and-swap), releasing the lease, and notifies every process.
   * A claimant that dies leaves a lease that runs out; whoever waits then takes over. The one
   * window no gateway can close: the provider rotated the refresh token and the process died before
   * step 3; the old token is then refused and the account expires.
   */
  private async refreshWithLease(accountId: string, staleAccessToken?: string): Promise<RefreshOutcome> {
    const { keyring, logger } = this.deps;
    const started = this.clock();
    for (let waited = 0; ; ) {
      const step = await this.deps.db.transaction(async (tx): Promise<RefreshStep> => {
        const row = await lockAccount(tx, accountId);
        if (!row) return { failed: new Problem('account_not_found', `No connected account ${accountId}.`) };
        if (row.status !== 'ACTIVE' || !row.access_token) return { done: { ok: false, account: row } };
        const { row: connection, client } = await this.deps.connection(row.connection_id, tx);
        const provider = await this.deps.provider(connection.environment_id, connection.provider);
        const current = keyring.open(row.access_token, { ...ACCOUNT_ACCESS_TOKEN, rowId: row.id });
        // Another request or process refreshed while we waited: use its token.
        const refreshedElsewhere = staleAccessToken
          ? current !== staleAccessToken
          : !this.needsRefresh(provider, row.token_expires_at?.getTime() ?? null);
        if (refreshedElsewhere) {
          return {
            done: {
              ok: true,
              credential: await this.credentialOf(row, connection, provider),
            },
          };
        }
        if (!row.refresh_token) {
          await this.expire(
            tx,
            row.id,
            connection,
            'no_refresh_token',
            'The access token expired and the provider issued no refresh token.',
          );
          return { done: { ok: false, account: { ...row, status: 'EXPIRED' } } };
        }
        if (!(await claimRefreshLease(tx, row.id, this.leaseOwner, REFRESH_LEASE_MS))) return { wait: true };
        return { claimed: { row, connection, client, provider } };
      });
      if ('failed' in step) throw step.failed;
      if ('done' in step) return this.settle(accountId, step.done);
      if ('wait' in step) {
        // Another process is refreshing; its lease ends with its commit or, if it died, on expiry.
        if (waited > REFRESH_LEASE_MS + 5_000) {
          throw new Problem(
            'upstream_unavailable',
            'Another gateway process has been refreshing this account for too long; retry shortly.',
            { retryable: true, retryAfterMs: 1000 },
          );
        }
        const pause = Math.min(500, 50 * 2 ** Math.min(4, Math.floor(waited / 200)));
        await new Promise((resolve) => setTimeout(resolve, pause));
        waited += pause;
        continue;
      }
      const { row, connection, client, provider } = step.claimed;
      const refreshToken = keyring.open(row.refresh_token!, { ...ACCOUNT_REFRESH_TOKEN, rowId: row.id });
      const endpoints = this.deps.endpoints(provider, connection);
      let tokens: Awaited<ReturnType<typeof refreshAccessToken>>;
      const askedAt = performance.now();
      try {
        tokens = await refreshAccessToken(
          provider,
          endpoints,
          client,
          refreshToken,
          this.deps.outboundFetch,
          this.deps.tracing?.traceHeaders(),
        );
        this.deps.metrics?.refresh(provider.key, 'ok', performance.now() - askedAt);
      } catch (error) {
        const refused = error instanceof TokenEndpointError && error.kind === 'invalid_grant';
        this.deps.metrics?.refresh(provider.key, refused ? 'refused' : 'failed', performance.now() - askedAt);
        logger.warn(
          {
            account_id: row.id,
            provider: provider.key,
            kind: (error as TokenEndpointError).kind,
            reason: (error as Error).message,
          },
          'refresh failed',
        );
        if (error instanceof TokenEndpointError && error.kind === 'invalid_grant') {
          await this.deps.db.transaction(async (tx) => {
            await this.expire(
              tx,
              row.id,
              connection,
              'refresh_refused',
              `The provider refused the refresh token (${error.message}).`,
            );
            await this.notifyChange(row.id, tx);
          });
          return this.settle(accountId, { ok: false, account: { ...row, status: 'EXPIRED' } });
        }
        await releaseRefreshLease(this.deps.db, row.id, this.leaseOwner).catch(() => {});
        if (!(error instanceof TokenEndpointError)) throw error;
        throw refreshProblem(error, connection.name, provider);
      }
      const expiresAt = tokens.expiresIn ? new Date(this.clock() + tokens.expiresIn * 1000) : null;
      const sealed = sealTokens(keyring, row.id, tokens);
      const version = await this.deps.db.transaction(async (tx) => {
        const stored = await storeTokens(
          tx,
          row.id,
          {
            ...sealed,
            // Providers that do not rotate send no refresh token: keep the one we have.
            refreshToken: sealed.refreshToken ?? row.refresh_token,
            expiresAt,
            scopes: tokens.scopes ?? row.scopes,
          },
          { refreshed: true, expectedVersion: row.token_version },
        );
        if (stored !== undefined) await this.notifyChange(row.id, tx);
        return stored;
      });
      if (version === undefined) {
        // The account changed while the provider answered (disconnected, authorized again): start over.
        logger.warn(
          { account_id: row.id, provider: provider.key },
          'refreshed token discarded: the account changed',
        );
        staleAccessToken = undefined;
        continue;
      }
      logger.info(
        {
          account_id: row.id,
          provider: provider.key,
          rotated: Boolean(tokens.refreshToken),
          duration_ms: this.clock() - started,
        },
        'access token refreshed',
      );
      return this.settle(accountId, {
        ok: true,
        credential: {
          ...(await this.credentialOf(row, connection, provider)),
          accessToken: tokens.accessToken,
          expiresAt: expiresAt?.getTime() ?? null,
          version,
          refreshedAt: this.clock(),
        },
      });
    }
  }

  /**
   * Marks the account EXPIRED and records `connected_account.expired` in the same transaction, with
   * a fresh authorization link for the application to show the user.
   */
  private async expire(
    tx: Queryable,
    accountId: string,
    connection: ConnectionRow,
    code: string,
    reason: string,
  ): Promise<void> {
    const row = await deactivateAccount(tx, accountId, 'EXPIRED', reason);
    if (!row) return;
    const link = await this.deps.authorizationLink(row.id, tx);
    await recordEvent(this.deps.db, tx, {
      environmentId: row.environment_id,
      type: 'connected_account.expired',
      subject: row.id,
      data: {
        ...accountView(row, connection),
        reason: { code, message: reason },
        authorization_link: link,
      },
    });
  }

  private settle(accountId: string, outcome: RefreshOutcome): RefreshOutcome {
    if (outcome.ok) this.remember(outcome.credential);
    else this.forget(accountId);
    return outcome;
  }
}

function refreshProblem(
  error: TokenEndpointError,
  connectionName: string,
  provider: ProviderDefinition,
): Problem {
  if (error.kind === 'invalid_client') {
    return new Problem(
      'upstream_unauthorized',
      `${provider.displayName} rejected the client credentials of connection "${connectionName}" (${error.message}); update client_id/client_secret with PATCH /api/v1/connections/${connectionName}.`,
      { retryable: false },
    );
  }
  if (error.kind === 'transient') {
    return new Problem(
      'upstream_unavailable',
      `${provider.displayName} could not refresh the access token right now (${error.message}); retry shortly. The account stays active.`,
      { retryable: true, retryAfterMs: 1000 },
    );
  }
  return new Problem(
    'upstream_error',
    `${provider.displayName} answered the token refresh with something unusable (${error.message}).`,
  );
}

function refKey(ref: AccountRef): string {
  return `${ref.environmentId}\u0000${ref.connectionName}\u0000${ref.identifier}`;
}
