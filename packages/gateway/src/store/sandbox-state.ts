import type { Queryable } from './db.js';

/** The sealed state document stored under `id`, if any. */
export async function readSandboxState(db: Queryable, id: string): Promise<string | undefined> {
  const rows = await db.query<{ state: string }>('SELECT state FROM sandbox_state WHERE id = $1', [id]);
  return rows[0]?.state;
}

export async function writeSandboxState(db: Queryable, id: string, sealed: string): Promise<void> {
  await db.query(
    `INSERT INTO sandbox_state (id, state) VALUES ($1, $2)
     ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, updated_at = now()`,
    [id, sealed],
  );
}
