import { afterAll, describe, expect, it } from 'vitest';
import { bootstrapStore } from '../src/auth/bootstrap.js';
import type { Database } from '../src/store/db.js';
import { type ExecutionRow, insertExecutions, listExecutions } from '../src/store/executions.js';
import { migrate } from '../src/store/migrate.js';
import { refreshStatistics } from '../src/store/statistics.js';
import { BACKENDS } from './helpers/backends.js';

function executions(environmentId: string, count: number, from: number): ExecutionRow[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `exec_${String(from + i).padStart(8, '0')}`,
    environment_id: environmentId,
    tool_name: 'notes_user_list',
    tool_version: null,
    account_id: null,
    connection_name: 'notion',
    identifier: 'user-1',
    status: 'success',
    error_code: null,
    upstream_calls: 1,
    duration_ms: 3,
    started_at: new Date(Date.UTC(2026, 0, 1) + (from + i) * 1000),
    finished_at: new Date(Date.UTC(2026, 0, 1) + (from + i) * 1000 + 3),
  }));
}

describe.each(BACKENDS)('planner statistics on $name', (backend) => {
  const opened: Database[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
  });

  it('analyzes the tables that changed enough (50 rows plus their size) on the embedded store only', async () => {
    const db = await backend.open();
    opened.push(db);
    await migrate(db);
    const { environment } = await bootstrapStore(db);
    const analyzed = async () =>
      (
        await db.query<{ last_analyze: Date | null }>(
          `SELECT last_analyze FROM pg_stat_user_tables
           WHERE schemaname = current_schema() AND relname = 'executions'`,
        )
      )[0]?.last_analyze ?? null;

    // Under the threshold (50 rows changed): nothing to do yet.
    await insertExecutions(db, executions(environment.id, 40, 0));
    expect(await refreshStatistics(db)).not.toContain('executions');
    await insertExecutions(db, executions(environment.id, 2000, 40));
    const first = await refreshStatistics(db);
    if (backend.name === 'postgres') {
      // The server's autovacuum keeps them; the gateway runs nothing.
      expect(first).toEqual([]);
      return;
    }
    expect(first).toContain('executions');
    expect(await analyzed()).not.toBeNull();
    // Analyzed just now: a second look finds nothing changed since, nor after growing by less
    // than its size.
    expect(await refreshStatistics(db)).not.toContain('executions');
    await insertExecutions(db, executions(environment.id, 1000, 2040));
    expect(await refreshStatistics(db)).not.toContain('executions');

    // With the statistics, a page of the list walks an index in order instead of reading and
    // sorting every execution of the environment.
    const plan = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT id FROM executions WHERE environment_id = $1
       ORDER BY started_at DESC, id DESC LIMIT 101`,
      [environment.id],
    );
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index (Only )?Scan( Backward)? using executions_/);
    expect(text).not.toMatch(/->\s+Sort\b|Bitmap Heap Scan/);
    const page = await listExecutions(db, environment.id, { limit: 101 });
    expect(page).toHaveLength(101);
    expect(page[0]!.id).toBe('exec_00003039');
  });
});
