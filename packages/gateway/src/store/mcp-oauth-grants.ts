import type { Queryable } from './db.js';

/** What one approval allows one MCP client: the family its refresh tokens belong to. */
export interface McpOAuthGrantRow {
  id: string;
  environment_id: string;
  client_id: string;
  identifier: string;
  connection_names: string[] | null;
  tools: string[] | null;
  resource: string;
  /** The gateway client (or dashboard admin) that approved it; its access tokens are minted in its name. */
  approved_by: string;
  revoked_at: Date | null;
  created_at: Date;
}

export async function insertMcpOAuthGrant(
  db: Queryable,
  row: Omit<McpOAuthGrantRow, 'revoked_at' | 'created_at'>,
): Promise<McpOAuthGrantRow> {
  const rows = await db.query<McpOAuthGrantRow>(
    `INSERT INTO mcp_oauth_grants (id, environment_id, client_id, identifier, connection_names, tools, resource, approved_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [
      row.id,
      row.environment_id,
      row.client_id,
      row.identifier,
      row.connection_names,
      row.tools,
      row.resource,
      row.approved_by,
    ],
  );
  return rows[0]!;
}

export async function findMcpOAuthGrant(db: Queryable, id: string): Promise<McpOAuthGrantRow | undefined> {
  return (await db.query<McpOAuthGrantRow>('SELECT * FROM mcp_oauth_grants WHERE id = $1', [id]))[0];
}

/** Marks a grant revoked (its refresh tokens then refresh nothing). */
export async function revokeMcpOAuthGrant(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE mcp_oauth_grants SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
}

/** Forgets revoked grants, and grants without a refresh token left, after `days`. */
export async function pruneMcpOAuthGrants(db: Queryable, days: number): Promise<void> {
  await db.query(
    `DELETE FROM mcp_oauth_grants g
     WHERE g.created_at < now() - make_interval(days => $1)
       AND (g.revoked_at IS NOT NULL
            OR NOT EXISTS (SELECT 1 FROM mcp_oauth_refresh_tokens r WHERE r.grant_id = g.id AND r.expires_at > now()))`,
    [days],
  );
}
