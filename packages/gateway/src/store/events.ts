import type { Queryable } from './db.js';

export interface EventRow {
  seq: string;
  id: string;
  environment_id: string;
  type: string;
  subject: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * Inserts events and, in the same statement, one pending delivery per enabled endpoint of their
 * environment that subscribes to their type ("*" covers every type but the opt-in ones). Run in
 * the transaction of the state change: the event, its deliveries and the change commit together.
 * An event whose id is recorded already is left out with its deliveries: an id derived from what
 * it reports (a provider's change seen by a trigger) is recorded once, however often it is seen.
 */
export async function insertEvents(
  db: Queryable,
  events: Array<{ id: string; environmentId: string; type: string; subject: string | null; data: unknown }>,
  optIn: readonly string[],
): Promise<void> {
  if (!events.length) return;
  await db.query(
    `WITH inserted AS (
       INSERT INTO events (id, environment_id, type, subject, data)
       SELECT u.id, u.environment_id, u.type, u.subject, u.data::jsonb
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY
         AS u(id, environment_id, type, subject, data, n)
       ORDER BY u.n
       ON CONFLICT (id) DO NOTHING
       RETURNING seq, id, environment_id, type, subject
     )
     INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, subject, status)
     SELECT w.id, i.id, i.seq, i.subject, 'pending'
     FROM inserted i JOIN webhook_endpoints w ON w.environment_id = i.environment_id AND w.enabled
     WHERE i.type = ANY(w.events) OR ('*' = ANY(w.events) AND NOT (i.type = ANY($6::text[])))`,
    [
      events.map((e) => e.id),
      events.map((e) => e.environmentId),
      events.map((e) => e.type),
      events.map((e) => e.subject),
      events.map((e) => JSON.stringify(e.data)),
      optIn,
    ],
  );
}

// seq as text: a bigint does not fit a JS number in general, and the drivers differ in what they return.
const SELECT_EVENT =
  'SELECT seq::text AS seq, id, environment_id, type, subject, data, created_at FROM events';

export async function findEvent(db: Queryable, id: string): Promise<EventRow | undefined> {
  return (await db.query<EventRow>(`${SELECT_EVENT} WHERE id = $1`, [id]))[0];
}

/** Events of an environment in the order they were recorded, after the event `after` (its id). */
export async function listEvents(
  db: Queryable,
  environmentId: string,
  filter: { types?: string[]; afterSeq?: string; newestFirst?: boolean; limit: number },
): Promise<EventRow[]> {
  // "After" follows the listing's order: older events when it lists the newest first.
  const [compare, direction] = filter.newestFirst ? ['<', 'DESC'] : ['>', 'ASC'];
  return db.query<EventRow>(
    `${SELECT_EVENT}
     WHERE environment_id = $1
       AND ($2::text[] IS NULL OR type = ANY($2))
       AND ($3::bigint IS NULL OR seq ${compare} $3)
     ORDER BY events.seq ${direction} LIMIT $4`,
    [environmentId, filter.types ?? null, filter.afterSeq ?? null, filter.limit],
  );
}

/** Deletes events older than `days` (their deliveries and attempts go with them), in batches. */
export async function pruneEvents(db: Queryable, days: number, batch = 5000): Promise<number> {
  const rows = await db.query(
    // = ANY(ARRAY(...)): the batch's ids are looked up by primary key, never by a join the planner
    // might turn into a scan of the whole table.
    `DELETE FROM events WHERE id = ANY(ARRAY(
       SELECT id FROM events WHERE created_at < now() - make_interval(days => $1) LIMIT $2
     )) RETURNING id`,
    [days, batch],
  );
  return rows.length;
}
