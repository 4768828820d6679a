import type { Logger } from 'pino';
import type { ProviderCatalogService } from '../connections/providers.js';
import type { ConnectionService } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import { recordEvent, recordEvents } from '../events/outbox.js';
import { type ProviderOAuthClient, revokeGrant } from '../oauth/client.js';
import type { ConnectionPlace, ProviderEndpoints } from '../oauth/endpoints.js';
import { metadataFault } from '../oauth/endpoints.js';
import { fetchUserInfo } from '../oauth/user-info.js';
import type { ProviderDefinition } from '../providers/catalog.js';
import type { Keyring } from '../secrets/keyring.js';
import { ACCOUNT_ACCESS_TOKEN, ACCOUNT_REFRESH_TOKEN } from '../secrets/sealed-columns.js';
import {
  type AccountListing,
  type AccountRow,
  type AccountWithConnection,
  accountsOfConnection,
  countAccounts,
  deactivateAccount,
  deleteAbandonedPendingAccounts,
  findAccount,
  findAccountByIdentifier,
  foldAccountCounts,
  listAccountListings,
  recentlyExpiredAccounts,
  storeTokens,
  upsertPendingAccount,
} from '../store/accounts.js';
import type { ConnectionRow } from '../store/connections.js';
import type { Database } from '../store/db.js';
import type { OutboundFetch } from '../upstream/http.js';
import type { AccountTokens } from './account-tokens.js';
import type { AccountView, ImportAccountBody, ListAccountsQuery } from './schemas.js';
import { sealTokens } from './sealed-tokens.js';
import { accountView } from './view.js';

/**
 * Account count deltas folded per statement, the pause between statements and the statements per
 * run: up to 100,000 account changes per run, far above what a deployment makes in the seconds
 * between runs, in short statements.
 */
const FOLD_BATCH = 5000;
const FOLD_PAUSE_MS = 20;
const FOLD_MAX_BATCHES = 20;

export interface AccountsDeps {
  db: Database;
  keyring: Keyring;
  logger: Logger;
  connections: ConnectionService;
  accountTokens: AccountTokens;
  endpoints(provider: ProviderDefinition, connection: ConnectionPlace): ProviderEndpoints;
  providers: ProviderCatalogService;
  /** How token, revocation and user-info requests reach the provider (upstream/http.ts OutboundFetch). */
  outboundFetch: OutboundFetch;
}

/** Connected accounts: listing, reading and disconnecting (revoking at the provider). */
export class AccountService {
  constructor(private readonly deps: AccountsDeps) {}

  view(row: AccountListing): AccountView {
    return accountView(row, { name: row.connection_name, provider: row.provider });
  }

  async list(
    environmentId: string,
    query: ListAccountsQuery & { connection_names?: readonly string[] | null },
  ): Promise<{ data: AccountView[]; next_page_token: string | null }> {
    const page = await this.listRows(environmentId, query);
    return { data: page.rows.map((r) => this.view(r)), next_page_token: page.nextPageToken };
  }

  /** One page of accounts as stored (with their connection's facts), newest id last. */
  async listRows(
    environmentId: string,
    query: ListAccountsQuery & { provider?: string; connection_names?: readonly string[] | null },
  ): Promise<{ rows: AccountListing[]; nextPageToken: string | null }> {
    const limit = query.page_size ?? 50;
    const rows = await listAccountListings(this.deps.db, environmentId, {
      ...(query.connection_name ? { connectionName: query.connection_name } : {}),
      ...(query.connection_names ? { connectionNames: query.connection_names } : {}),
      ...(query.identifier ? { identifier: query.identifier } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(query.provider ? { provider: query.provider } : {}),
      ...(query.page_token ? { after: decodeCursor(query.page_token) } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      rows: page,
      nextPageToken: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null,
    };
  }

  async get(environmentId: string, id: string): Promise<AccountWithConnection> {
    const row = await findAccount(this.deps.db, id);
    if (!row || row.environment_id !== environmentId) throw this.notFound(id);
    return row;
  }

  notFound(id: string): Problem {
    return new Problem(
      'account_not_found',
      `No connected account ${id}; list accounts with GET /api/v1/connected-accounts?identifier=….`,
    );
  }

  /** The account of `identifier` on the named connection. */
  async getByRef(
    environmentId: string,
    connectionName: string,
    identifier: string,
  ): Promise<AccountWithConnection> {
    const row = await findAccountByIdentifier(this.deps.db, environmentId, connectionName, identifier);
    if (row) return row;
    // Tell a missing connection from a missing account: the fix differs.
    await this.deps.connections.get(environmentId, connectionName);
    throw new Problem(
      'account_not_found',
      `No connected account for identifier "${identifier}" on connection "${connectionName}"; create one with an authorization link and let the user authorize.`,
    );
  }

  /**
   * A new PENDING_AUTH account for `identifier` on the named connection, to be authorized through
   * a link; account_exists when there is one already.
   */
  async create(
    environmentId: string,
    connectionName: string,
    identifier: string,
  ): Promise<AccountWithConnection> {
    const connection = await this.deps.connections.get(environmentId, connectionName);
    if (await findAccountByIdentifier(this.deps.db, environmentId, connectionName, identifier)) {
      throw new Problem(
        'account_exists',
        `Identifier "${identifier}" already has an account on connection "${connectionName}"; read it instead of creating it.`,
      );
    }
    const row = await upsertPendingAccount(this.deps.db, environmentId, connection.id, identifier);
    return this.get(environmentId, row.id);
  }

  /**
   * An account from a credential the application already holds (migrating from another gateway, or
   * tokens obtained elsewhere): stored sealed and ACTIVE, after the provider's user-info request
   * accepted it when the definition has one; the token lifecycle takes over from there. An account
   * that exists already gets the new credential.
   */
  async importCredentials(environmentId: string, body: ImportAccountBody): Promise<AccountWithConnection> {
    const connection = await this.deps.connections.get(environmentId, body.connection_name);
    const provider = await this.deps.providers.resolve(environmentId, connection.provider);
    const tokens = importedTokens(provider, body);
    // A URL in the metadata (Salesforce's instance_url) is where the proxy would send the user's
    // token: it must stay within the definition's domains (the sandbox's emulators replace it anyway).
    const fault = !connection.sandbox && body.metadata ? metadataFault(provider, body.metadata) : undefined;
    if (fault) {
      throw new Problem(
        'invalid_input',
        `metadata: ${fault.message}; give the URL the provider returned for this account (an https URL on ${provider.displayName}'s own domains).`,
        { errors: [fault] },
      );
    }
    const endpoints = this.deps.endpoints(provider, connection);
    const metadata: Record<string, unknown> = { ...body.metadata };
    if (endpoints.userInfoUrl && body.verify !== false && tokens.accessToken) {
      const info = await fetchUserInfo(
        provider,
        endpoints.userInfoUrl,
        tokens.accessToken,
        this.deps.outboundFetch,
      );
      if (!info.ok && info.refused)
        throw new Problem(
          'credentials_invalid',
          `${provider.displayName} refused the credential (${info.message}); import a current one, or pass "verify": false to store it unchecked.`,
        );
      if (!info.ok)
        throw new Problem(
          'upstream_unavailable',
          `${provider.displayName} could not check the credential (${info.message}); retry shortly.`,
          {
            retryable: true,
          },
        );
      metadata.user_info = {
        ...(info.id ? { id: info.id } : {}),
        ...(info.label ? { label: info.label } : {}),
      };
    }
    const { db, keyring } = this.deps;
    const id = await db.transaction(async (tx) => {
      const account = await upsertPendingAccount(tx, environmentId, connection.id, body.identifier);
      if (account.inserted)
        await recordEvent(db, tx, {
          environmentId,
          type: 'connected_account.created',
          subject: account.id,
          data: accountView(account, connection),
        });
      await storeTokens(
        tx,
        account.id,
        {
          ...sealTokens(keyring, account.id, tokens),
          expiresAt: tokens.expiresAt,
          scopes: body.scopes ?? connection.scopes,
          metadata,
        },
        { refreshed: false },
      );
      const stored = (await findAccount(tx, account.id))!;
      await recordEvent(db, tx, {
        environmentId,
        type: 'connected_account.authorized',
        subject: stored.id,
        data: accountView(stored, connection),
      });
      return account.id;
    });
    await this.deps.accountTokens.invalidate(id);
    // Only a refresh token: get an access token now, so a refused one is known at once.
    if (!body.access_token && tokens.refreshToken) await this.deps.accountTokens.forAccount(id);
    this.deps.logger.info({ account_id: id, provider: provider.key }, 'credentials imported');
    return this.get(environmentId, id);
  }

  /** Revokes at the provider where it can, wipes the credentials, marks the account DISCONNECTED. */
  async disconnect(environmentId: string, id: string): Promise<AccountWithConnection> {
    const row = await this.get(environmentId, id);
    const connection = await this.deps.connections.getById(row.connection_id);
    await this.revokeAndWipe(row, connection, 'disconnected', 'Disconnected through the API.');
    return this.get(environmentId, id);
  }

  /**
   * Removes accounts whose authorization was abandoned: links issued, never completed, all expired.
   * Safe on every replica at once (one DELETE).
   */
  /**
   * Counts by connection and status (every connection of the environment, with its provider) and
   * the accounts that expired in the last `days` days, newest first: the dashboard's overview.
   */
  async summary(environmentId: string, days = 7, connectionNames: readonly string[] | null = null) {
    const counts = (await countAccounts(this.deps.db, environmentId)).filter(
      (c) => !connectionNames || connectionNames.includes(c.connection_name),
    );
    const byStatus: Record<string, number> = { PENDING_AUTH: 0, ACTIVE: 0, EXPIRED: 0, DISCONNECTED: 0 };
    for (const c of counts) byStatus[c.status] = (byStatus[c.status] ?? 0) + c.count;
    const expired = await recentlyExpiredAccounts(
      this.deps.db,
      environmentId,
      new Date(Date.now() - days * 86_400_000),
      20,
      connectionNames,
    );
    return {
      by_status: byStatus,
      by_connection: counts,
      recently_expired: expired.map((r) => this.view(r)),
    };
  }

  private folding: Promise<number> | undefined;

  /**
   * Folds the account count deltas the triggers append into the counts (the gateway runs this
   * every few seconds, so the deltas a reading sums stay few): FOLD_BATCH per statement, a pause
   * between statements, at most FOLD_MAX_BATCHES per run. Concurrent calls share one run.
   */
  foldCounts(options: { batch?: number; pauseMs?: number; maxBatches?: number } = {}): Promise<number> {
    const { batch = FOLD_BATCH, pauseMs = FOLD_PAUSE_MS, maxBatches = FOLD_MAX_BATCHES } = options;
    this.folding ??= (async () => {
      let total = 0;
      for (let i = 0; i < maxBatches; i++) {
        const folded = await foldAccountCounts(this.deps.db, batch);
        total += folded;
        if (folded < batch) break;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      return total;
    })().finally(() => {
      this.folding = undefined;
    });
    return this.folding;
  }

  async pruneAbandoned(): Promise<number> {
    const { db } = this.deps;
    const pruned = await db.transaction(async (tx) => {
      const removed = await deleteAbandonedPendingAccounts(tx);
      // For the application, an abandoned authorization is one that failed: the user never finished.
      await recordEvents(
        db,
        tx,
        removed.map((row) => ({
          environmentId: row.environment_id,
          type: 'connected_account.authorization_failed' as const,
          subject: row.id,
          data: {
            ...this.view(row),
            reason: {
              code: 'abandoned',
              message: 'Every authorization link and consent trip expired unused; the account was removed.',
            },
          },
        })),
      );
      return removed.length;
    });
    if (pruned) this.deps.logger.info({ accounts: pruned }, 'abandoned pending accounts removed');
    return pruned;
  }

  /** Before a connection is deleted: no usable credential may outlive it. */
  async disconnectAllOf(connection: ConnectionRow): Promise<void> {
    for (const account of await accountsOfConnection(this.deps.db, connection.id)) {
      await this.revokeAndWipe(account, connection, 'connection_deleted', 'Its connection was deleted.');
    }
  }

  private async revokeAndWipe(
    account: AccountRow,
    connection: ConnectionRow,
    code: 'disconnected' | 'connection_deleted',
    reason: string,
  ): Promise<void> {
    const provider = await this.deps.providers.resolve(connection.environment_id, connection.provider);
    if (account.access_token || account.refresh_token) {
      const client: ProviderOAuthClient = {
        clientId: connection.client_id,
        clientSecret: this.deps.connections.clientSecret(connection),
      };
      const open = (value: string | null, column: typeof ACCOUNT_ACCESS_TOKEN) =>
        value ? this.deps.keyring.open(value, { ...column, rowId: account.id }) : null;
      const revoked = await revokeGrant(
        provider,
        this.deps.endpoints(provider, connection),
        client,
        {
          accessToken: open(account.access_token, ACCOUNT_ACCESS_TOKEN),
          refreshToken: open(account.refresh_token, ACCOUNT_REFRESH_TOKEN),
        },
        this.deps.outboundFetch,
      );
      this.deps.logger.info(
        { account_id: account.id, provider: provider.key, revoked },
        'account disconnected',
      );
    }
    const { db } = this.deps;
    await db.transaction(async (tx) => {
      const row = await deactivateAccount(tx, account.id, 'DISCONNECTED', reason);
      if (!row) return;
      await recordEvent(db, tx, {
        environmentId: row.environment_id,
        type: 'connected_account.disconnected',
        subject: row.id,
        data: { ...accountView(row, connection), reason: { code, message: reason } },
      });
    });
    await this.deps.accountTokens.invalidate(account.id);
  }
}

function decodeCursor(token: string): string {
  const value = Buffer.from(token, 'base64url').toString('utf8');
  if (!/^ca_[0-9A-Za-z]+$/.test(value)) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the first page.',
      {
        errors: [{ path: '/page_token', message: 'is not a valid page token' }],
      },
    );
  }
  return value;
}

/** What an import stores, by the provider's kind of credential; the fields of another kind are refused. */
function importedTokens(
  provider: ProviderDefinition,
  body: ImportAccountBody,
): { accessToken: string; refreshToken?: string; expiresAt: Date | null } {
  const has = (f: keyof ImportAccountBody) => body[f] !== undefined;
  const fieldsOf = {
    oauth2: ['access_token', 'refresh_token', 'expires_at', 'expires_in'],
    api_key: ['api_key'],
    basic: ['username', 'password'],
  } as const;
  const foreign = Object.entries(fieldsOf)
    .filter(([kind]) => kind !== provider.auth)
    .flatMap(([, fields]) => fields.filter((f) => has(f)));
  const errors = foreign.map((f) => ({
    path: `/${f}`,
    message: `is not used by ${provider.auth} providers; remove it`,
  }));
  if (provider.auth === 'oauth2' && !has('access_token') && !has('refresh_token'))
    errors.push({ path: '/access_token', message: 'is required (or refresh_token)' });
  if (has('expires_at') && has('expires_in'))
    errors.push({ path: '/expires_in', message: 'give expires_at or expires_in, not both' });
  if (provider.auth === 'api_key' && !has('api_key'))
    errors.push({ path: '/api_key', message: 'is required' });
  if (provider.auth === 'basic')
    for (const f of ['username', 'password'] as const)
      if (!has(f)) errors.push({ path: `/${f}`, message: 'is required' });
  if (errors.length)
    throw new Problem(
      'invalid_input',
      `The import is invalid for ${provider.displayName} (${provider.auth}): ${errors.map((e) => `${e.path.slice(1)} ${e.message}`).join('; ')}.`,
      { errors },
    );
  if (provider.auth === 'api_key') return { accessToken: body.api_key!, expiresAt: null };
  if (provider.auth === 'basic') return { accessToken: `${body.username}:${body.password}`, expiresAt: null };
  const expiresAt = body.expires_at
    ? new Date(body.expires_at)
    : body.expires_in !== undefined
      ? new Date(Date.now() + body.expires_in * 1000)
      : body.access_token
        ? null
        : new Date(0);
  return {
    // With a refresh token alone the access token is empty and already expired: the first use refreshes.
    accessToken: body.access_token ?? '',
    ...(body.refresh_token ? { refreshToken: body.refresh_token } : {}),
    expiresAt,
  };
}
