import type { Queryable } from './db.js';

export interface ProxyTokenRow {
  id: string;
  environment_id: string;
  client_id: string;
  connection_name: string;
  identifier: string;
  token_hash: string;
  expires_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

export async function insertProxyToken(
  db: Queryable,
  row: Omit<ProxyTokenRow, 'revoked_at' | 'last_used_at' | 'created_at'>,
): Promise<ProxyTokenRow> {
  const rows = await db.query<ProxyTokenRow>(
    `INSERT INTO proxy_tokens (id, environment_id, client_id, connection_name, identifier, token_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [
      row.id,
      row.environment_id,
      row.client_id,
      row.connection_name,
      row.identifier,
      row.token_hash,
      row.expires_at,
    ],
  );
  return rows[0]!;
}

/** A token that is neither revoked nor expired, by the hash of its value. */
export async function findUsableProxyToken(
  db: Queryable,
  tokenHash: string,
): Promise<ProxyTokenRow | undefined> {
  const rows = await db.query<ProxyTokenRow>(
    `SELECT * FROM proxy_tokens
     WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()`,
    [tokenHash],
  );
  return rows[0];
}

/** Live tokens of an environment (optionally of one end user), by id. */
export async function listProxyTokens(
  db: Queryable,
  environmentId: string,
  filter: { identifier?: string; after?: string; limit: number },
): Promise<ProxyTokenRow[]> {
  return db.query<ProxyTokenRow>(
    `SELECT * FROM proxy_tokens
     WHERE environment_id = $1 AND revoked_at IS NULL AND expires_at > now()
       AND ($2::text IS NULL OR identifier = $2)
       AND ($3::text IS NULL OR id > $3)
     ORDER BY id LIMIT $4`,
    [environmentId, filter.identifier ?? null, filter.after ?? null, filter.limit],
  );
}

/** Revokes a token; false when there is no such live token in the environment. */
export async function revokeProxyToken(db: Queryable, environmentId: string, id: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE proxy_tokens SET revoked_at = now()
     WHERE id = $1 AND environment_id = $2 AND revoked_at IS NULL RETURNING id`,
    [id, environmentId],
  );
  return rows.length > 0;
}

export async function touchProxyToken(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE proxy_tokens SET last_used_at = now() WHERE id = $1', [id]);
}
