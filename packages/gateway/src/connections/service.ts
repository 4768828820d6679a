import { Problem } from '../errors/problem.js';
import { recordEvent } from '../events/outbox.js';
import { fillTemplate } from '../oauth/endpoints.js';
import type { ProviderDefinition } from '../providers/catalog.js';
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
import type { OutboundPolicy } from '../upstream/outbound-guard.js';
import type { RemoteMcpFetch } from '../upstream/remote-mcp-fetch.js';
import { testPattern } from '../validation/linear-pattern.js';
import { connectMcpServer } from './mcp-server.js';
import type { ProviderCatalogService } from './providers.js';
import type {
  ConnectionView,
  CreateConnectionBody,
  ListConnectionsQuery,
  UpdateConnectionBody,
} from './schemas.js';
import { unknownConnection } from './unknown-connection.js';

export interface ConnectionsDeps {
  db: Database;
  keyring: Keyring;
  publicUrl: string;
  providers: ProviderCatalogService;
  /** False when sandbox mode is off: sandbox connections are refused. */
  sandboxAvailable?: boolean;
  /**
   * The outbound guard's policy for requests made on a provider's definition (a remote MCP
   * server's discovery and registration); public https targets only when not given.
   */
  outboundPolicy?: (providerKey: string) => OutboundPolicy;
  /** The sandbox's emulated remote MCP server (undefined while the sandbox has no location). */
  sandboxMcp?: () => { url: string; fetch: RemoteMcpFetch } | undefined;
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

  /**
   * Where Portico serves a connection's client ID metadata document (its client_id at a remote MCP
   * server's authorization server that takes those); undefined unless the public URL is https, as
   * the specification requires of such client IDs.
   */
  /**
   * The client ID metadata document of a connection whose client_id is the one Portico serves
   * (nothing secret: its name, redirect URI and grant types), or undefined for any other.
   */
  async clientMetadataDocument(connectionId: string): Promise<Record<string, unknown> | undefined> {
    const url = this.clientMetadataUrl(connectionId);
    if (!url || !/^conn_[A-Za-z0-9]+$/.test(connectionId)) return undefined;
    const row = await findConnectionById(this.deps.db, connectionId);
    if (!row || row.client_id !== url || row.mcp_server?.registration !== 'client_id_metadata_document')
      return undefined;
    return {
      client_id: url,
      client_name: row.display_name ?? `Portico (${row.name})`,
      client_uri: this.deps.publicUrl,
      redirect_uris: [this.redirectUri(row.id)],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(row.scopes.length ? { scope: row.scopes.join(' ') } : {}),
    };
  }

  clientMetadataUrl(connectionId: string): string | undefined {
    return this.deps.publicUrl.startsWith('https://')
      ? `${this.deps.publicUrl}/sso/v1/oauth/${connectionId}/client-metadata.json`
      : undefined;
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
      parameters: row.parameters ?? {},
      display_name: row.display_name,
      ...(row.mcp_server
        ? {
            mcp_server: {
              url: row.mcp_server.url,
              resource: row.mcp_server.resource,
              issuer: row.mcp_server.issuer,
              registration: row.mcp_server.registration,
              ...(row.mcp_server.transport ? { transport: row.mcp_server.transport } : {}),
            },
          }
        : {}),
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
    const provider = await this.deps.providers.resolve(environmentId, body.provider, '/provider');
    let clientId = body.client_id;
    let clientSecret = body.client_secret;
    const id = newId('conn');
    let mcpServer: ConnectionRow['mcp_server'] = null;
    let scopes = body.scopes;
    if (provider.mcp) {
      // The sandbox plays every remote MCP server with its emulated one, reached as a real one is.
      const played = sandbox ? this.deps.sandboxMcp?.() : undefined;
      if (sandbox && !played) {
        throw new Problem('service_unavailable', 'The sandbox has not started yet; try again.', {
          retryable: true,
        });
      }
      const parameters = checkParameters(provider, body.tenant, body.parameters, true);
      const connected = await connectMcpServer(
        provider,
        {
          url: played?.url ?? fillTemplate(provider, provider.mcp.url, { sandbox, parameters }),
          redirectUri: this.redirectUri(id),
          ...(this.clientMetadataUrl(id) ? { clientMetadataUrl: this.clientMetadataUrl(id)! } : {}),
          clientName: body.display_name ?? `Portico (${body.name})`,
          ...(clientId !== undefined ? { clientId } : {}),
          ...(clientSecret !== undefined ? { clientSecret } : {}),
          ...(scopes !== undefined ? { scopes } : {}),
        },
        this.deps.outboundPolicy?.(provider.key) ?? { allowPrivate: false },
        played?.fetch,
      );
      clientId = connected.clientId;
      clientSecret = connected.clientSecret;
      scopes = connected.scopes;
      mcpServer = connected.server;
    } else if (!provider.oauth) {
      // The end user brings the credential (an API key, a password): there is no client to register.
      const given = (['client_id', 'client_secret', 'scopes'] as const).filter((f) => body[f] !== undefined);
      if (given.length) {
        throw new Problem(
          'invalid_input',
          `${provider.displayName} connections take no ${given.join(', ')}: end users enter their own ${provider.auth === 'basic' ? 'user name and password' : (provider.form?.label ?? 'API key')} on the authorization link. Remove ${given.length > 1 ? 'them' : 'it'}.`,
          {
            errors: given.map((f) => ({ path: `/${f}`, message: `not used by ${provider.auth} providers` })),
          },
        );
      }
      clientId = '';
      clientSecret = '';
    } else if (sandbox) {
      // Sandbox connections talk to the built-in emulators, which accept generated credentials.
      clientId ??= `sandbox-${randomBase62(16)}`;
      clientSecret ??= randomBase62(32);
    } else if (!clientId || !clientSecret) {
      const missing = [!clientId && 'client_id', !clientSecret && 'client_secret'].filter(
        Boolean,
      ) as string[];
      throw new Problem(
        'invalid_input',
        `The connection is invalid: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required unless "sandbox" is true; copy them from the OAuth app you registered at ${provider.displayName}.`,
        { errors: missing.map((m) => ({ path: `/${m}`, message: 'is required unless sandbox is true' })) },
      );
    }
    const parameters = checkParameters(provider, body.tenant, body.parameters, true);
    const { db } = this.deps;
    const row = await db.transaction(async (tx) => {
      const inserted = await insertConnection(tx, {
        id,
        environment_id: environmentId,
        name: body.name,
        provider: body.provider,
        client_id: clientId!,
        client_secret: this.deps.keyring.seal(clientSecret!, { ...SECRET_COLUMN, rowId: id }),
        scopes: scopes ?? provider.oauth?.defaultScopes ?? [],
        sandbox,
        tenant: body.tenant ?? null,
        parameters,
        display_name: body.display_name ?? null,
        mcp_server: mcpServer,
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

  /**
   * The connection named `name`. `within`: the connections the caller may reach (auth/access.ts's
   * listFilter), among which a miss suggests the one meant; without it, a miss suggests nothing.
   */
  async get(environmentId: string, name: string, within?: readonly string[] | null): Promise<ConnectionRow> {
    const row = await findConnectionByName(this.deps.db, environmentId, name);
    if (!row) {
      throw await unknownConnection(
        this.deps.db,
        environmentId,
        name,
        within,
        'list them with GET /api/v1/connections or create one with POST /api/v1/connections.',
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
    query: ListConnectionsQuery & { names?: readonly string[] | null },
  ): Promise<{ rows: ConnectionRow[]; nextPageToken: string | null }> {
    const limit = query.page_size ?? 50;
    const after = query.page_token ? decodePageToken(query.page_token) : undefined;
    const rows = await listConnections(this.deps.db, environmentId, {
      ...(query.provider ? { provider: query.provider } : {}),
      ...(query.names ? { names: query.names } : {}),
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
    const provider = await this.deps.providers.resolve(environmentId, row.provider);
    const parameters = checkParameters(
      provider,
      body.tenant,
      body.parameters && { ...row.parameters, ...body.parameters },
      false,
    );
    const { db } = this.deps;
    const updated = await db.transaction(async (tx) => {
      const changed = await updateConnection(tx, row.id, {
        ...(body.client_id ? { client_id: body.client_id } : {}),
        ...(body.client_secret
          ? { client_secret: this.deps.keyring.seal(body.client_secret, { ...SECRET_COLUMN, rowId: row.id }) }
          : {}),
        ...(body.scopes ? { scopes: body.scopes } : {}),
        ...(body.tenant ? { tenant: body.tenant } : {}),
        ...(parameters ? { parameters } : {}),
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

/**
 * The connection's values for the provider's connection parameters (`tenant` has its own field):
 * unknown names and values that do not match the definition's pattern are refused, and a
 * parameter without a default must be given when the connection is created.
 */
function checkParameters(
  provider: ProviderDefinition,
  tenant: string | undefined,
  given: Record<string, string> | null | undefined,
  creating: boolean,
): Record<string, string> | null {
  const declared = provider.parameters.filter((p) => p.source === 'connection');
  const errors: Array<{ path: string; message: string }> = [];
  if (tenant !== undefined && !declared.some((p) => p.name === 'tenant'))
    errors.push({ path: '/tenant', message: `not supported for ${provider.key}; remove it` });
  for (const [name, value] of Object.entries(given ?? {})) {
    const parameter = declared.find((p) => p.name === name && name !== 'tenant');
    if (!parameter) {
      const known = declared.filter((p) => p.name !== 'tenant').map((p) => p.name);
      errors.push({
        path: `/parameters/${name}`,
        message: `is not a parameter of ${provider.displayName}${known.length ? ` (it takes: ${known.join(', ')})` : ' (it takes none)'}; remove it`,
      });
    } else if (parameter.pattern && !testPattern(parameter.pattern, value)) {
      errors.push({
        path: `/parameters/${name}`,
        message: `must match ${parameter.pattern}${parameter.description ? ` (${parameter.description})` : ''}`,
      });
    }
  }
  if (creating) {
    for (const p of declared) {
      if (p.name !== 'tenant' && p.default === undefined && given?.[p.name] === undefined)
        errors.push({
          path: `/parameters/${p.name}`,
          message: `is required by ${provider.displayName}${p.description ? `: ${p.description}` : ''}`,
        });
    }
  }
  if (errors.length) {
    throw new Problem(
      'invalid_input',
      // A parameter's description ends a sentence of its own: no second period after it.
      `The connection's parameters are invalid: ${errors.map((e) => `${e.path.slice(1).replace('/', '.')} ${e.message}`).join('; ')}`.replace(
        /\.?$/,
        '.',
      ),
      { errors },
    );
  }
  return given && Object.keys(given).length ? given : null;
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
