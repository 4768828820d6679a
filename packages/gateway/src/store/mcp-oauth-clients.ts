import type { Queryable } from './db.js';

/** An MCP client registered dynamically (RFC 7591); only the hash of its secret is kept. */
export interface McpOAuthClientRow {
  id: string;
  /** null for a public client (token_endpoint_auth_method "none"). */
  secret_hash: string | null;
  client_name: string | null;
  redirect_uris: string[];
  token_endpoint_auth_method: string;
  /** The registered metadata as answered to the client (never the secret). */
  metadata: Record<string, unknown>;
  last_used_at: Date | null;
  created_at: Date;
}

export async function insertMcpOAuthClient(
  db: Queryable,
  row: Omit<McpOAuthClientRow, 'last_used_at' | 'created_at'>,
): Promise<McpOAuthClientRow> {
  const rows = await db.query<McpOAuthClientRow>(
    `INSERT INTO mcp_oauth_clients (id, secret_hash, client_name, redirect_uris, token_endpoint_auth_method, metadata)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [
      row.id,
      row.secret_hash,
      row.client_name,
      row.redirect_uris,
      row.token_endpoint_auth_method,
      JSON.stringify(row.metadata),
    ],
  );
  return rows[0]!;
}

export async function findMcpOAuthClient(db: Queryable, id: string): Promise<McpOAuthClientRow | undefined> {
  return (await db.query<McpOAuthClientRow>('SELECT * FROM mcp_oauth_clients WHERE id = $1', [id]))[0];
}

export async function touchMcpOAuthClient(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE mcp_oauth_clients SET last_used_at = now() WHERE id = $1', [id]);
}

/** Forgets clients that registered but never got a token within `days`. */
export async function pruneUnusedMcpOAuthClients(db: Queryable, days: number): Promise<void> {
  await db.query(
    `DELETE FROM mcp_oauth_clients
     WHERE last_used_at IS NULL AND created_at < now() - make_interval(days => $1)`,
    [days],
  );
}
