import type { Queryable } from './db.js';

export interface ToolsetRow {
  id: string;
  environment_id: string;
  name: string;
  /** The toolset as the API took it (toolsets/definition.ts), validated before it is stored. */
  definition: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export async function insertToolset(
  db: Queryable,
  row: Pick<ToolsetRow, 'id' | 'environment_id' | 'name' | 'definition'>,
): Promise<ToolsetRow | undefined> {
  const rows = await db.query<ToolsetRow>(
    `INSERT INTO toolsets (id, environment_id, name, definition) VALUES ($1, $2, $3, $4)
     ON CONFLICT (environment_id, name) DO NOTHING RETURNING *`,
    [row.id, row.environment_id, row.name, JSON.stringify(row.definition)],
  );
  return rows[0];
}

export async function findToolset(
  db: Queryable,
  environmentId: string,
  name: string,
): Promise<ToolsetRow | undefined> {
  const rows = await db.query<ToolsetRow>('SELECT * FROM toolsets WHERE environment_id = $1 AND name = $2', [
    environmentId,
    name,
  ]);
  return rows[0];
}

export async function updateToolset(
  db: Queryable,
  environmentId: string,
  name: string,
  definition: Record<string, unknown>,
): Promise<ToolsetRow | undefined> {
  const rows = await db.query<ToolsetRow>(
    `UPDATE toolsets SET definition = $3, updated_at = now()
     WHERE environment_id = $1 AND name = $2 RETURNING *`,
    [environmentId, name, JSON.stringify(definition)],
  );
  return rows[0];
}

export async function deleteToolset(db: Queryable, environmentId: string, name: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    'DELETE FROM toolsets WHERE environment_id = $1 AND name = $2 RETURNING id',
    [environmentId, name],
  );
  return rows.length > 0;
}

/** A page of an environment's toolsets by name, after `after` (the last name of the previous page). */
export async function listToolsets(
  db: Queryable,
  environmentId: string,
  opts: { after?: string | undefined; limit: number },
): Promise<ToolsetRow[]> {
  return db.query<ToolsetRow>(
    `SELECT * FROM toolsets WHERE environment_id = $1 AND ($2::text IS NULL OR name > $2)
     ORDER BY name LIMIT $3`,
    [environmentId, opts.after ?? null, opts.limit],
  );
}

/** Every toolset name of an environment (for suggestions), at most a thousand. */
export async function toolsetNames(db: Queryable, environmentId: string): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    'SELECT name FROM toolsets WHERE environment_id = $1 ORDER BY name LIMIT 1000',
    [environmentId],
  );
  return rows.map((r) => r.name);
}
