import type { Queryable } from './db.js';

export type TriggerState = 'active' | 'degraded' | 'failing' | 'paused';
export type PauseReason = 'requested' | 'account_not_active';

/** A trigger subscription as stored, with its connection's name and provider. */
export interface TriggerRow {
  id: string;
  environment_id: string;
  connection_id: string;
  account_id: string;
  identifier: string;
  trigger_type: string;
  config: Record<string, unknown>;
  config_key: string;
  interval_seconds: number;
  cursor: Record<string, unknown> | null;
  state: TriggerState;
  pause_reason: PauseReason | null;
  consecutive_failures: number;
  last_success_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  last_event_at: Date | null;
  next_poll_at: Date;
  lease_owner: string | null;
  lease_until: Date | null;
  /** Push: working, lapsed (polling only) or NULL (the type has none, or not tried yet). */
  channel_state: 'active' | 'lapsed' | null;
  channel_error: string | null;
  /** When the push channel next needs opening or renewing. */
  channel_due_at: Date | null;
  /** A provider's notification came since the last claim: poll again right after this poll. */
  woken_at: Date | null;
  created_at: Date;
  updated_at: Date;
  connection_name: string;
  provider: string;
}

const SELECT_TRIGGER = `
  SELECT s.*, c.name AS connection_name, c.provider
  FROM trigger_subscriptions s JOIN connections c ON c.id = s.connection_id`;

export async function insertTrigger(
  db: Queryable,
  row: Pick<
    TriggerRow,
    | 'id'
    | 'environment_id'
    | 'connection_id'
    | 'account_id'
    | 'identifier'
    | 'trigger_type'
    | 'config'
    | 'config_key'
    | 'interval_seconds'
    | 'cursor'
  >,
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO trigger_subscriptions (id, environment_id, connection_id, account_id, identifier,
       trigger_type, config, config_key, interval_seconds, cursor, state, last_success_at, next_poll_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::integer, $10::jsonb, 'active', now(),
       now() + make_interval(secs => $9::integer))
     ON CONFLICT (account_id, trigger_type, config_key) DO NOTHING RETURNING id`,
    [
      row.id,
      row.environment_id,
      row.connection_id,
      row.account_id,
      row.identifier,
      row.trigger_type,
      JSON.stringify(row.config),
      row.config_key,
      row.interval_seconds,
      JSON.stringify(row.cursor),
    ],
  );
  return rows.length > 0;
}

export async function findTrigger(db: Queryable, id: string): Promise<TriggerRow | undefined> {
  return (await db.query<TriggerRow>(`${SELECT_TRIGGER} WHERE s.id = $1`, [id]))[0];
}

export async function findTriggerByKey(
  db: Queryable,
  accountId: string,
  triggerType: string,
  configKey: string,
): Promise<TriggerRow | undefined> {
  return (
    await db.query<TriggerRow>(
      `${SELECT_TRIGGER} WHERE s.account_id = $1 AND s.trigger_type = $2 AND s.config_key = $3`,
      [accountId, triggerType, configKey],
    )
  )[0];
}

export interface TriggerFilter {
  connectionNames?: readonly string[] | null;
  identifier?: string;
  triggerType?: string;
  state?: TriggerState;
  after?: string;
  limit: number;
}

export async function listTriggers(
  db: Queryable,
  environmentId: string,
  filter: TriggerFilter,
): Promise<TriggerRow[]> {
  return db.query<TriggerRow>(
    `${SELECT_TRIGGER}
     WHERE s.environment_id = $1
       AND ($2::text[] IS NULL OR c.name = ANY($2))
       AND ($3::text IS NULL OR s.identifier = $3)
       AND ($4::text IS NULL OR s.trigger_type = $4)
       AND ($5::text IS NULL OR s.state = $5)
       AND ($6::text IS NULL OR s.id > $6)
     ORDER BY s.id LIMIT $7`,
    [
      environmentId,
      filter.connectionNames ?? null,
      filter.identifier ?? null,
      filter.triggerType ?? null,
      filter.state ?? null,
      filter.after ?? null,
      filter.limit,
    ],
  );
}

/** Locks the row until the transaction ends (the poller's commit, a pause or a resume). */
export async function lockTrigger(tx: Queryable, id: string): Promise<TriggerRow | undefined> {
  return (await tx.query<TriggerRow>(`${SELECT_TRIGGER} WHERE s.id = $1 FOR UPDATE OF s`, [id]))[0];
}

export async function deleteTrigger(db: Queryable, id: string): Promise<boolean> {
  return (await db.query('DELETE FROM trigger_subscriptions WHERE id = $1 RETURNING id', [id])).length > 0;
}

/** What a poll, a pause or a failure sets; fields left out keep their value. */
export interface TriggerChanges {
  cursor?: Record<string, unknown> | null;
  state?: TriggerState;
  pauseReason?: PauseReason | null;
  consecutiveFailures?: number;
  lastSuccess?: boolean;
  lastError?: string | null;
  lastEvent?: boolean;
  intervalSeconds?: number;
  /** Seconds from now; null: never (paused). */
  nextPollInSeconds?: number | null;
  /** Ends this owner's lease (the poller's commit). */
  releaseLease?: boolean;
}

export async function updateTrigger(
  tx: Queryable,
  id: string,
  changes: TriggerChanges,
): Promise<TriggerRow | undefined> {
  const next =
    changes.nextPollInSeconds === undefined ? 'keep' : changes.nextPollInSeconds === null ? 'never' : 'in';
  const rows = await tx.query<{ id: string }>(
    `UPDATE trigger_subscriptions SET
       cursor = CASE WHEN $2 THEN $3::jsonb ELSE cursor END,
       state = COALESCE($4, state),
       pause_reason = CASE WHEN $5 THEN $6 ELSE pause_reason END,
       consecutive_failures = COALESCE($7, consecutive_failures),
       last_success_at = CASE WHEN $8 THEN now() ELSE last_success_at END,
       last_error = CASE WHEN $9::text IS NOT NULL THEN $9 ELSE last_error END,
       last_error_at = CASE WHEN $9::text IS NOT NULL THEN now() ELSE last_error_at END,
       next_poll_at = CASE $14::text WHEN 'keep' THEN next_poll_at WHEN 'never' THEN 'infinity'::timestamptz
         WHEN 'in' THEN CASE WHEN woken_at IS NOT NULL THEN now()
           ELSE now() + make_interval(secs => $10::double precision) END END,
       last_event_at = CASE WHEN $11 THEN now() ELSE last_event_at END,
       interval_seconds = COALESCE($12, interval_seconds),
       lease_owner = CASE WHEN $13 THEN NULL ELSE lease_owner END,
       lease_until = CASE WHEN $13 THEN NULL ELSE lease_until END,
       updated_at = now()
     WHERE id = $1 RETURNING id`,
    [
      id,
      changes.cursor !== undefined,
      changes.cursor === undefined ? null : JSON.stringify(changes.cursor),
      changes.state ?? null,
      changes.pauseReason !== undefined,
      changes.pauseReason ?? null,
      changes.consecutiveFailures ?? null,
      changes.lastSuccess === true,
      changes.lastError ?? null,
      changes.nextPollInSeconds ?? 0,
      changes.lastEvent === true,
      changes.intervalSeconds ?? null,
      changes.releaseLease === true,
      next,
    ],
  );
  return rows[0] ? findTrigger(tx, id) : undefined;
}

/** What one claim took, and when the next subscription not taken comes due. */
export interface Claim {
  rows: TriggerRow[];
  /** Milliseconds until the earliest subscription left unclaimed is due; null: none is. */
  nextDueInMs: number | null;
}

/**
 * Claims up to `limit` due subscriptions for `owner`: each is held until the lease runs out
 * (next_poll_at moves there too), so another replica takes it over only then. Rows another replica
 * is claiming at the same moment are skipped (FOR UPDATE SKIP LOCKED; the embedded store has one
 * connection, so its claims are serial anyway). The same statement reads when the next row not
 * claimed comes due (the index on next_poll_at), so the poller can sleep until then.
 */
export async function claimDueTriggers(
  db: Queryable,
  owner: string,
  limit: number,
  leaseMs: number,
): Promise<Claim> {
  const rows = await db.query<TriggerRow & { next_due_in_ms: number | null }>(
    `WITH due AS (
       SELECT id FROM trigger_subscriptions
       WHERE next_poll_at <= now() AND (lease_until IS NULL OR lease_until <= now())
       ORDER BY next_poll_at
       LIMIT $2
       FOR UPDATE SKIP LOCKED
     ), claimed AS (
       UPDATE trigger_subscriptions s
       SET lease_owner = $1,
           lease_until = now() + make_interval(secs => $3::double precision / 1000),
           next_poll_at = now() + make_interval(secs => $3::double precision / 1000),
           woken_at = NULL
       FROM due WHERE s.id = due.id
       RETURNING s.*
     ), next AS (
       -- Read before the claim's own update: the rows it claims were due, so they are not counted.
       SELECT (extract(epoch FROM min(next_poll_at) - now()) * 1000)::double precision AS next_due_in_ms
       FROM trigger_subscriptions WHERE next_poll_at > now() AND next_poll_at < 'infinity'
     )
     SELECT n.next_due_in_ms, t.*
     FROM next n LEFT JOIN (
       SELECT s.*, c.name AS connection_name, c.provider
       FROM claimed s JOIN connections c ON c.id = s.connection_id
     ) t ON true`,
    [owner, limit, leaseMs],
  );
  const nextDueInMs = rows[0]?.next_due_in_ms ?? null;
  const claimed: TriggerRow[] = [];
  for (const { next_due_in_ms: _, ...row } of rows) if (row.id !== null) claimed.push(row as TriggerRow);
  return { rows: claimed, nextDueInMs: nextDueInMs === null ? null : Number(nextDueInMs) };
}

/**
 * Quiet polls (nothing changed, an active subscription stays active) recorded together in one
 * statement: each row's new cursor, its next poll, the end of its lease. A row whose lease another
 * owner holds now is left alone (that owner polls it from the cursor it read).
 */
export async function recordQuietPolls(
  db: Queryable,
  owner: string,
  /** nextPollInSeconds: from this write (the interval less the time the poll waited for it). */
  polls: Array<{ id: string; cursor: Record<string, unknown>; nextPollInSeconds: number }>,
): Promise<Array<{ id: string; due: boolean }>> {
  if (!polls.length) return [];
  const rows = await db.query<{ id: string; due: boolean }>(
    `UPDATE trigger_subscriptions s SET
       cursor = u.cursor::jsonb,
       last_success_at = now(),
       -- Paused meanwhile: it stays paused.
       next_poll_at = CASE WHEN s.state = 'paused' THEN s.next_poll_at
         WHEN s.woken_at IS NOT NULL THEN now()
         ELSE now() + make_interval(secs => u.next_in_seconds) END,
       lease_owner = NULL, lease_until = NULL, updated_at = now()
     FROM unnest($2::text[], $3::text[], $4::double precision[]) AS u(id, cursor, next_in_seconds)
     WHERE s.id = u.id AND s.lease_owner = $1
     RETURNING s.id, s.next_poll_at <= now() AS due`,
    [
      owner,
      polls.map((p) => p.id),
      polls.map((p) => JSON.stringify(p.cursor)),
      polls.map((p) => p.nextPollInSeconds),
    ],
  );
  return rows;
}

/** Ends this owner's leases without other changes (shutting down: another replica polls them now). */
export async function releaseTriggerLeases(db: Queryable, owner: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.query(
    `UPDATE trigger_subscriptions SET lease_owner = NULL, lease_until = NULL, next_poll_at = now()
     WHERE id = ANY($2) AND lease_owner = $1`,
    [owner, ids],
  );
}

/** The versions a subscription has seen of these items (all of its items when `ids` is null). */
export async function knownItems(
  db: Queryable,
  subscriptionId: string,
  ids: string[] | null,
): Promise<Map<string, string>> {
  const rows = await db.query<{ item_id: string; version: string }>(
    `SELECT item_id, version FROM trigger_items
     WHERE subscription_id = $1 AND ($2::text[] IS NULL OR item_id = ANY($2))`,
    [subscriptionId, ids],
  );
  return new Map(rows.map((r) => [r.item_id, r.version]));
}

export async function saveItems(
  db: Queryable,
  subscriptionId: string,
  items: Array<{ id: string; version: string }>,
): Promise<void> {
  if (!items.length) return;
  await db.query(
    `INSERT INTO trigger_items (subscription_id, item_id, version)
     SELECT $1, u.item_id, u.version FROM unnest($2::text[], $3::text[]) AS u(item_id, version)
     ON CONFLICT (subscription_id, item_id) DO UPDATE SET version = EXCLUDED.version`,
    [subscriptionId, items.map((i) => i.id), items.map((i) => i.version)],
  );
}

export async function forgetItems(db: Queryable, subscriptionId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.query('DELETE FROM trigger_items WHERE subscription_id = $1 AND item_id = ANY($2)', [
    subscriptionId,
    ids,
  ]);
}

/** How many subscriptions each state holds (the dashboard's health summary, /metrics). */
export async function countTriggersByState(
  db: Queryable,
  environmentId: string,
  connectionNames: readonly string[] | null,
): Promise<Array<{ state: TriggerState; count: number }>> {
  const rows = await db.query<{ state: TriggerState; count: string }>(
    `SELECT s.state, count(*)::text AS count FROM trigger_subscriptions s
     JOIN connections c ON c.id = s.connection_id
     WHERE s.environment_id = $1 AND ($2::text[] IS NULL OR c.name = ANY($2))
     GROUP BY s.state`,
    [environmentId, connectionNames],
  );
  return rows.map((r) => ({ state: r.state, count: Number(r.count) }));
}
