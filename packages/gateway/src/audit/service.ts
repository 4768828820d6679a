import { userInfo } from 'node:os';
import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import {
  type AuditActorType,
  type AuditFilter,
  type AuditRow,
  insertAuditEntries,
  listAuditEntries,
  pruneFailedSignIns,
} from '../store/audit.js';
import type { Queryable } from '../store/db.js';
import { newId } from '../store/ids.js';
import { WriteBehind } from '../store/write-behind.js';

/** Longest user agent kept. */
const USER_AGENT_MAX = 256;
/** Entries per statement when exporting. */
const EXPORT_BATCH = 500;
/** Failed sign-ins deleted per statement, and statements per pruning run. */
const PRUNE_BATCH = 5000;
const PRUNE_MAX_BATCHES = 20;
const DAY_MS = 86_400_000;

export const ACTOR_TYPES: readonly AuditActorType[] = ['client', 'admin', 'cli', 'link', 'system'];

/** One action as recorded; `details` holds small, non-secret facts (names, roles, scopes). */
export interface AuditEntry {
  /** Defaults to the gateway's environment (a failed sign-in names no account, hence none). */
  environmentId?: string;
  actorType: AuditActorType;
  actorId: string;
  credential?: string | null;
  action: string;
  resourceType?: string | null;
  resourceId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
  statusCode?: number | null;
  details?: Record<string, unknown>;
  /** Defaults to now. */
  at?: Date;
}

export interface AuditQuery {
  actor_id?: string;
  actor_type?: AuditActorType;
  action?: string;
  resource_type?: string;
  resource_id?: string;
  since?: string;
  until?: string;
  page_size?: number;
  page_token?: string;
}

export interface AuditView {
  id: string;
  at: string;
  actor_type: AuditActorType;
  actor_id: string;
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

export function auditRow(entry: AuditEntry & { environmentId: string }): AuditRow {
  return {
    id: newId('aud'),
    environment_id: entry.environmentId,
    at: entry.at ?? new Date(),
    actor_type: entry.actorType,
    actor_id: entry.actorId,
    credential: entry.credential ?? null,
    action: entry.action,
    resource_type: entry.resourceType ?? null,
    resource_id: entry.resourceId ?? null,
    ip: entry.ip ?? null,
    user_agent: entry.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
    request_id: entry.requestId ?? null,
    status_code: entry.statusCode ?? null,
    details: entry.details ?? {},
  };
}

/** Who runs a CLI command that touches the store: the operating-system user (what there is to know). */
export function cliActor(): Pick<AuditEntry, 'actorType' | 'actorId' | 'credential'> {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the entry still says it came from the CLI.
  }
  return { actorType: 'cli', actorId: user, credential: 'shell' };
}

/**
 * Writes one entry at once, for commands that touch the store without a running gateway (the CLI):
 * there is no batch to join and the process ends right after.
 */
export async function recordAuditNow(
  db: Queryable,
  entry: AuditEntry & { environmentId: string },
): Promise<void> {
  await insertAuditEntries(db, [auditRow(entry)]);
}

/**
 * The audit log: every operator and application action, append-only (the database refuses UPDATE
 * and DELETE on it). Recording is off the response path: entries wait in memory and are written in
 * one statement every 200 ms; reads flush first, and a graceful stop flushes.
 */
export class AuditService {
  /** Written behind the request, as execution records are. */
  private readonly entries: WriteBehind<AuditRow>;

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    private readonly defaultEnvironmentId: string,
    /** Days failed sign-ins are kept (PORTICO_FAILED_SIGN_IN_RETENTION_DAYS); the rest is kept for good. */
    private readonly failedSignInRetentionDays = 30,
  ) {
    this.entries = new WriteBehind({
      logger,
      what: 'audit entries',
      write: (batch) => insertAuditEntries(this.db, batch),
    });
  }

  record(entry: AuditEntry): void {
    this.entries.push(
      auditRow({ ...entry, environmentId: entry.environmentId ?? this.defaultEnvironmentId }),
    );
  }

  /**
   * Deletes failed sign-ins past their retention: anyone may cause them, so without it the log
   * would grow as fast as someone cares to fail. Safe on every replica; how many.
   */
  async pruneFailedSignIns(): Promise<number> {
    await this.flush();
    const before = new Date(Date.now() - this.failedSignInRetentionDays * DAY_MS);
    let total = 0;
    for (let i = 0; i < PRUNE_MAX_BATCHES; i++) {
      const removed = await pruneFailedSignIns(this.db, before, PRUNE_BATCH);
      total += removed;
      if (removed < PRUNE_BATCH) break;
    }
    if (total)
      this.logger.info(
        { entries: total, days: this.failedSignInRetentionDays },
        'old failed sign-ins removed',
      );
    return total;
  }

  /** Writes every waiting entry (reads do it first). */
  flush(): Promise<void> {
    return this.entries.flush();
  }

  close(): Promise<void> {
    return this.entries.close();
  }

  async list(
    environmentId: string,
    query: AuditQuery,
  ): Promise<{ data: AuditView[]; next_page_token: string | null }> {
    await this.flush();
    const limit = query.page_size ?? 50;
    const rows = await listAuditEntries(this.db, environmentId, { ...filterOf(query), limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map(auditView),
      next_page_token: rows.length > limit && last ? cursorOf(last) : null,
    };
  }

  /** Every entry the filters select, newest first, read in batches (an export may be large). */
  async *export(environmentId: string, query: Omit<AuditQuery, 'page_size'>): AsyncGenerator<AuditView> {
    await this.flush();
    const filter = filterOf(query);
    for (;;) {
      const rows = await listAuditEntries(this.db, environmentId, { ...filter, limit: EXPORT_BATCH });
      for (const row of rows) yield auditView(row);
      const last = rows.at(-1);
      if (rows.length < EXPORT_BATCH || !last) return;
      filter.before = { at: last.at, id: last.id };
    }
  }
}

function filterOf(query: AuditQuery): Omit<AuditFilter, 'limit'> {
  const filter: Omit<AuditFilter, 'limit'> = {};
  if (query.actor_id) filter.actorId = query.actor_id;
  if (query.actor_type) filter.actorType = query.actor_type;
  if (query.action) filter.action = query.action;
  if (query.resource_type) filter.resourceType = query.resource_type;
  if (query.resource_id) filter.resourceId = query.resource_id;
  if (query.since) filter.since = new Date(query.since);
  if (query.until) filter.until = new Date(query.until);
  if (query.page_token) filter.before = decodeCursor(query.page_token);
  return filter;
}

const cursorOf = (row: AuditRow) => Buffer.from(`${row.at.toISOString()}|${row.id}`).toString('base64url');

function decodeCursor(token: string): { at: Date; id: string } {
  const [at = '', id = ''] = Buffer.from(token, 'base64url').toString('utf8').split('|');
  const date = new Date(at);
  if (Number.isNaN(date.getTime()) || !/^aud_[0-9A-Za-z]+$/.test(id)) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the newest entries.',
      { errors: [{ path: '/page_token', message: 'is not a valid page token' }] },
    );
  }
  return { at: date, id };
}

export function auditView(row: AuditRow): AuditView {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    credential: row.credential,
    action: row.action,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    ip: row.ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    status_code: row.status_code === null ? null : Number(row.status_code),
    details: row.details ?? {},
  };
}
