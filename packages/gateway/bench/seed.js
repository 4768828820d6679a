// Seeds a benchmark schema with connected accounts, executions and events at scale, the way a
// long-running deployment would hold them: accounts of one connection in every status, executions
// over the last 29 days (inside the default retention) counted into the statistics rollup too,
// failure events. Each statement is its own transaction of at most CHUNK rows.
//
// At 10^7 executions and more, the executions table's secondary indexes are dropped for the load
// and built again after it (sorted builds, in parallel workers): maintaining them row by row is
// what makes a 10^8 load take hours. The primary key and partial indexes stay, so the gateway keeps
// working meanwhile.

/** Rows per seeding statement. */
const CHUNK = 250_000;
const REBUILD_FROM = 10_000_000;

/**
 * @param {import('pg').Client} db a client whose search_path is the schema
 * @param {{ environmentId: string, connectionId: string, accounts: number, executions: number,
 *   events: number, log?: (line: string) => void }} plan
 */
export async function seed(db, plan) {
  const log = plan.log ?? ((line) => console.log(line));
  const { environmentId: env, connectionId: conn } = plan;
  const chunks = async (what, total, sql) => {
    const began = Date.now();
    let step = Math.max(CHUNK, Math.ceil(total / 20 / CHUNK) * CHUNK);
    for (let from = 1; from <= total; from += CHUNK) {
      await db.query(sql, [from, Math.min(total, from + CHUNK - 1), total]);
      const done = Math.min(total, from + CHUNK - 1);
      if (done >= step || done === total) {
        const s = (Date.now() - began) / 1000;
        log(
          `  ${what}: ${done.toLocaleString('en')} of ${total.toLocaleString('en')} (${s.toFixed(0)} s, ${(done / s).toFixed(0)}/s)`,
        );
        step += Math.max(CHUNK, Math.ceil(total / 20 / CHUNK) * CHUNK);
      }
    }
  };

  await chunks(
    'accounts',
    plan.accounts,
    `INSERT INTO connected_accounts (id, environment_id, connection_id, identifier, status, access_token,
       refresh_token, last_refreshed_at, updated_at)
     SELECT 'acct_seed' || lpad(i::text, 10, '0'), '${env}', '${conn}', 'seed-user-' || i,
       CASE WHEN i % 20 = 0 THEN 'PENDING_AUTH' WHEN i % 33 = 0 THEN 'EXPIRED' ELSE 'ACTIVE' END,
       'sealed', 'sealed', now() - (i % 90) * interval '1 day', now() - (i % 90) * interval '1 day'
     FROM generate_series($1::int, $2::int) AS i WHERE $3::int > 0`,
  );

  const rebuild = plan.executions >= REBUILD_FROM ? await dropSecondaryIndexes(db, 'executions') : [];
  // Lean rows: seeded calls carry no input, output summary or timings (see the row sizes printed).
  await chunks(
    'executions',
    plan.executions,
    `WITH ins AS (
       INSERT INTO executions (id, environment_id, tool_name, identifier, status, error_code, duration_ms,
         started_at, finished_at)
       SELECT 'exec_seed' || lpad(i::text, 12, '0'), '${env}',
         CASE WHEN i % 3 = 0 THEN 'notes_page_get' ELSE 'notes_user_list' END, 'seed-user-' || (i % 100000),
         CASE WHEN i % 10 = 0 THEN 'error' ELSE 'success' END, CASE WHEN i % 10 = 0 THEN 'upstream_timeout' END,
         i % 700, now() - interval '1 hour' - interval '29 days' * (i::float8 / $3::int),
         now() - interval '1 hour' - interval '29 days' * (i::float8 / $3::int)
       FROM generate_series($1::int, $2::int) AS i
       RETURNING environment_id, started_at, tool_name, status, error_code, duration_ms)
     INSERT INTO execution_rollups AS r
     SELECT environment_id, date_trunc('hour', started_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', tool_name, status,
       coalesce(error_code, ''), floor(ln(greatest(duration_ms, 0) + 1) / ln(2) * 4)::integer, count(*)
     FROM ins GROUP BY 1, 2, 3, 4, 5, 6
     ON CONFLICT (environment_id, hour, tool_name, status, error_code, duration_bucket)
       DO UPDATE SET count = r.count + excluded.count`,
  );
  if (rebuild.length) {
    const began = Date.now();
    await db.query("SET maintenance_work_mem = '1GB'");
    await db.query('SET max_parallel_maintenance_workers = 2');
    for (const { name, definition } of rebuild) {
      await db.query(definition);
      log(`  index ${name} built (${((Date.now() - began) / 1000).toFixed(0)} s)`);
    }
    await db.query('RESET maintenance_work_mem');
    await db.query('RESET max_parallel_maintenance_workers');
  }

  await chunks(
    'events',
    plan.events,
    `INSERT INTO events (id, environment_id, type, subject, data, created_at)
     SELECT 'evt_seed' || lpad(i::text, 12, '0'), '${env}', 'tool.execution.failed', 'acct_seed' || i, '{}',
       now() - interval '1 hour' - interval '29 days' * (i::float8 / $3::int)
     FROM generate_series($1::int, $2::int) AS i`,
  );
  await db.query('ANALYZE');
}

/**
 * Drops a table's indexes other than its primary key, unique and partial ones (partial ones such as
 * executions' account index, which deleting an account needs, cost seeded rows nothing); returns how
 * to rebuild them.
 */
async function dropSecondaryIndexes(db, table) {
  const { rows } = await db.query(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = $1::regclass AND NOT i.indisprimary AND NOT i.indisunique AND i.indpred IS NULL`,
    [table],
  );
  for (const { name } of rows) await db.query(`DROP INDEX ${name}`);
  return rows;
}
