import type { Queryable } from './db.js';

/** What Portico discovered from a remote MCP server when the connection was created. */
export interface McpServerRecord {
  /** The MCP endpoint the connection talks to. */
  url: string;
  /** The protected resource (RFC 9728 `resource`): the resource indicator of every token request. */
  resource: string;
  /** '' (and the endpoints too) for a server that asks for no authorization. */
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  /**
   * How Portico's client is registered at the authorization server; `none`: the server asks for
   * no authorization, so there is no client and the end users' accounts hold no token.
   */
  registration: 'client_id_metadata_document' | 'dynamic' | 'pre_registered' | 'none';
  /** How Portico's client authenticates at the token endpoint (absent on older rows: client_secret_post). */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'none';
  scopes_supported?: string[];
  /** `sse`: the server speaks only the older HTTP+SSE transport (its POST answered 404 or 405). */
  transport?: 'sse';
}

/** A connection row as stored; `client_secret` is sealed. */
export interface ConnectionRow {
  id: string;
  environment_id: string;
  name: string;
  /** A built-in provider's key or one of the environment's custom providers. */
  provider: string;
  client_id: string;
  client_secret: string;
  scopes: string[];
  sandbox: boolean;
  /** Microsoft only: the tenant in the identity platform's URLs (null: the provider's default). */
  tenant: string | null;
  /** Values of the provider's connection parameters (null: none given). */
  parameters: Record<string, string> | null;
  /** The application's name as end users should read it on Portico's pages. */
  display_name: string | null;
  /** Remote MCP servers only: the discovered authorization facts (null: not an MCP connection). */
  mcp_server?: McpServerRecord | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertConnection(
  db: Queryable,
  row: Omit<ConnectionRow, 'created_at' | 'updated_at'>,
): Promise<ConnectionRow | undefined> {
  const rows = await db.query<ConnectionRow>(
    `INSERT INTO connections (id, environment_id, name, provider, client_id, client_secret, scopes, sandbox,
       tenant, display_name, parameters, mcp_server)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (environment_id, name) DO NOTHING
     RETURNING *`,
    [
      row.id,
      row.environment_id,
      row.name,
      row.provider,
      row.client_id,
      row.client_secret,
      row.scopes,
      row.sandbox,
      row.tenant,
      row.display_name,
      row.parameters ? JSON.stringify(row.parameters) : null,
      row.mcp_server ? JSON.stringify(row.mcp_server) : null,
    ],
  );
  return rows[0];
}

export async function findConnectionByName(
  db: Queryable,
  environmentId: string,
  name: string,
): Promise<ConnectionRow | undefined> {
  const rows = await db.query<ConnectionRow>(
    'SELECT * FROM connections WHERE environment_id = $1 AND name = $2',
    [environmentId, name],
  );
  return rows[0];
}

export async function findConnectionById(db: Queryable, id: string): Promise<ConnectionRow | undefined> {
  const rows = await db.query<ConnectionRow>('SELECT * FROM connections WHERE id = $1', [id]);
  return rows[0];
}

/**
 * A page's columns, the scopes as JSON: the drivers' text[] parser took a sixth of a page of 20
 * connections' CPU, where JSON.parse is native.
 */
const LISTED_COLUMNS = `id, environment_id, name, provider, client_id, client_secret, to_json(scopes) AS scopes,
  sandbox, tenant, parameters, display_name, mcp_server, created_at, updated_at`;

export async function listConnections(
  db: Queryable,
  environmentId: string,
  opts: { provider?: string; after?: string; limit: number; names?: readonly string[] },
): Promise<ConnectionRow[]> {
  return db.query<ConnectionRow>(
    `SELECT ${LISTED_COLUMNS} FROM connections
     WHERE environment_id = $1 AND ($2::text IS NULL OR provider = $2) AND ($3::text IS NULL OR name > $3)
       AND ($5::text[] IS NULL OR name = ANY($5::text[]))
     ORDER BY name LIMIT $4`,
    [
      environmentId,
      opts.provider ?? null,
      opts.after ?? null,
      opts.limit,
      opts.names ? [...opts.names] : null,
    ],
  );
}

export async function updateConnection(
  db: Queryable,
  id: string,
  changes: Partial<
    Pick<ConnectionRow, 'client_id' | 'client_secret' | 'scopes' | 'tenant' | 'display_name' | 'parameters'>
  >,
): Promise<ConnectionRow | undefined> {
  const rows = await db.query<ConnectionRow>(
    `UPDATE connections SET
       client_id = COALESCE($2, client_id),
       client_secret = COALESCE($3, client_secret),
       scopes = COALESCE($4, scopes),
       tenant = COALESCE($5, tenant),
       display_name = COALESCE($6, display_name),
       parameters = COALESCE($7::jsonb, parameters),
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [
      id,
      changes.client_id ?? null,
      changes.client_secret ?? null,
      changes.scopes ?? null,
      changes.tenant ?? null,
      changes.display_name ?? null,
      changes.parameters ? JSON.stringify(changes.parameters) : null,
    ],
  );
  return rows[0];
}

export async function deleteConnection(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM connections WHERE id = $1 RETURNING id', [id]);
  return rows.length > 0;
}
