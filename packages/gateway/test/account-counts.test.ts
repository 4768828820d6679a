import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countAccounts,
  deactivateAccount,
  deleteAbandonedPendingAccounts,
  foldAccountCounts,
  upsertPendingAccount,
} from '../src/store/accounts.js';
import { deleteConnection } from '../src/store/connections.js';
import type { Database } from '../src/store/db.js';
import { createEnvironment } from '../src/store/environments.js';
import { migrate } from '../src/store/migrate.js';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection } from './helpers/flow.js';
import { startTestGateway } from './helpers/gateway.js';

/**
 * The overview's and the /metrics gauge's account counts come from counts the store keeps as
 * accounts come and go; whatever path changes an account, they equal a real count.
 */
describe.each(BACKENDS)('kept account counts on $name', (backend) => {
  // A gateway is not started here: nothing folds but the test.
  let db: Database;
  let env: string;
  let other: string;

  const real = async (environmentId?: string) => {
    const rows = await db.query<{ connection_name: string; status: string; n: number }>(
      `SELECT c.name AS connection_name, a.status, count(*)::int AS n
       FROM connected_accounts a JOIN connections c ON c.id = a.connection_id
       WHERE $1::text IS NULL OR a.environment_id = $1 GROUP BY 1, 2`,
      [environmentId ?? null],
    );
    return Object.fromEntries(rows.map((r) => [`${r.connection_name}/${r.status}`, Number(r.n)]));
  };
  const kept = async (environmentId?: string) => {
    const out: Record<string, number> = {};
    for (const c of await countAccounts(db, environmentId)) {
      const key = `${c.connection_name}/${c.status}`;
      out[key] = (out[key] ?? 0) + c.count;
    }
    return out;
  };
  const expectExact = async () => {
    expect(await kept(env)).toEqual(await real(env));
    expect(await kept(other)).toEqual(await real(other));
    expect(await kept()).toEqual(await real());
    // Folded a few at a time (as the gateway does, in batches), still exact, and nothing left over.
    while ((await foldAccountCounts(db, 3)) === 3) expect(await kept()).toEqual(await real());
    expect(await db.query('SELECT 1 FROM account_count_deltas')).toEqual([]);
    expect(await kept(env)).toEqual(await real(env));
    expect(await kept()).toEqual(await real());
  };

  beforeAll(async () => {
    db = await backend.open();
    await migrate(db);
    env = (await createEnvironment(db, 'counts')).id;
    other = (await createEnvironment(db, 'counts-other')).id;
    await db.query(
      `INSERT INTO connections (id, environment_id, name, provider, client_id, client_secret) VALUES
         ('conn_cn', $1, 'notion', 'notion', 'c', 's'), ('conn_ch', $1, 'hubspot', 'hubspot', 'c', 's'),
         ('conn_on', $2, 'notion', 'notion', 'c', 's')`,
      [env, other],
    );
  });

  afterAll(async () => {
    await db?.close();
  });

  it('counts inserted accounts, one by one and in bulk, per environment', async () => {
    for (let i = 0; i < 5; i++) await upsertPendingAccount(db, env, 'conn_cn', `u${i}`);
    // The same identifier again changes nothing.
    await upsertPendingAccount(db, env, 'conn_cn', 'u0');
    await db.query(
      `INSERT INTO connected_accounts (id, environment_id, connection_id, identifier, status, updated_at)
       SELECT 'ca_bulk' || i, $1, CASE WHEN i % 2 = 0 THEN 'conn_cn' ELSE 'conn_ch' END, 'bulk' || i,
         CASE WHEN i % 3 = 0 THEN 'ACTIVE' ELSE 'PENDING_AUTH' END, now() - interval '30 days'
       FROM generate_series(1, 300) AS i`,
      [env],
    );
    await upsertPendingAccount(db, other, 'conn_on', 'elsewhere');
    await expectExact();
    expect((await kept(env))['notion/PENDING_AUTH']).toBe(5 + 100);
  });

  it('follows status changes, however made', async () => {
    const [first] = await db.query<{ id: string }>(
      `SELECT id FROM connected_accounts WHERE environment_id = $1 AND status = 'ACTIVE' ORDER BY id LIMIT 1`,
      [env],
    );
    await deactivateAccount(db, first!.id, 'EXPIRED', 'test');
    await db.query(
      `UPDATE connected_accounts SET status = 'ACTIVE' WHERE environment_id = $1 AND identifier LIKE 'u%'`,
      [env],
    );
    // Updates that leave the status alone (last use, tokens) change no count.
    await db.query(`UPDATE connected_accounts SET last_used_at = now() WHERE environment_id = $1`, [env]);
    await expectExact();
  });

  it('follows deletions: the abandoned-account job, and a connection taking its accounts along', async () => {
    const removed = await deleteAbandonedPendingAccounts(db, 50);
    expect(removed.length).toBe(50);
    await expectExact();
    await deleteConnection(db, 'conn_ch');
    await expectExact();
    expect(Object.keys(await kept(env)).some((k) => k.startsWith('hubspot/'))).toBe(false);
    // No empty counts are left behind once folded.
    const empty = await db.query(`SELECT 1 FROM account_counts WHERE count <= 0`);
    expect(empty).toEqual([]);
  });

  it('a transaction that rolls back leaves the counts as they were', async () => {
    const before = await kept(env);
    await db
      .transaction(async (tx) => {
        await upsertPendingAccount(tx, env, 'conn_cn', 'never');
        throw Object.assign(new Error('rollback'), { rollback: true });
      })
      .catch((error: { rollback?: boolean }) => {
        if (!error.rollback) throw error;
      });
    expect(await kept(env)).toEqual(before);
  });
});

describe.each(BACKENDS)('account counts while a gateway runs on $name', (backend) => {
  it('the gateway folds the deltas in the background, and the overview reads the same counts', async () => {
    const t = await startTestGateway(backend);
    try {
      await createSandboxConnection(t, 'sandbox-notion', 'notion');
      for (let i = 0; i < 3; i++) {
        const res = await t.api('/api/v1/connected-accounts/authorization-link', {
          method: 'POST',
          json: { connection_name: 'sandbox-notion', identifier: `fold-${i}` },
        });
        expect(res.status).toBe(201);
      }
      const waiting = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM account_count_deltas');
      expect(Number(waiting[0]!.n)).toBeGreaterThan(0);
      expect(await t.gateway.accounts.foldCounts()).toBeGreaterThan(0);
      expect(await t.db.query('SELECT 1 FROM account_count_deltas')).toEqual([]);
      const counts = await countAccounts(t.db);
      const pending = counts.find(
        (c) => c.connection_name === 'sandbox-notion' && c.status === 'PENDING_AUTH',
      );
      expect(pending?.count).toBe(3);
    } finally {
      await t.close();
    }
  });
});
