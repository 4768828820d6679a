import type { Queryable } from './db.js';

/**
 * A row of a table of named definitions (policies, toolsets): per environment, unique by name,
 * the definition as the API took it, validated before it is stored.
 */
export interface NamedDefinitionRow {
  id: string;
  environment_id: string;
  name: string;
  definition: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** The tables that hold named definitions: the only names the statements below interpolate. */
export type NamedDefinitionTable = 'policies' | 'toolsets';

/** The statements every table of named definitions answers, for one table. */
export function namedDefinitions(table: NamedDefinitionTable) {
  return {
    /** Undefined when the environment already has one of that name. */
    async insert(
      db: Queryable,
      row: Pick<NamedDefinitionRow, 'id' | 'environment_id' | 'name' | 'definition'>,
    ): Promise<NamedDefinitionRow | undefined> {
      const rows = await db.query<NamedDefinitionRow>(
        `INSERT INTO ${table} (id, environment_id, name, definition) VALUES ($1, $2, $3, $4)
         ON CONFLICT (environment_id, name) DO NOTHING RETURNING *`,
        [row.id, row.environment_id, row.name, JSON.stringify(row.definition)],
      );
      return rows[0];
    },

    async find(db: Queryable, environmentId: string, name: string): Promise<NamedDefinitionRow | undefined> {
      const rows = await db.query<NamedDefinitionRow>(
        `SELECT * FROM ${table} WHERE environment_id = $1 AND name = $2`,
        [environmentId, name],
      );
      return rows[0];
    },

    async replace(
      db: Queryable,
      environmentId: string,
      name: string,
      definition: Record<string, unknown>,
    ): Promise<NamedDefinitionRow | undefined> {
      const rows = await db.query<NamedDefinitionRow>(
        `UPDATE ${table} SET definition = $3, updated_at = now()
         WHERE environment_id = $1 AND name = $2 RETURNING *`,
        [environmentId, name, JSON.stringify(definition)],
      );
      return rows[0];
    },

    async delete(db: Queryable, environmentId: string, name: string): Promise<boolean> {
      const rows = await db.query<{ id: string }>(
        `DELETE FROM ${table} WHERE environment_id = $1 AND name = $2 RETURNING id`,
        [environmentId, name],
      );
      return rows.length > 0;
    },

    /** A page by name, after `after` (the last name of the previous page). */
    list(
      db: Queryable,
      environmentId: string,
      opts: { after?: string | undefined; limit: number },
    ): Promise<NamedDefinitionRow[]> {
      return db.query<NamedDefinitionRow>(
        `SELECT * FROM ${table} WHERE environment_id = $1 AND ($2::text IS NULL OR name > $2)
         ORDER BY name LIMIT $3`,
        [environmentId, opts.after ?? null, opts.limit],
      );
    },

    /** Every name of an environment (for suggestions), at most a thousand. */
    async names(db: Queryable, environmentId: string): Promise<string[]> {
      const rows = await db.query<{ name: string }>(
        `SELECT name FROM ${table} WHERE environment_id = $1 ORDER BY name LIMIT 1000`,
        [environmentId],
      );
      return rows.map((r) => r.name);
    },
  };
}
