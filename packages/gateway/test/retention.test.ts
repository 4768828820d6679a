import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionService } from '../src/executions/service.js';
import type { Database } from '../src/store/db.js';
import { createEnvironment } from '../src/store/environments.js';
import { type ExecutionRow, findExecution, insertExecutions } from '../src/store/executions.js';
import { migrate } from '../src/store/migrate.js';
import { MIGRATIONS } from '../src/store/migrations.js';
import { BACKENDS } from './helpers/backends.js';

const logger = pino({ level: 'silent' });
const DAY = 86_400_000;
let seq = 0;

function execution(
  environmentId: string,
  startedAt: Date,
  overrides: Partial<ExecutionRow> = {},
): ExecutionRow {
  seq += 1;
  return {
    id: `exec_r${seq.toString().padStart(8, '0')}`,
    environment_id: environmentId,
    tool_name: 'notes_user_list',
    tool_version: '1',
    account_id: null,
    connection_name: 'notion',
    identifier: 'retention-user',
    status: 'success',
    error_code: null,
    upstream_calls: 1,
    duration_ms: 20,
    started_at: startedAt,
    finished_at: new Date(startedAt.getTime() + 20),
    ...overrides,
  };
}

const count = async (db: Database, table: string) =>
  Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n);

describe.each(BACKENDS)('execution retention and rollup on $name', (backend) => {
  let db: Database;
  let environmentId: string;

  beforeAll(async () => {
    db = await backend.open();
    await migrate(db);
    environmentId = (await createEnvironment(db, 'retention')).id;
  });

  afterAll(async () => {
    await db?.close();
  });

  it('removes records past the retention period in bounded batches and keeps the rest', async () => {
    await db.query('DELETE FROM executions');
    const now = Date.now();
    const old = Array.from({ length: 25 }, (_, i) =>
      execution(environmentId, new Date(now - (40 + i) * DAY)),
    );
    const recent = Array.from({ length: 5 }, (_, i) => execution(environmentId, new Date(now - i * DAY)));
    await insertExecutions(db, [...old, ...recent]);
    const service = new ExecutionService(db, logger, {}, 30);
    try {
      // Two batches of 10 at most: the backlog is worked off over several runs, not in one burst.
      expect(await service.prune({ batch: 10, pauseMs: 1, maxBatches: 2 })).toBe(20);
      expect(await count(db, 'executions')).toBe(10);
      expect(await service.prune({ batch: 10, pauseMs: 1 })).toBe(5);
      const left = await db.query<{ id: string }>('SELECT id FROM executions ORDER BY id');
      expect(left.map((r) => r.id)).toEqual(recent.map((r) => r.id));
      expect(await service.prune({ batch: 10, pauseMs: 1 })).toBe(0);
    } finally {
      await service.close();
    }
  });

  it('keeps every record when the retention is 0', async () => {
    await db.query('DELETE FROM executions');
    await insertExecutions(db, [execution(environmentId, new Date(Date.now() - 5000 * DAY))]);
    const service = new ExecutionService(db, logger, {}, 0);
    try {
      expect(await service.prune()).toBe(0);
      expect(await count(db, 'executions')).toBe(1);
    } finally {
      await service.close();
    }
  });

  it('serves the statistics from the rollup, counting a retried batch once', async () => {
    const env = (await createEnvironment(db, 'stats')).id;
    const now = Date.now();
    const rows = [
      ...Array.from({ length: 100 }, (_, i) =>
        execution(env, new Date(now - 60_000), { duration_ms: i + 1 }),
      ),
      execution(env, new Date(now - 2 * 3_600_000), { status: 'error', error_code: 'upstream_timeout' }),
      execution(env, new Date(now - 2 * 3_600_000), { status: 'error', error_code: 'upstream_timeout' }),
      execution(env, new Date(now - 3 * 3_600_000), { status: 'error', error_code: null }),
    ];
    await insertExecutions(db, rows);
    await insertExecutions(db, rows.slice(0, 10)); // the same ids again: ON CONFLICT, not counted
    const service = new ExecutionService(db, logger, { notes_user_list: 'notion' }, 30);
    try {
      // The statistics no longer read the executions table: emptying it leaves them whole.
      await db.query('DELETE FROM executions WHERE environment_id = $1', [env]);
      const stats = await service.stats(env, '24h');
      const total = stats.hours.reduce((sum, h) => sum + h.success + h.error, 0);
      expect(total).toBe(103);
      expect(stats.hours.at(-1)!.success).toBe(100);
      expect(stats.error_codes).toEqual([
        { error_code: 'upstream_timeout', count: 2 },
        { error_code: 'unknown', count: 1 },
      ]);
      expect(stats.providers).toHaveLength(1);
      const notion = stats.providers[0]!;
      expect(notion).toMatchObject({ provider: 'notion', count: 103 });
      // Durations 1..100 (and three of 20 ms): p50 ≈ 49, p95 ≈ 95, within a bucket's width.
      expect(notion.p50_ms).toBeGreaterThanOrEqual(40);
      expect(notion.p50_ms).toBeLessThanOrEqual(58);
      expect(notion.p95_ms).toBeGreaterThanOrEqual(82);
      expect(notion.p95_ms).toBeLessThanOrEqual(110);
    } finally {
      await service.close();
    }
  });

  it('writes a batch as the recorder does (COPY on the embedded store): text kept exactly, a deleted account not pointed to', async () => {
    const odd = 'tab\there, line\nbreak, back\\slash \\N, quote " and ünïcødé';
    const rows = [
      execution(environmentId, new Date(), {
        status: 'error',
        error_code: 'upstream_error',
        error_detail: odd,
        error_fields: [{ path: '/tool_input/q', message: odd }],
        input: { q: odd, nested: { list: [1, null, true] } },
        timings: { total_ms: 1.25 },
        account_id: 'acc_deletedsincethecall00',
      }),
      execution(environmentId, new Date(), { tool_version: null, identifier: null, input: {} }),
    ];
    await db.transaction((tx) => insertExecutions(tx, rows));
    const [first, second] = [await findExecution(db, rows[0]!.id), await findExecution(db, rows[1]!.id)];
    expect(first).toMatchObject({
      status: 'error',
      error_detail: odd,
      error_fields: [{ path: '/tool_input/q', message: odd }],
      input: { q: odd, nested: { list: [1, null, true] } },
      timings: { total_ms: 1.25 },
      account_id: null,
    });
    expect(second).toMatchObject({ tool_version: null, identifier: null, input: {}, error_detail: null });
  });

  it('counts a batch into the same rollup in a transaction (COPY on the embedded store) as in one statement', async () => {
    const other = (await createEnvironment(db, `retention-same-${Date.now()}`)).id;
    const start = Date.parse('2026-05-01T10:00:00Z');
    const rows = (environment: string) =>
      Array.from({ length: 60 }, (_, i) =>
        execution(environment, new Date(start + i * 97_000), {
          duration_ms: [0, 1, 2, 3, 7, 15, 100, 1000, 65_000][i % 9]!,
          status: i % 4 ? 'success' : 'error',
          error_code: i % 4 ? null : 'rate_limited',
          tool_name: i % 3 ? 'notes_user_list' : 'notes_search',
        }),
      );
    await insertExecutions(db, rows(environmentId));
    await db.transaction((tx) => insertExecutions(tx, rows(other)));
    const rollup = (environment: string) =>
      db.query(
        `SELECT hour, tool_name, status, error_code, duration_bucket, count FROM execution_rollups
         WHERE environment_id = $1 AND hour >= $2 AND hour < $3
         ORDER BY hour, tool_name, status, error_code, duration_bucket`,
        [environment, new Date(start), new Date(start + 86_400_000)],
      );
    const expected = await rollup(environmentId);
    expect(expected.length).toBeGreaterThan(10);
    expect(await rollup(other)).toEqual(expected);
  });

  it("keeps a record's times to the millisecond, and counts it in the hour it started, in UTC", async () => {
    // Sent as epoch milliseconds: a Date is stored exactly, however far from the epoch.
    const startedAt = new Date('2026-03-29T00:59:59.999Z');
    const row = execution(environmentId, startedAt, { finished_at: new Date('2026-03-29T01:00:00.001Z') });
    await db.transaction((tx) => insertExecutions(tx, [row]));
    const stored = await findExecution(db, row.id);
    expect(stored?.started_at.toISOString()).toBe('2026-03-29T00:59:59.999Z');
    expect(stored?.finished_at.toISOString()).toBe('2026-03-29T01:00:00.001Z');
    const hours = await db.query<{ hour: Date }>(
      'SELECT hour FROM execution_rollups WHERE environment_id = $1 AND hour >= $2 AND hour < $3',
      [environmentId, new Date('2026-03-28T00:00:00Z'), new Date('2026-03-30T00:00:00Z')],
    );
    expect(hours.map((h) => new Date(h.hour).toISOString())).toEqual(['2026-03-29T00:00:00.000Z']);
  });

  it('reads the hours that have ended once, and the hour under way on every request', async () => {
    const env = (await createEnvironment(db, 'stats-ended-hours')).id;
    const now = Date.now();
    await insertExecutions(db, [
      execution(env, new Date(now - 2 * 3_600_000), { duration_ms: 900 }),
      execution(env, new Date(now - 30 * 3_600_000), { status: 'error', error_code: 'upstream_timeout' }),
    ]);
    const service = new ExecutionService(db, logger, { notes_user_list: 'notion' }, 30);
    try {
      const first = await service.stats(env, '7d');
      expect(first.hours.reduce((sum, h) => sum + h.success + h.error, 0)).toBe(2);
      expect(first.error_codes).toEqual([{ error_code: 'upstream_timeout', count: 1 }]);
      // The ended hours now come from memory: their rollup rows are no longer read...
      await db.query('DELETE FROM execution_rollups WHERE environment_id = $1', [env]);
      // ...while a call of the hour under way counts at once, and its figures add to the kept ones.
      service.record(execution(env, new Date(), { duration_ms: 900 }));
      const second = await service.stats(env, '7d');
      expect(second.hours.reduce((sum, h) => sum + h.success + h.error, 0)).toBe(3);
      expect(second.hours.at(-1)!.success).toBe(1);
      expect(second.error_codes).toEqual([{ error_code: 'upstream_timeout', count: 1 }]);
      expect(second.providers).toEqual([
        expect.objectContaining({ provider: 'notion', count: 3, p95_ms: first.providers[0]!.p95_ms }),
      ]);
      // The 24-hour window is its own entry, read from the database.
      const day = await service.stats(env, '24h');
      expect(day.hours.reduce((sum, h) => sum + h.success + h.error, 0)).toBe(1);
    } finally {
      await service.close();
    }
  });

  it('drops rollup hours past the retention period but keeps the 7 days the dashboard shows', async () => {
    const env = (await createEnvironment(db, 'rollup-retention')).id;
    const now = Date.now();
    await insertExecutions(db, [
      execution(env, new Date(now - 3 * DAY)),
      execution(env, new Date(now - 20 * DAY)),
    ]);
    const service = new ExecutionService(db, logger, {}, 1);
    try {
      await service.prune({ batch: 10, pauseMs: 1 });
      const hours = await db.query<{ hour: Date }>(
        'SELECT hour FROM execution_rollups WHERE environment_id = $1',
        [env],
      );
      expect(hours).toHaveLength(1);
      expect(now - new Date(hours[0]!.hour).getTime()).toBeLessThan(4 * DAY);
      expect((await service.stats(env, '7d')).hours.reduce((sum, h) => sum + h.success, 0)).toBe(1);
    } finally {
      await service.close();
    }
  });
});

describe.each(BACKENDS)('the rollup migration on $name', (backend) => {
  it('backfills the rollup from the executions recorded before it', async () => {
    const db = await backend.open();
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 18),
      );
      const env = (await createEnvironment(db, 'backfill')).id;
      const startedAt = new Date(Date.now() - 60_000);
      for (const status of ['success', 'success', 'error'] as const) {
        const row = execution(env, startedAt, { status });
        await db.query(
          `INSERT INTO executions (id, environment_id, tool_name, status, duration_ms, started_at, finished_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [row.id, env, row.tool_name, row.status, row.duration_ms, row.started_at, row.finished_at],
        );
      }
      await migrate(db);
      const service = new ExecutionService(db, logger, {}, 30);
      try {
        const last = (await service.stats(env, '24h')).hours.at(-1)!;
        expect(last).toMatchObject({ success: 2, error: 1 });
      } finally {
        await service.close();
      }
    } finally {
      await db.close();
    }
  });
});
