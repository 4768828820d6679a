import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase, PLAN_ONCE } from '../src/store/db.js';

/**
 * The embedded store prepares each statement once and binds it afterwards (store/pglite-prepared.ts):
 * what a caller sends and gets back must not change, errors included.
 */
describe('prepared statements on the embedded store', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ dataDir: 'memory://' });
    await db.query(
      'CREATE TABLE t (id text PRIMARY KEY, n integer, at timestamptz, ok boolean, doc jsonb, tags text[])',
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  it('binds every parameter type the store sends and parses what comes back, call after call', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) {
      await db.query('INSERT INTO t (id, n, at, ok, doc, tags) VALUES ($1, $2, $3, $4, $5, $6)', [
        id,
        id.charCodeAt(0),
        at,
        id === 'a',
        { id, nested: { quote: "it's", list: [1, null] } },
        ['x', 'y "z"'],
      ]);
    }
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM t WHERE id = ANY($1) ORDER BY id', [
      ['a', 'g'],
    ]);
    expect(rows).toEqual([
      {
        id: 'a',
        n: 97,
        at,
        ok: true,
        doc: { id: 'a', nested: { quote: "it's", list: [1, null] } },
        tags: ['x', 'y "z"'],
      },
      {
        id: 'g',
        n: 103,
        at,
        ok: false,
        doc: { id: 'g', nested: { quote: "it's", list: [1, null] } },
        tags: ['x', 'y "z"'],
      },
    ]);
    expect(await db.query('SELECT n FROM t WHERE id = $1', [null])).toEqual([]);
  });

  it('reads answers from their bytes as PGlite does: any text, nulls, a repeated name, many rows', async () => {
    const text = 'ünïcødé ✓ 😀 \\ "quoted" \n next line';
    expect(await db.query('SELECT $1::text AS t, NULL::int AS n, 1 AS x, 2 AS x', [text])).toEqual([
      { t: text, n: null, x: 2 },
    ]);
    const many = await db.query<{ i: number; s: string }>(
      "SELECT i, repeat('é', i) AS s FROM generate_series(1, $1::int) AS i",
      [500],
    );
    expect(many).toHaveLength(500);
    expect(many[499]).toEqual({ i: 500, s: 'é'.repeat(500) });
    expect(await db.query('SELECT 1 AS one WHERE false')).toEqual([]);
  });

  it('plans each call with its own values (lists with optional filters plan badly without them)', async () => {
    expect(await db.query('SHOW plan_cache_mode')).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
  });

  it('reports a failed statement as the database said, and the next call still works', async () => {
    await expect(db.query('SELEC 1')).rejects.toThrow(/syntax error/);
    await expect(db.query('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
    const insert = 'INSERT INTO t (id) VALUES ($1)';
    await expect(db.query(insert, ['a'])).rejects.toMatchObject({ code: '23505' });
    await expect(db.query(insert, ['h'])).resolves.toEqual([]);
    await expect(db.query('SELECT n FROM t WHERE n = $1', ['not a number'])).rejects.toThrow(/integer/);
    await expect(db.query('SELECT count(*)::int AS c FROM t')).resolves.toEqual([{ c: 8 }]);
  });

  it('plans a PLAN_ONCE statement once for every call, and keeps the session planning per call', async () => {
    const once = `${PLAN_ONCE}SELECT id, n FROM t WHERE n > $1 ORDER BY id LIMIT $2`;
    expect(await db.query(once, [100, 2])).toEqual([
      { id: 'e', n: 101 },
      { id: 'f', n: 102 },
    ]);
    for (const [above, limit] of [
      [97, 3],
      [100, 10],
      [0, 1],
    ] as const) {
      const plain = await db.query('SELECT id, n FROM t WHERE n > $1 ORDER BY id LIMIT $2', [above, limit]);
      expect(await db.query(once, [above, limit])).toEqual(plain);
    }
    const plans = await db.query<{ generic_plans: number; custom_plans: number }>(
      'SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement = $1',
      [once],
    );
    expect(plans).toEqual([{ generic_plans: 4, custom_plans: 0 }]);
    expect(await db.query('SHOW plan_cache_mode')).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
    // A failed call rolls its plan mode back with it.
    await expect(db.query(`${PLAN_ONCE}SELECT 1 / $1::int AS x`, [0])).rejects.toThrow(/division by zero/);
    expect(await db.query('SHOW plan_cache_mode')).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
    expect(await db.query(`${PLAN_ONCE}SELECT 1 / $1::int AS x`, [1])).toEqual([{ x: 1 }]);
  });

  it('refuses a statement once the store is closed, saying so', async () => {
    const other = await openDatabase({ dataDir: 'memory://' });
    await other.query('SELECT 1');
    await other.close();
    await expect(other.query('SELECT 1')).rejects.toThrow('embedded database is closed');
  });

  it('waits for a transaction in progress instead of running inside it', async () => {
    let inside!: () => void;
    const held = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tx = db.transaction(async (q) => {
      await q.query('INSERT INTO t (id) VALUES ($1)', ['in-tx']);
      inside();
      await gate;
      throw new Error('roll back');
    });
    await held;
    const outside = db.query<{ c: number }>('SELECT count(*)::int AS c FROM t WHERE id = $1', ['in-tx']);
    release();
    await expect(tx).rejects.toThrow('roll back');
    // Had it run inside the transaction, it would have seen the row the rollback took away.
    await expect(outside).resolves.toEqual([{ c: 0 }]);
  });
});
