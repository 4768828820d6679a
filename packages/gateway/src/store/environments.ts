import type { Queryable } from './db.js';
import { newId } from './ids.js';

export interface Environment {
  id: string;
  name: string;
  created_at: Date;
}

export const DEFAULT_ENVIRONMENT = 'default';

export async function findEnvironmentByName(db: Queryable, name: string): Promise<Environment | undefined> {
  const rows = await db.query<Environment>('SELECT * FROM environments WHERE name = $1', [name]);
  return rows[0];
}

export async function createEnvironment(db: Queryable, name: string): Promise<Environment> {
  const rows = await db.query<Environment>(
    'INSERT INTO environments (id, name) VALUES ($1, $2) RETURNING *',
    [newId('env'), name],
  );
  return rows[0]!;
}
