import type { Queryable } from './db.js';

export interface McpTokenRow {
  id: string;
  environment_id: string;
  client_id: string;
  identifier: string;
  token_hash: string;
  connection_names: string[] | null;
  tools: string[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

export async function insertMcpToken(
  db: Queryable,
  row: Omit<McpTokenRow, 'revoked_at' | 'last_used_at' | 'created_at'>,
): Promise<McpTokenRow> {
  const rows = await db.query<McpTokenRow>(
    `INSERT INTO mcp_tokens (id, environment_id, client_id, identifier, token_hash, connection_names, tools, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [
      row.id,
      row.environment_id,
      row.client_id,
      row.identifier,
      row.token_hash,
      row.connection_names,
      row.tools,
      row.expires_at,
    ],
  );
  return rows[0]!;
}

/** A token that is neither revoked nor expired, by the hash of its value. */
export async function findUsableMcpToken(db: Queryable, tokenHash: string): Promise<McpTokenRow | undefined> {
  const rows = await db.query<McpTokenRow>(
    `SELECT * FROM mcp_tokens
     WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    [tokenHash],
  );
  return rows[0];
}

export async function listMcpTokens(
  db: Queryable,
  environmentId: string,
  filter: { identifier?: string; after?: string; limit: number },
): Promise<McpTokenRow[]> {
  return db.query<McpTokenRow>(
    `SELECT * FROM mcp_tokens
     WHERE environment_id = $1 AND revoked_at IS NULL
       AND ($2::text IS NULL OR identifier = $2)
       AND ($3::text IS NULL OR id > $3)
     ORDER BY id LIMIT $4`,
    [environmentId, filter.identifier ?? null, filter.after ?? null, filter.limit],
  );
}

/** Revokes a token; false when there is no such live token in the environment. */
export async function revokeMcpToken(db: Queryable, environmentId: string, id: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE mcp_tokens SET revoked_at = now()
     WHERE id = $1 AND environment_id = $2 AND revoked_at IS NULL RETURNING id`,
    [id, environmentId],
  );
  return rows.length > 0;
}

/** Revokes these tokens (an MCP OAuth grant's, when it is revoked); ids already revoked stay as they are. */
export async function revokeMcpTokensByIds(db: Queryable, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.query('UPDATE mcp_tokens SET revoked_at = now() WHERE id = ANY($1) AND revoked_at IS NULL', [ids]);
}

export async function touchMcpToken(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE mcp_tokens SET last_used_at = now() WHERE id = $1', [id]);
}
