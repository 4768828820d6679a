import type { Queryable } from './db.js';
import { newId } from './ids.js';

export interface Environment {
  id: string;
  name: string;
  /** Origins or URL prefixes this environment's links may redirect to, on top of the global list. */
  redirect_url_allowlist: string[] | null;
  /** The application's name and look on Portico's pages (authorization/branding.ts). */
  branding: Record<string, string> | null;
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

export async function findEnvironment(db: Queryable, id: string): Promise<Environment | undefined> {
  return (await db.query<Environment>('SELECT * FROM environments WHERE id = $1', [id]))[0];
}

export async function setRedirectUrlAllowlist(
  db: Queryable,
  id: string,
  allowlist: string[],
): Promise<Environment | undefined> {
  const rows = await db.query<Environment>(
    'UPDATE environments SET redirect_url_allowlist = $2 WHERE id = $1 RETURNING *',
    [id, allowlist],
  );
  return rows[0];
}

export async function setBranding(
  db: Queryable,
  id: string,
  branding: Record<string, string> | null,
): Promise<Environment | undefined> {
  const rows = await db.query<Environment>(
    'UPDATE environments SET branding = $2 WHERE id = $1 RETURNING *',
    [id, branding ? JSON.stringify(branding) : null],
  );
  return rows[0];
}
