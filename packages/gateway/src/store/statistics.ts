import type { Database } from './db.js';
import { quoteIdent } from './quote.js';

/**
 * How often the embedded store looks for tables whose planner statistics are out of date. A check
 * is one read of the statistics views (well under a millisecond); ANALYZE reads a sample of at most
 * 30,000 rows per table, and runs only for tables that changed enough.
 */
export const STATISTICS_INTERVAL_MS = 15_000;

/**
 * A table is analyzed once 50 rows plus as many rows as it had have changed (doubled, or rewritten).
 * autovacuum's tenth is too often here: ANALYZE runs on the gateway's own CPU (164 ms at 50,000
 * executions), which every 5,000 calls was 33 µs per call; once per doubling it is under 4 µs. The
 * planner scales a table's size by its pages between two ANALYZEs, so the estimates stay close.
 */
const ANALYZE_THRESHOLD = 50;
const ANALYZE_SCALE_FACTOR = 1;

/**
 * Analyzes the embedded store's tables that changed enough since their last ANALYZE (autovacuum's
 * rule, with a larger scale factor); returns the tables analyzed. PGlite runs PostgreSQL in
 * single-user mode, where no autovacuum runs: without this the planner never learns a table's
 * size and plans every query for a table of a few rows, e.g. the executions list read and sorted
 * the whole table for a page of 100 (57 ms at 20,000 executions, against 3 ms on the index once
 * analyzed). PostgreSQL's own autovacuum does this on a server, so there it does nothing.
 */
export async function refreshStatistics(db: Database): Promise<string[]> {
  if (db.kind !== 'pglite') return [];
  // The one backend's own counts reach the statistics views at most once a second, unless flushed.
  await db.query('SELECT pg_stat_force_next_flush()');
  const stale = await db.query<{ schemaname: string; relname: string }>(
    `SELECT s.schemaname, s.relname
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.schemaname = current_schema()
       AND s.n_mod_since_analyze > $1 + $2 * greatest(c.reltuples, 0)
     ORDER BY s.relname`,
    [ANALYZE_THRESHOLD, ANALYZE_SCALE_FACTOR],
  );
  for (const table of stale) {
    await db.query(`ANALYZE ${quoteIdent(table.schemaname)}.${quoteIdent(table.relname)}`);
  }
  return stale.map((table) => table.relname);
}
