import type { Queryable } from './db.js';

/** A refresh token a grant issued (by hash), with the access token issued beside it. */
export interface McpOAuthRefreshTokenRow {
  token_hash: string;
  grant_id: string;
  /** The mcp_tokens row issued with it. */
  access_token_id: string;
  expires_at: Date;
  /** Set once it has been exchanged for the next one: presenting it again is reuse. */
  rotated_at: Date | null;
  created_at: Date;
}

export async function insertMcpOAuthRefreshToken(
  db: Queryable,
  row: Omit<McpOAuthRefreshTokenRow, 'rotated_at' | 'created_at'>,
): Promise<void> {
  await db.query(
    `INSERT INTO mcp_oauth_refresh_tokens (token_hash, grant_id, access_token_id, expires_at)
     VALUES ($1, $2, $3, $4)`,
    [row.token_hash, row.grant_id, row.access_token_id, row.expires_at],
  );
}

/** A refresh token by its hash, locked for the exchange (inside a transaction). */
export async function lockMcpOAuthRefreshToken(
  tx: Queryable,
  tokenHash: string,
): Promise<McpOAuthRefreshTokenRow | undefined> {
  const rows = await tx.query<McpOAuthRefreshTokenRow>(
    'SELECT * FROM mcp_oauth_refresh_tokens WHERE token_hash = $1 FOR UPDATE',
    [tokenHash],
  );
  return rows[0];
}

export async function findMcpOAuthRefreshToken(
  db: Queryable,
  tokenHash: string,
): Promise<McpOAuthRefreshTokenRow | undefined> {
  const rows = await db.query<McpOAuthRefreshTokenRow>(
    'SELECT * FROM mcp_oauth_refresh_tokens WHERE token_hash = $1',
    [tokenHash],
  );
  return rows[0];
}

/** The refresh token issued beside an access token, if the access token came from a grant. */
export async function findMcpOAuthRefreshTokenByAccessToken(
  db: Queryable,
  accessTokenId: string,
): Promise<McpOAuthRefreshTokenRow | undefined> {
  const rows = await db.query<McpOAuthRefreshTokenRow>(
    'SELECT * FROM mcp_oauth_refresh_tokens WHERE access_token_id = $1',
    [accessTokenId],
  );
  return rows[0];
}

export async function rotateMcpOAuthRefreshToken(tx: Queryable, tokenHash: string): Promise<void> {
  await tx.query('UPDATE mcp_oauth_refresh_tokens SET rotated_at = now() WHERE token_hash = $1', [tokenHash]);
}

/** The access tokens (mcp_tokens ids) a grant issued. */
export async function accessTokenIdsOfGrant(db: Queryable, grantId: string): Promise<string[]> {
  const rows = await db.query<{ access_token_id: string }>(
    'SELECT access_token_id FROM mcp_oauth_refresh_tokens WHERE grant_id = $1',
    [grantId],
  );
  return rows.map((r) => r.access_token_id);
}

/** Forgets refresh tokens that expired more than `days` ago. */
export async function pruneMcpOAuthRefreshTokens(db: Queryable, days: number): Promise<void> {
  await db.query(
    'DELETE FROM mcp_oauth_refresh_tokens WHERE expires_at < now() - make_interval(days => $1)',
    [days],
  );
}
