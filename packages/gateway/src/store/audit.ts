import type { Queryable } from './db.js';

export type AuditActorType = 'client' | 'admin' | 'cli' | 'link' | 'system';

export interface AuditRow {
  id: string;
  environment_id: string;
  at: Date;
  actor_type: AuditActorType;
  /** A gateway client's id, an admin's username, the operating-system user of a CLI command. */
  actor_id: string;
  /** What authenticated the actor (a client id, "session", a token id); never a secret. */
  credential: string | null;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  status_code: number | null;
  details: Record<string, unknown>;
}

/** Many entries in one statement (the recorder writes in batches); a retried batch adds nothing twice. */
export async function insertAuditEntries(db: Queryable, rows: AuditRow[]): Promise<void> {
  if (!rows.length) return;
  const column = <K extends keyof AuditRow>(key: K) => rows.map((row) => row[key]);
  await db.query(
    `INSERT INTO audit_log (id, environment_id, at, actor_type, actor_id, credential, action, resource_type,
       resource_id, ip, user_agent, request_id, status_code, details)
     SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[],
       $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::integer[], $14::jsonb[])
     ON CONFLICT (id) DO NOTHING`,
    [
      column('id'),
      column('environment_id'),
      column('at'),
      column('actor_type'),
      column('actor_id'),
      column('credential'),
      column('action'),
      column('resource_type'),
      column('resource_id'),
      column('ip'),
      column('user_agent'),
      column('request_id'),
      column('status_code'),
      rows.map((row) => JSON.stringify(row.details)),
    ],
  );
}

/**
 * Deletes up to `batch` failed dashboard sign-ins recorded before `before` (the only entries the
 * log lets go: anyone can cause them); how many.
 */
export async function pruneFailedSignIns(db: Queryable, before: Date, batch: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM audit_log WHERE id IN (
       SELECT id FROM audit_log WHERE action = 'admin.sign_in_failed' AND at < $1 ORDER BY at LIMIT $2
     ) RETURNING id`,
    [before, batch],
  );
  return rows.length;
}

export interface AuditFilter {
  actorId?: string;
  actorType?: AuditActorType;
  /** An exact action, or a prefix ending with "." (`connection.`). */
  action?: string;
  resourceType?: string;
  resourceId?: string;
  since?: Date;
  until?: Date;
  /** Keyset pagination, newest first: entries strictly before this (at, id). */
  before?: { at: Date; id: string };
  limit: number;
}

/** Newest first, on the (environment_id, at, id) index or the filter's own. */
export async function listAuditEntries(
  db: Queryable,
  environmentId: string,
  filter: AuditFilter,
): Promise<AuditRow[]> {
  const prefix = filter.action?.endsWith('.') ? filter.action : undefined;
  const exact = prefix === undefined ? filter.action : undefined;
  return db.query<AuditRow>(
    `SELECT * FROM audit_log
     WHERE environment_id = $1
       AND ($2::text IS NULL OR actor_id = $2)
       AND ($3::text IS NULL OR actor_type = $3)
       AND ($4::text IS NULL OR action = $4)
       AND ($5::text IS NULL OR action LIKE $5 || '%')
       AND ($6::text IS NULL OR resource_type = $6)
       AND ($7::text IS NULL OR resource_id = $7)
       AND ($8::timestamptz IS NULL OR at >= $8)
       AND ($9::timestamptz IS NULL OR at < $9)
       AND ($10::timestamptz IS NULL OR (at, id) < ($10, $11::text))
     ORDER BY at DESC, id DESC
     LIMIT $12`,
    [
      environmentId,
      filter.actorId ?? null,
      filter.actorType ?? null,
      exact ?? null,
      // Actions are letters, digits, "_" and "."; a LIKE wildcard cannot come in through the filter.
      prefix?.replace(/[%_\\]/g, (c) => `\\${c}`) ?? null,
      filter.resourceType ?? null,
      filter.resourceId ?? null,
      filter.since ?? null,
      filter.until ?? null,
      filter.before?.at ?? null,
      filter.before?.id ?? null,
      filter.limit,
    ],
  );
}
