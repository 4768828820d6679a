import type { Database } from './db.js';
import { MIGRATIONS, type Migration } from './migrations.js';

/** Arbitrary constant: the advisory lock that serialises migrations across replicas. */
const MIGRATION_LOCK = 7_406_231;

export interface MigrationResult {
  applied: number[];
  current: number;
}

/** Applies pending migrations in one transaction; concurrent starters wait for each other. */
export async function migrate(db: Database, migrations: Migration[] = MIGRATIONS): Promise<MigrationResult> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version     integer PRIMARY KEY,
      name        text NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    const current = Math.max(0, ...done, ...applied);
    return { applied, current };
  });
}

/**
 * Migrations hold no semicolon at a line's end but their statements' own (a function body is
 * written on one line), so splitting on `;` at line end is exact.
 */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
}
