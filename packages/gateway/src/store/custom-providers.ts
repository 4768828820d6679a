import type { Queryable } from './db.js';

/** An environment's own provider definition, as stored (validated before it got here). */
export interface CustomProviderRow {
  environment_id: string;
  key: string;
  definition: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export async function listCustomProviders(
  db: Queryable,
  environmentId?: string,
): Promise<CustomProviderRow[]> {
  return db.query<CustomProviderRow>(
    'SELECT * FROM custom_providers WHERE ($1::text IS NULL OR environment_id = $1) ORDER BY environment_id, key',
    [environmentId ?? null],
  );
}

export async function findCustomProvider(
  db: Queryable,
  environmentId: string,
  key: string,
): Promise<CustomProviderRow | undefined> {
  const rows = await db.query<CustomProviderRow>(
    'SELECT * FROM custom_providers WHERE environment_id = $1 AND key = $2',
    [environmentId, key],
  );
  return rows[0];
}

/** How many custom providers the environment holds; `lock` first locks the environment's row (in a transaction). */
export async function countCustomProviders(
  db: Queryable,
  environmentId: string,
  opts: { lock?: boolean } = {},
): Promise<number> {
  if (opts.lock) await db.query('SELECT id FROM environments WHERE id = $1 FOR UPDATE', [environmentId]);
  const rows = await db.query<{ count: number | string }>(
    'SELECT count(*) AS count FROM custom_providers WHERE environment_id = $1',
    [environmentId],
  );
  return Number(rows[0]?.count ?? 0);
}

export async function insertCustomProvider(
  db: Queryable,
  environmentId: string,
  key: string,
  definition: object,
): Promise<CustomProviderRow | undefined> {
  const rows = await db.query<CustomProviderRow>(
    `INSERT INTO custom_providers (environment_id, key, definition) VALUES ($1, $2, $3)
     ON CONFLICT (environment_id, key) DO NOTHING RETURNING *`,
    [environmentId, key, JSON.stringify(definition)],
  );
  return rows[0];
}

export async function replaceCustomProvider(
  db: Queryable,
  environmentId: string,
  key: string,
  definition: object,
): Promise<CustomProviderRow | undefined> {
  const rows = await db.query<CustomProviderRow>(
    `UPDATE custom_providers SET definition = $3, updated_at = now()
     WHERE environment_id = $1 AND key = $2 RETURNING *`,
    [environmentId, key, JSON.stringify(definition)],
  );
  return rows[0];
}

export async function deleteCustomProvider(
  db: Queryable,
  environmentId: string,
  key: string,
): Promise<boolean> {
  const rows = await db.query(
    'DELETE FROM custom_providers WHERE environment_id = $1 AND key = $2 RETURNING key',
    [environmentId, key],
  );
  return rows.length > 0;
}

/** Names of the connections that use a provider, for refusing its removal. */
export async function connectionsUsingProvider(
  db: Queryable,
  environmentId: string,
  key: string,
): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    'SELECT name FROM connections WHERE environment_id = $1 AND provider = $2 ORDER BY name LIMIT 20',
    [environmentId, key],
  );
  return rows.map((r) => r.name);
}
