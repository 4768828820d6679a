import type { Queryable } from './db.js';

/** Where an environment's application signs its end users in for MCP OAuth. */
export interface McpOAuthSettingsRow {
  environment_id: string;
  sign_in_url: string;
  updated_at: Date;
}

export async function findMcpOAuthSettings(
  db: Queryable,
  environmentId: string,
): Promise<McpOAuthSettingsRow | undefined> {
  const rows = await db.query<McpOAuthSettingsRow>(
    'SELECT * FROM mcp_oauth_settings WHERE environment_id = $1',
    [environmentId],
  );
  return rows[0];
}

/** Up to `limit` environments that have a sign-in URL (to tell none, one and several apart). */
export async function listMcpOAuthSettings(db: Queryable, limit: number): Promise<McpOAuthSettingsRow[]> {
  return db.query<McpOAuthSettingsRow>('SELECT * FROM mcp_oauth_settings ORDER BY environment_id LIMIT $1', [
    limit,
  ]);
}

export async function upsertMcpOAuthSettings(
  db: Queryable,
  environmentId: string,
  signInUrl: string,
): Promise<McpOAuthSettingsRow> {
  const rows = await db.query<McpOAuthSettingsRow>(
    `INSERT INTO mcp_oauth_settings (environment_id, sign_in_url) VALUES ($1, $2)
     ON CONFLICT (environment_id) DO UPDATE SET sign_in_url = EXCLUDED.sign_in_url, updated_at = now()
     RETURNING *`,
    [environmentId, signInUrl],
  );
  return rows[0]!;
}

export async function deleteMcpOAuthSettings(db: Queryable, environmentId: string): Promise<void> {
  await db.query('DELETE FROM mcp_oauth_settings WHERE environment_id = $1', [environmentId]);
}
