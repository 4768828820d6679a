import type { Logger } from 'pino';
import type { ConnectionService } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import { type ClientCredentials, revokeGrant } from '../oauth/client.js';
import type { ConnectionPlace, ProviderEndpoints } from '../oauth/endpoints.js';
import { getProvider, type ProviderDefinition } from '../providers/catalog.js';
import type { Keyring } from '../secrets/keyring.js';
import { ACCOUNT_ACCESS_TOKEN, ACCOUNT_REFRESH_TOKEN } from '../secrets/sealed-columns.js';
import {
  type AccountRow,
  type AccountWithConnection,
  accountsOfConnection,
  countAccounts,
  deactivateAccount,
  deleteAbandonedPendingAccounts,
  findAccount,
  listAccounts,
  recentlyExpiredAccounts,
} from '../store/accounts.js';
import type { ConnectionRow } from '../store/connections.js';
import type { Database } from '../store/db.js';
import type { CredentialManager } from './credentials.js';
import type { AccountView, ListAccountsQuery } from './schemas.js';

export interface AccountsDeps {
  db: Database;
  keyring: Keyring;
  logger: Logger;
  connections: ConnectionService;
  credentials: CredentialManager;
  endpoints(provider: ProviderDefinition, connection: ConnectionPlace): ProviderEndpoints;
}

/** Connected accounts: listing, reading and disconnecting (revoking at the provider). */
export class AccountService {
  constructor(private readonly deps: AccountsDeps) {}

  view(row: AccountWithConnection): AccountView {
    return {
      id: row.id,
      connection_name: row.connection_name,
      provider: row.provider,
      identifier: row.identifier,
      status: row.status,
      status_reason: row.status_reason,
      scopes: row.scopes,
      token_expires_at: row.token_expires_at?.toISOString() ?? null,
      last_used_at: row.last_used_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  async list(
    environmentId: string,
    query: ListAccountsQuery,
  ): Promise<{ data: AccountView[]; next_page_token: string | null }> {
    const limit = query.page_size ?? 50;
    const rows = await listAccounts(this.deps.db, environmentId, {
      ...(query.connection_name ? { connectionName: query.connection_name } : {}),
      ...(query.identifier ? { identifier: query.identifier } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(query.page_token ? { after: decodeCursor(query.page_token) } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map((r) => this.view(r)),
      next_page_token: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null,
    };
  }

  async get(environmentId: string, id: string): Promise<AccountWithConnection> {
    const row = await findAccount(this.deps.db, id);
    if (!row || row.environment_id !== environmentId) {
      throw new Problem(
        'account_not_found',
        `No connected account ${id}; list accounts with GET /api/v1/connected-accounts?identifier=….`,
      );
    }
    return row;
  }

  /** Revokes at the provider where it can, wipes the credentials, marks the account DISCONNECTED. */
  async disconnect(environmentId: string, id: string): Promise<AccountWithConnection> {
    const row = await this.get(environmentId, id);
    const connection = await this.deps.connections.getById(row.connection_id);
    await this.revokeAndWipe(row, connection, 'Disconnected through the API.');
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
  async summary(environmentId: string, days = 7) {
    const counts = await countAccounts(this.deps.db, environmentId);
    const byStatus: Record<string, number> = { PENDING_AUTH: 0, ACTIVE: 0, EXPIRED: 0, DISCONNECTED: 0 };
    for (const c of counts) byStatus[c.status] = (byStatus[c.status] ?? 0) + c.count;
    const expired = await recentlyExpiredAccounts(
      this.deps.db,
      environmentId,
      new Date(Date.now() - days * 86_400_000),
      20,
    );
    return {
      by_status: byStatus,
      by_connection: counts,
      recently_expired: expired.map((r) => this.view(r)),
    };
  }

  async pruneAbandoned(): Promise<number> {
    const pruned = await deleteAbandonedPendingAccounts(this.deps.db);
    if (pruned) this.deps.logger.info({ accounts: pruned }, 'abandoned pending accounts removed');
    return pruned;
  }

  /** Before a connection is deleted: no usable credential may outlive it. */
  async disconnectAllOf(connection: ConnectionRow): Promise<void> {
    for (const account of await accountsOfConnection(this.deps.db, connection.id)) {
      await this.revokeAndWipe(account, connection, 'Its connection was deleted.');
    }
  }

  private async revokeAndWipe(account: AccountRow, connection: ConnectionRow, reason: string): Promise<void> {
    const provider = getProvider(connection.provider);
    if (account.access_token || account.refresh_token) {
      const client: ClientCredentials = {
        clientId: connection.client_id,
        clientSecret: this.deps.connections.clientSecret(connection),
      };
      const open = (value: string | null, column: typeof ACCOUNT_ACCESS_TOKEN) =>
        value ? this.deps.keyring.open(value, { ...column, rowId: account.id }) : null;
      const revoked = await revokeGrant(provider, this.deps.endpoints(provider, connection), client, {
        accessToken: open(account.access_token, ACCOUNT_ACCESS_TOKEN),
        refreshToken: open(account.refresh_token, ACCOUNT_REFRESH_TOKEN),
      });
      this.deps.logger.info(
        { account_id: account.id, provider: provider.key, revoked },
        'account disconnected',
      );
    }
    await deactivateAccount(this.deps.db, account.id, 'DISCONNECTED', reason);
    await this.deps.credentials.invalidate(account.id);
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
