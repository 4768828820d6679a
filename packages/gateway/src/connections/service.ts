import { Problem } from '../errors/problem.js';
import { recordEvent } from '../events/outbox.js';
import { getProvider, PROVIDERS } from '../providers/catalog.js';
import type { Keyring } from '../secrets/keyring.js';
import { CONNECTION_CLIENT_SECRET as SECRET_COLUMN } from '../secrets/sealed-columns.js';
import {
  type ConnectionRow,
  deleteConnection,
  findConnectionById,
  findConnectionByName,
  insertConnection,
  listConnections,
  updateConnection,
} from '../store/connections.js';
import type { Database, Queryable } from '../store/db.js';
import { newId, randomBase62 } from '../store/ids.js';
import type {
  ConnectionView,
  CreateConnectionBody,
  ListConnectionsQuery,
  UpdateConnectionBody,
} from './schemas.js';

export interface ConnectionsDeps {
  db: Database;
  keyring: Keyring;
  publicUrl: string;
  /** False when sandbox mode is off: sandbox connections are refused. */
  sandboxAvailable?: boolean;
}

/**
 * Connections: an operator's OAuth client for one provider. The client secret is sealed before it
 * reaches the store and never leaves the service again except to the provider's token endpoint.
 */
export class ConnectionService {
  private removing?: (row: ConnectionRow) => Promise<void>;

  constructor(private readonly deps: ConnectionsDeps) {}

  /**
   * Runs `hook` before a connection is deleted (the accounts service revokes and forgets its
   * accounts' credentials); registered by the layer above, which is built after this one.
   */
  beforeRemove(hook: (row: ConnectionRow) => Promise<void>): void {
    this.removing = hook;
  }

  redirectUri(connectionId: string): string {
    return `${this.deps.publicUrl}/sso/v1/oauth/${connectionId}/callback`;
  }

  view(row: ConnectionRow): ConnectionView {
    return {
      id: row.id,
      name: row.name,
      provider: row.provider,
      client_id: row.client_id,
      scopes: row.scopes,
      redirect_uri: this.redirectUri(row.id),
      sandbox: row.sandbox,
      tenant: row.tenant,
      display_name: row.display_name,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  /** `body` has passed the CreateConnectionBody schema (the route's schema). */
  async create(environmentId: string, body: CreateConnectionBody): Promise<ConnectionRow> {
    const sandbox = body.sandbox ?? false;
    if (sandbox && this.deps.sandboxAvailable === false) {
      throw new Problem(
        'invalid_input',
        'Sandbox mode is off on this gateway (PORTICO_SANDBOX=false); create the connection with real client credentials.',
        {
          errors: [{ path: '/sandbox', message: 'sandbox mode is off' }],
        },
      );
    }
    let clientId = body.client_id;
    let clientSecret = body.client_secret;
    if (sandbox) {
      // Sandbox connections talk to the built-in emulators, which accept generated credentials.
      clientId ??= `sandbox-${randomBase62(16)}`;
      clientSecret ??= randomBase62(32);
    } else if (!clientId || !clientSecret) {
      const missing = [!clientId && 'client_id', !clientSecret && 'client_secret'].filter(
        Boolean,
      ) as string[];
      throw new Problem(
        'invalid_input',
        `The connection is invalid: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required unless "sandbox" is true; copy them from the OAuth app you registered at ${getProvider(body.provider).displayName}.`,
        { errors: missing.map((m) => ({ path: `/${m}`, message: 'is required unless sandbox is true' })) },
      );
    }
    checkTenant(body.provider, body.tenant);
    const id = newId('conn');
    const { db } = this.deps;
    const row = await db.transaction(async (tx) => {
      const inserted = await insertConnection(tx, {
        id,
        environment_id: environmentId,
        name: body.name,
        provider: body.provider,
        client_id: clientId!,
        client_secret: this.deps.keyring.seal(clientSecret!, { ...SECRET_COLUMN, rowId: id }),
        scopes: body.scopes ?? getProvider(body.provider).oauth.defaultScopes,
        sandbox,
        tenant: body.tenant ?? null,
        display_name: body.display_name ?? null,
      });
      if (inserted) await this.recordChange(tx, 'connection.created', inserted);
      return inserted;
    });
    if (!row) {
      throw new Problem(
        'connection_exists',
        `A connection named "${body.name}" already exists; choose another name or PATCH /api/v1/connections/${body.name}.`,
      );
    }
    return row;
  }

  async get(environmentId: string, name: string): Promise<ConnectionRow> {
    const row = await findConnectionByName(this.deps.db, environmentId, name);
    if (!row) {
      throw new Problem(
        'connection_not_found',
        `No connection is named "${name}"; list them with GET /api/v1/connections or create one with POST /api/v1/connections.`,
      );
    }
    return row;
  }

  async getById(id: string): Promise<ConnectionRow> {
    const row = await findConnectionById(this.deps.db, id);
    if (!row) throw new Problem('connection_not_found', `No connection has id ${id}.`);
    return row;
  }

  async list(
    environmentId: string,
    query: ListConnectionsQuery,
  ): Promise<{ rows: ConnectionRow[]; nextPageToken: string | null }> {
    const limit = query.page_size ?? 50;
    const after = query.page_token ? decodePageToken(query.page_token) : undefined;
    const rows = await listConnections(this.deps.db, environmentId, {
      ...(query.provider ? { provider: query.provider } : {}),
      ...(after ? { after } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      rows: page,
      nextPageToken: rows.length > limit ? Buffer.from(page.at(-1)!.name).toString('base64url') : null,
    };
  }

  async update(environmentId: string, name: string, body: UpdateConnectionBody): Promise<ConnectionRow> {
    const row = await this.get(environmentId, name);
    checkTenant(row.provider, body.tenant);
    const { db } = this.deps;
    const updated = await db.transaction(async (tx) => {
      const changed = await updateConnection(tx, row.id, {
        ...(body.client_id ? { client_id: body.client_id } : {}),
        ...(body.client_secret
          ? { client_secret: this.deps.keyring.seal(body.client_secret, { ...SECRET_COLUMN, rowId: row.id }) }
          : {}),
        ...(body.scopes ? { scopes: body.scopes } : {}),
        ...(body.tenant ? { tenant: body.tenant } : {}),
        ...(body.display_name ? { display_name: body.display_name } : {}),
      });
      if (changed) await this.recordChange(tx, 'connection.updated', changed);
      return changed;
    });
    if (!updated) return this.get(environmentId, name);
    return updated;
  }

  async remove(environmentId: string, name: string): Promise<void> {
    const row = await this.get(environmentId, name);
    await this.removing?.(row);
    const { db } = this.deps;
    await db.transaction(async (tx) => {
      if (await deleteConnection(tx, row.id)) await this.recordChange(tx, 'connection.deleted', row);
    });
  }

  /** The connection's event, in the transaction of its change. */
  private recordChange(
    tx: Queryable,
    type: 'connection.created' | 'connection.updated' | 'connection.deleted',
    row: ConnectionRow,
  ): Promise<void> {
    return recordEvent(this.deps.db, tx, {
      environmentId: row.environment_id,
      type,
      subject: row.id,
      data: this.view(row),
    });
  }

  /** The plaintext client secret, for the token endpoint call only. */
  clientSecret(row: ConnectionRow): string {
    return this.deps.keyring.open(row.client_secret, { ...SECRET_COLUMN, rowId: row.id });
  }
}

/** A tenant means something only to providers whose sign-in URLs carry one (the catalog says which). */
function checkTenant(provider: ConnectionRow['provider'], tenant: string | undefined): void {
  if (tenant === undefined || getProvider(provider).oauth.tenant) return;
  const withTenant = Object.values(PROVIDERS).filter((p) => p.oauth.tenant);
  throw new Problem(
    'invalid_input',
    `tenant applies only to ${withTenant.map((p) => `${p.displayName} connections (${p.key})`).join(', ')}; ${getProvider(provider).displayName} has none. Remove it.`,
    { errors: [{ path: '/tenant', message: `not supported for ${provider}` }] },
  );
}

function decodePageToken(token: string): string {
  const value = Buffer.from(token, 'base64url').toString('utf8');
  if (!value)
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the first page.',
    );
  return value;
}
