import type { Queryable } from './db.js';

/** A webhook endpoint as stored; `secret` and `previous_secret` are sealed. */
export interface WebhookEndpointRow {
  id: string;
  environment_id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertEndpoint(
  db: Queryable,
  row: Pick<
    WebhookEndpointRow,
    'id' | 'environment_id' | 'url' | 'description' | 'events' | 'enabled' | 'secret'
  >,
): Promise<WebhookEndpointRow> {
  const rows = await db.query<WebhookEndpointRow>(
    `INSERT INTO webhook_endpoints (id, environment_id, url, description, events, enabled, secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [row.id, row.environment_id, row.url, row.description, row.events, row.enabled, row.secret],
  );
  return rows[0]!;
}

export async function findEndpoint(db: Queryable, id: string): Promise<WebhookEndpointRow | undefined> {
  return (await db.query<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id]))[0];
}

export async function listEndpoints(
  db: Queryable,
  environmentId: string,
  opts: { after?: string; limit: number },
): Promise<WebhookEndpointRow[]> {
  return db.query<WebhookEndpointRow>(
    `SELECT * FROM webhook_endpoints WHERE environment_id = $1 AND ($2::text IS NULL OR id > $2)
     ORDER BY id LIMIT $3`,
    [environmentId, opts.after ?? null, opts.limit],
  );
}

export async function updateEndpoint(
  db: Queryable,
  id: string,
  changes: {
    url?: string;
    description?: string | null;
    events?: string[];
    enabled?: boolean;
    secret?: string;
    previousSecret?: string;
    previousSecretExpiresAt?: Date;
  },
): Promise<WebhookEndpointRow | undefined> {
  const rows = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET
       url = COALESCE($2, url),
       description = CASE WHEN $3 THEN $4 ELSE description END,
       events = COALESCE($5, events),
       enabled = COALESCE($6, enabled),
       disabled_reason = CASE WHEN $6 THEN NULL ELSE disabled_reason END,
       secret = COALESCE($7, secret),
       previous_secret = COALESCE($8, previous_secret),
       previous_secret_expires_at = COALESCE($9, previous_secret_expires_at),
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [
      id,
      changes.url ?? null,
      changes.description !== undefined,
      changes.description ?? null,
      changes.events ?? null,
      changes.enabled ?? null,
      changes.secret ?? null,
      changes.previousSecret ?? null,
      changes.previousSecretExpiresAt ?? null,
    ],
  );
  return rows[0];
}

export async function deleteEndpoint(db: Queryable, id: string): Promise<boolean> {
  return (await db.query('DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id', [id])).length > 0;
}

/** Disables an endpoint that is still enabled; false when it was not (another worker got there). */
export async function disableEndpoint(
  db: Queryable,
  id: string,
  reason: string,
): Promise<WebhookEndpointRow | undefined> {
  const rows = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = now()
     WHERE id = $1 AND enabled RETURNING *`,
    [id, reason],
  );
  return rows[0];
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  endpoint_id: string;
  event_id: string;
  attempts: number;
  environment_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  type: string;
  data: Record<string, unknown>;
  event_created_at: Date;
}

/**
 * Claims up to `limit` due deliveries for `owner`: each is the oldest pending one of its subject
 * at its endpoint (so a subject's events go out in order), of an enabled endpoint. Rows another
 * replica is claiming are skipped (FOR UPDATE SKIP LOCKED; PGlite has one connection, so claims
 * there are serial anyway). A claim pushes next_attempt_at past the attempt's end: a claimant that
 * dies leaves the delivery to come due again when that lease runs out.
 */
export async function claimDeliveries(
  db: Queryable,
  owner: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  return db.query<ClaimedDelivery>(
    `WITH due AS (
       SELECT d.endpoint_id, d.event_id FROM webhook_deliveries d
       JOIN webhook_endpoints w ON w.id = d.endpoint_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND w.enabled
         AND NOT EXISTS (
           SELECT 1 FROM webhook_deliveries p
           WHERE p.endpoint_id = d.endpoint_id AND p.subject = d.subject AND p.status = 'pending'
             AND p.event_seq < d.event_seq)
       ORDER BY d.next_attempt_at, d.event_seq
       LIMIT $2
       FOR UPDATE OF d SKIP LOCKED
     ), claimed AS (
       UPDATE webhook_deliveries d
       SET attempts = d.attempts + 1, claimed_by = $1,
           next_attempt_at = now() + make_interval(secs => $3::double precision / 1000)
       FROM due WHERE d.endpoint_id = due.endpoint_id AND d.event_id = due.event_id
       RETURNING d.endpoint_id, d.event_id, d.attempts, d.event_seq
     )
     SELECT c.endpoint_id, c.event_id, c.attempts, w.environment_id, w.url, w.secret, w.previous_secret,
       w.previous_secret_expires_at, e.type, e.data, e.created_at AS event_created_at
     FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id
     ORDER BY c.event_seq`,
    [owner, limit, leaseMs],
  );
}

export interface AttemptRecord {
  endpointId: string;
  eventId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

/**
 * Writes attempts to the log, in one statement. An attempt whose delivery has gone meanwhile (its
 * endpoint deleted) is dropped rather than failing the batch it came with.
 */
export async function insertAttempts(db: Queryable, rows: AttemptRecord[]): Promise<void> {
  if (!rows.length) return;
  await db.query(
    `INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, status_code, duration_ms, error, response_body)
     SELECT u.endpoint_id, u.event_id, u.attempt, u.status_code, u.duration_ms, u.error, u.response_body
     FROM unnest($1::text[], $2::text[], $3::integer[], $4::integer[], $5::integer[], $6::text[], $7::text[])
       AS u(endpoint_id, event_id, attempt, status_code, duration_ms, error, response_body)
     JOIN webhook_deliveries d ON d.endpoint_id = u.endpoint_id AND d.event_id = u.event_id`,
    [
      rows.map((r) => r.endpointId),
      rows.map((r) => r.eventId),
      rows.map((r) => r.attempt),
      rows.map((r) => r.statusCode),
      rows.map((r) => r.durationMs),
      rows.map((r) => r.error),
      rows.map((r) => r.responseBody),
    ],
  );
}

/** Marks deliveries delivered (whoever claimed them last: a 2xx is a 2xx); claimed_by keeps who sent it. */
export async function markDelivered(
  db: Queryable,
  deliveries: Array<{ endpointId: string; eventId: string }>,
): Promise<void> {
  if (!deliveries.length) return;
  await db.query(
    `UPDATE webhook_deliveries d SET status = 'delivered', delivered_at = now()
     FROM unnest($1::text[], $2::text[]) AS u(endpoint_id, event_id)
     WHERE d.endpoint_id = u.endpoint_id AND d.event_id = u.event_id AND d.status = 'pending'`,
    [deliveries.map((d) => d.endpointId), deliveries.map((d) => d.eventId)],
  );
}

/**
 * After a failed attempt: schedules the next one in `delayMs`, or (delayMs null) gives the delivery
 * up. Only while the attempt is still the latest claim (a lease that ran out may have been taken
 * over); true when applied.
 */
export async function markFailed(
  db: Queryable,
  endpointId: string,
  eventId: string,
  attempt: number,
  delayMs: number | null,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_deliveries SET
       status = CASE WHEN $4::double precision IS NULL THEN 'failed' ELSE 'pending' END,
       next_attempt_at = now() + make_interval(secs => COALESCE($4::double precision, 0) / 1000),
       claimed_by = NULL
     WHERE endpoint_id = $1 AND event_id = $2 AND attempts = $3 AND status = 'pending' RETURNING event_id`,
    [endpointId, eventId, attempt, delayMs],
  );
  return rows.length > 0;
}

/** Queues an event for an endpoint again (a new delivery, or an old one reset); false when no such event. */
export async function requeueDelivery(db: Queryable, endpointId: string, eventId: string): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, subject, status)
     SELECT $1, e.id, e.seq, e.subject, 'pending' FROM events e WHERE e.id = $2
     ON CONFLICT (endpoint_id, event_id) DO UPDATE SET
       status = 'pending', attempts = 0, next_attempt_at = now(), claimed_by = NULL, delivered_at = NULL
     RETURNING event_id`,
    [endpointId, eventId],
  );
  return rows.length > 0;
}

export interface AttemptRow {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  created_at: Date;
  delivery_status: string;
}

/** The delivery log of an endpoint, newest first. */
export async function listAttempts(
  db: Queryable,
  endpointId: string,
  filter: { eventId?: string; before?: string; limit: number },
): Promise<AttemptRow[]> {
  return db.query<AttemptRow>(
    `SELECT a.id::text AS id, a.event_id, e.type AS event_type, a.attempt, a.status_code, a.duration_ms, a.error,
       a.response_body, a.created_at, d.status AS delivery_status
     FROM webhook_attempts a
     JOIN events e ON e.id = a.event_id
     JOIN webhook_deliveries d ON d.endpoint_id = a.endpoint_id AND d.event_id = a.event_id
     WHERE a.endpoint_id = $1 AND ($2::text IS NULL OR a.event_id = $2) AND ($3::bigint IS NULL OR a.id < $3)
     ORDER BY a.id DESC LIMIT $4`,
    [endpointId, filter.eventId ?? null, filter.before ?? null, filter.limit],
  );
}

/** Pending deliveries, for callers that wait for the queue to drain (tests, benchmarks, shutdown). */
export async function countPendingDeliveries(db: Queryable): Promise<number> {
  const rows = await db.query<{ n: number }>(
    "SELECT count(*)::integer AS n FROM webhook_deliveries WHERE status = 'pending'",
  );
  return rows[0]?.n ?? 0;
}
