import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountsWithIdleRefreshTokens,
  countAccounts,
  deleteAbandonedPendingAccounts,
  findAccount,
  findAccountByIdentifier,
  foldAccountCounts,
  listAccounts,
  recentlyExpiredAccounts,
  touchAccounts,
} from '../src/store/accounts.js';
import type { Database, Queryable } from '../src/store/db.js';
import { findEvent, listEvents, pruneEvents } from '../src/store/events.js';
import {
  executionStatsRows,
  findExecution,
  listExecutions,
  pruneExecutionRollups,
  pruneExecutions,
} from '../src/store/executions.js';
import { migrate } from '../src/store/migrate.js';
import { claimDeliveries, countPendingDeliveries, listAttempts } from '../src/store/webhooks.js';
import { BACKENDS } from './helpers/backends.js';

/**
 * Every list, lookup and background-job query the store issues on the large tables, planned by
 * PostgreSQL over 200,000 rows each: none may read a whole large table (a Seq Scan), which is what
 * turns into seconds at a million accounts and a hundred million executions.
 */
const ROWS = 200_000;
const LARGE = new Set([
  'connected_accounts',
  'executions',
  'events',
  'webhook_deliveries',
  'webhook_attempts',
  'authorization_links',
  'authorization_requests',
]);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function seqScans(node: PlanNode, found: string[] = []): string[] {
  if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] && LARGE.has(node['Relation Name'])) {
    found.push(node['Relation Name']);
  }
  for (const child of node.Plans ?? []) seqScans(child, found);
  return found;
}

const postgres = BACKENDS.find((b) => b.name === 'postgres');

describe.skipIf(!postgres)('query plans at scale on PostgreSQL', () => {
  let db: Database;
  const env = 'env_scale';

  beforeAll(async () => {
    db = await postgres!.open();
    await migrate(db);
    await db.query(`INSERT INTO environments (id, name) VALUES ('${env}', 'scale'), ('env_other', 'other')`);
    await db.query(
      `INSERT INTO connections (id, environment_id, name, provider, client_id, client_secret)
       VALUES ('conn_n', '${env}', 'notion', 'notion', 'c', 's'), ('conn_h', '${env}', 'hubspot', 'hubspot', 'c', 's')`,
    );
    // 90 % active, the rest pending, expired or disconnected; refreshes spread over 90 days.
    await db.query(
      `INSERT INTO connected_accounts (id, environment_id, connection_id, identifier, status, access_token,
         refresh_token, last_refreshed_at, updated_at)
       SELECT 'acct_' || lpad(i::text, 8, '0'), '${env}', CASE WHEN i % 2 = 0 THEN 'conn_n' ELSE 'conn_h' END,
         'user-' || i,
         CASE WHEN i % 20 = 0 THEN 'PENDING_AUTH' WHEN i % 33 = 0 THEN 'EXPIRED'
              WHEN i % 50 = 0 THEN 'DISCONNECTED' ELSE 'ACTIVE' END,
         'sealed', 'sealed', now() - (i % 90) * interval '1 day', now() - (i % 90) * interval '1 day'
       FROM generate_series(1, $1) AS i`,
      [ROWS],
    );
    await db.query(
      `INSERT INTO authorization_links (token_hash, account_id, expires_at)
       SELECT 'h' || i, 'acct_' || lpad(i::text, 8, '0'), now() - interval '1 day'
       FROM generate_series(1, $1) AS i`,
      [ROWS],
    );
    await db.query(
      `INSERT INTO authorization_requests (id, state_hash, account_id, connection_id, expires_at)
       SELECT 'req' || i, 's' || i, 'acct_' || lpad(i::text, 8, '0'), 'conn_n', now() - interval '1 day'
       FROM generate_series(1, $1) AS i`,
      [ROWS],
    );
    // Executions over 60 days, a quarter of them past a 45-day retention.
    await db.query(
      `INSERT INTO executions (id, environment_id, tool_name, account_id, identifier, status, error_code,
         duration_ms, started_at, finished_at)
       SELECT 'exec_' || lpad(i::text, 9, '0'), '${env}', CASE WHEN i % 3 = 0 THEN 'notes_page_get' ELSE 'notes_user_list' END,
         'acct_' || lpad((i % $1 + 1)::text, 8, '0'), 'user-' || (i % 20000),
         CASE WHEN i % 10 = 0 THEN 'error' ELSE 'success' END,
         CASE WHEN i % 10 = 0 THEN 'upstream_timeout' END, i % 500,
         now() - (i * interval '60 days' / $1), now() - (i * interval '60 days' / $1)
       FROM generate_series(1, $1) AS i`,
      [ROWS],
    );
    await db.query(
      `INSERT INTO execution_rollups
       SELECT environment_id, date_trunc('hour', started_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', tool_name,
         status, coalesce(error_code, ''), floor(ln(duration_ms + 1) / ln(2) * 4)::integer, count(*)
       FROM executions GROUP BY 1, 2, 3, 4, 5, 6`,
    );
    await db.query(
      `INSERT INTO events (id, environment_id, type, subject, data, created_at)
       SELECT 'evt_' || lpad(i::text, 9, '0'), '${env}', 'tool.execution.failed', 'acct_' || i, '{}',
         now() - (i * interval '60 days' / $1)
       FROM generate_series(1, $1) AS i`,
      [ROWS],
    );
    await db.query(
      `INSERT INTO webhook_endpoints (id, environment_id, url, events, secret)
       VALUES ('whe_1', '${env}', 'https://example.com/hook', '{}', 'sealed')`,
    );
    // Nearly all delivered; 1 % still pending.
    await db.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, subject, status, next_attempt_at)
       SELECT 'whe_1', id, seq, subject, CASE WHEN seq % 100 = 0 THEN 'pending' ELSE 'delivered' END, created_at
       FROM events`,
    );
    await db.query(
      `INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, status_code, duration_ms)
       SELECT endpoint_id, event_id, 1, 200, 5 FROM webhook_deliveries`,
    );
    await db.query('ANALYZE');
  }, 300_000);

  afterAll(async () => {
    await db?.close();
  });

  const plans: Array<{ name: string; sql: string; seqScans: string[] }> = [];
  const explaining = (name: string): Queryable => ({
    async query<R>(sql: string, params?: unknown[]): Promise<R[]> {
      const rows = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON) ${sql}`,
        params,
      );
      plans.push({ name, sql, seqScans: seqScans(rows[0]!['QUERY PLAN'][0]!.Plan) });
      return [];
    },
  });

  it('plans no sequential scan of a large table for any list, lookup or background job', async () => {
    const q = explaining;
    const day = 86_400_000;
    await listAccounts(q('accounts: first page'), env, { limit: 51 });
    await listAccounts(q('accounts: next page'), env, { after: 'acct_00100000', limit: 51 });
    await listAccounts(q('accounts: by status'), env, { status: 'EXPIRED', limit: 51 });
    await listAccounts(q('accounts: by identifier'), env, { identifier: 'user-4242', limit: 51 });
    await listAccounts(q('accounts: by connection'), env, { connectionName: 'notion', limit: 51 });
    await findAccount(q('accounts: by id'), 'acct_00004242');
    await findAccountByIdentifier(q('accounts: by connection and identifier'), env, 'notion', 'user-4242');
    await recentlyExpiredAccounts(q('accounts: recently expired'), env, new Date(Date.now() - day), 20);
    await accountsWithIdleRefreshTokens(q('job: idle refresh'), [{ provider: 'notion', idleDays: 60 }], 100);
    await deleteAbandonedPendingAccounts(q('job: abandoned accounts'), 1000);
    await touchAccounts(q('job: last used'), new Map([['acct_00004242', new Date()]]));
    // Every overview page view and every /metrics scrape: never a count over the accounts.
    await countAccounts(q('dashboard: account counts'), env);
    await countAccounts(q('metrics: account gauge'));
    await foldAccountCounts(q('job: account count fold'), 5000);
    await listExecutions(q('executions: first page'), env, { limit: 51 });
    await listExecutions(q('executions: next page'), env, {
      before: { startedAt: new Date(Date.now() - 30 * day), id: 'exec_000100000' },
      limit: 51,
    });
    await listExecutions(q('executions: by identifier'), env, { identifier: 'user-42', limit: 51 });
    await listExecutions(q('executions: errors'), env, { status: 'error', limit: 51 });
    await listExecutions(q('executions: a day'), env, {
      since: new Date(Date.now() - 2 * day),
      until: new Date(Date.now() - day),
      limit: 51,
    });
    await findExecution(q('executions: by id'), 'exec_000004242');
    await pruneExecutions(q('job: execution retention'), new Date(Date.now() - 45 * day), 2000);
    await pruneExecutionRollups(q('job: rollup retention'), new Date(Date.now() - 45 * day), 2000);
    const tools = { names: ['notes_user_list'], providers: ['notion'] };
    const hourAgo = new Date(Date.now() - 3_600_000);
    await executionStatsRows(
      q('dashboard: statistics, ended hours'),
      env,
      new Date(Date.now() - 7 * day),
      hourAgo,
      tools,
    );
    await executionStatsRows(q('dashboard: statistics, this hour'), env, hourAgo, null, tools);
    await listEvents(q('events: oldest first'), env, { limit: 51 });
    await listEvents(q('events: newest first'), env, { newestFirst: true, limit: 51 });
    await listEvents(q('events: after'), env, { afterSeq: '100000', limit: 51 });
    await listEvents(q('events: by type'), env, { types: ['tool.execution.failed'], limit: 51 });
    await findEvent(q('events: by id'), 'evt_000004242');
    await pruneEvents(q('job: event retention'), 45, 5000);
    await claimDeliveries(q('job: webhook queue'), 'proc_test', 32, 30_000);
    await countPendingDeliveries(q('webhooks: pending count'));
    await listAttempts(q('webhooks: delivery log'), 'whe_1', { limit: 51 });
    await listAttempts(q('webhooks: delivery log, next page'), 'whe_1', { before: '100000', limit: 51 });
    await listAttempts(q('webhooks: delivery log of an event'), 'whe_1', {
      eventId: 'evt_000004242',
      limit: 51,
    });
    // Deleting one account or event cascades through foreign keys: those need indexes too.
    for (const [name, sql] of [
      ['cascade: account deleted', `DELETE FROM connected_accounts WHERE id = 'acct_00004242'`],
      ['cascade: event deleted', `DELETE FROM events WHERE id = 'evt_000004242'`],
    ] as const) {
      await db
        .transaction(async (tx) => {
          const rows = await tx.query<{
            'QUERY PLAN': Array<{ Triggers?: Array<{ 'Trigger Name': string }> }>;
          }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
          plans.push({ name, sql, seqScans: [] });
          expect(rows[0]!['QUERY PLAN'][0]).toBeDefined();
          // Roll back: the seeded rows stay for the other plans.
          throw Object.assign(new Error('rollback'), { rollback: true });
        })
        .catch((error: { rollback?: boolean }) => {
          if (!error.rollback) throw error;
        });
    }
    expect(plans.length).toBeGreaterThanOrEqual(30);
    const offenders = plans
      .filter((p) => p.seqScans.length)
      .map((p) => `${p.name}: Seq Scan on ${p.seqScans}`);
    expect(offenders).toEqual([]);
  }, 120_000);

  it('finds failed calls through their own index, however rare they are', async () => {
    // One error in 2,000 calls in an environment of its own: along the all-executions index a page
    // of 50 errors would read about 100,000 rows.
    await db.query(
      `INSERT INTO executions (id, environment_id, tool_name, identifier, status, error_code, duration_ms,
         started_at, finished_at)
       SELECT 'exec_rare' || lpad(i::text, 9, '0'), 'env_other', 'notes_user_list', 'user-' || (i % 500),
         CASE WHEN i % 2000 = 0 THEN 'error' ELSE 'success' END, NULL, 10,
         now() - (i * interval '30 days' / $1), now() - (i * interval '30 days' / $1)
       FROM generate_series(1, $1) AS i`,
      [ROWS],
    );
    await db.query('ANALYZE executions');
    let plan = '';
    await listExecutions(
      {
        async query<R>(sql: string, params?: unknown[]): Promise<R[]> {
          const rows = await db.query<Record<string, unknown>>(
            `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
            params,
          );
          plan = JSON.stringify(rows[0]!['QUERY PLAN']);
          return [];
        },
      },
      'env_other',
      { status: 'error', limit: 51 },
    );
    expect(plan).toContain('executions_environment_errors');
    // What the page cost: every row it read was an error (no filter discarded thousands).
    const removed = [...plan.matchAll(/"Rows Removed by Filter":(\d+)/g)].map((m) => Number(m[1]));
    expect(Math.max(0, ...removed)).toBeLessThan(100);
  }, 120_000);

  it('keeps foreign-key cascades off sequential scans (an account or event deletion at scale)', async () => {
    // pg_stat counters show whether the cascade from one deleted account read whole tables.
    const scans = async () =>
      Object.fromEntries(
        (
          await db.query<{ relname: string; seq_scan: string }>(
            `SELECT relname, seq_scan::text FROM pg_stat_user_tables WHERE schemaname = current_schema()`,
          )
        ).map((r) => [r.relname, Number(r.seq_scan)]),
      );
    await db.query('SELECT pg_stat_clear_snapshot()');
    const before = await scans();
    await db.query(`DELETE FROM connected_accounts WHERE id = 'acct_00000042'`);
    await db.query(`DELETE FROM events WHERE id = 'evt_000000042'`);
    // Statistics reach pg_stat_user_tables when the backend reports them; force it where possible.
    await db.query('SELECT pg_stat_force_next_flush()').catch(() => {});
    await db.query('SELECT pg_stat_clear_snapshot()');
    const after = await scans();
    const grew = [...LARGE].filter((table) => (after[table] ?? 0) > (before[table] ?? 0));
    expect(grew).toEqual([]);
  });

  // Last: its real count reads the whole table, which the cascade test above must not see.
  it('serves the account counts from the kept counts, exact after a bulk load', async () => {
    const counted = await db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM connected_accounts WHERE environment_id = $1 GROUP BY 1`,
      [env],
    );
    const kept: Record<string, number> = {};
    for (const c of await countAccounts(db, env)) kept[c.status] = (kept[c.status] ?? 0) + c.count;
    expect(kept).toEqual(Object.fromEntries(counted.map((r) => [r.status, Number(r.n)])));
  });
});
