import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import { recordEvents } from '../events/outbox.js';
import type { Database } from '../store/db.js';
import {
  type ExecutionFilter,
  type ExecutionRow,
  type ExecutionStatsRow,
  executionStatsRows,
  findExecution,
  insertExecutions,
  listExecutions,
  pruneExecutionRollups,
  pruneExecutions,
  summarizeExecutionStats,
} from '../store/executions.js';
import { WriteBehind } from '../store/write-behind.js';
import { recordedInput, summarizeOutput } from './detail.js';

/**
 * Retention deletes this many rows per statement, pausing between statements, and at most
 * PRUNE_MAX_BATCHES statements per run: each DELETE is short (no lock held for long, no long
 * transaction), the pauses leave the database to the traffic, and a backlog (a first run on a big
 * table) is worked off over several runs instead of one burst. 2,000 rows every 50 ms tops out near
 * 40,000 rows/s, above the 1,000 calls/s a busy deployment records.
 */
export const PRUNE_BATCH = 2000;
const PRUNE_PAUSE_MS = 50;
const PRUNE_MAX_BATCHES = 500;
/** The dashboard's statistics look back 7 days: their rollup is kept at least that long. */
const ROLLUP_MIN_DAYS = 8;
/**
 * Records reach the rollup a flush after their call (200 ms; longer when a flush is retried): an
 * hour's figures are taken as final a minute after it ends, and re-read at most every 5 minutes
 * in case a late record reached them anyway.
 */
const HOUR_SETTLES_MS = 60_000;
const ENDED_HOURS_TTL_MS = 5 * 60_000;
const ENDED_HOURS_ENTRIES = 256;

export interface ExecutionQuery {
  tool_name?: string;
  identifier?: string;
  /** Only these connections' executions (null: all); set from the caller's grant. */
  connection_names?: readonly string[] | null;
  status?: 'success' | 'error';
  since?: string;
  until?: string;
  page_size?: number;
  page_token?: string;
}

/**
 * Tool execution records. Recording is off the response path: rows wait in memory and are written
 * in one statement every 200 ms (a tool call no longer waits for its own INSERT, which was half of
 * its cost on the embedded store). Reads flush first, so a record is visible as soon as the call
 * has answered; a graceful stop flushes, and only a crash can lose the last 200 ms of records.
 */
export class ExecutionService {
  private readonly records: WriteBehind<ExecutionRow>;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    /** Which provider each tool calls, for the per-provider figures of stats(). */
    toolProviders: Record<string, string> | (() => Record<string, string>) = {},
    /** PORTICO_EXECUTION_RETENTION_DAYS; 0 keeps records forever. */
    private readonly retentionDays = 30,
  ) {
    this.toolProviders = typeof toolProviders === 'function' ? toolProviders : () => toolProviders;
    this.records = new WriteBehind({
      logger,
      what: 'execution records',
      // The input masked and cut, the output reduced to its shape: done here rather than in the
      // call, and before the first try, so rows kept for a retry hold no output.
      prepare: (row) => {
        if (row.raw_input !== undefined) {
          row.input = recordedInput(row.raw_input);
          row.raw_input = undefined;
        }
        if (row.raw_output !== undefined) {
          row.output_summary = summarizeOutput(row.raw_output, row.raw_output_bytes);
          row.raw_output = undefined;
          row.raw_output_bytes = undefined;
        }
      },
      // A failed call's event commits with its record (and only then).
      write: (batch) =>
        this.db.transaction(async (tx) => {
          await insertExecutions(tx, batch);
          await recordEvents(
            this.db,
            tx,
            batch
              .filter((row) => row.status === 'error')
              .map((row) => ({
                environmentId: row.environment_id,
                type: 'tool.execution.failed' as const,
                subject: row.account_id,
                data: executionView(row),
              })),
          );
        }),
    });
  }

  record(row: ExecutionRow): void {
    this.records.push(row);
  }

  /** Writes every waiting record (reads do it first, so a call's record is there once it answered). */
  flush(): Promise<void> {
    return this.records.flush();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.records.close();
  }

  private closed = false;
  private readonly endedHours = new Map<
    string,
    { from: number; until: number; at: number; rows: ExecutionStatsRow[] }
  >();
  /** Read at each stats query: the registry's tools change while the gateway runs. */
  private readonly toolProviders: () => Record<string, string>;

  private get statsTools(): { names: string[]; providers: string[] } {
    const map = this.toolProviders();
    return { names: Object.keys(map), providers: Object.values(map) };
  }
  private pruning: Promise<number> | undefined;

  /**
   * Removes records (and hourly rollups) older than the retention period, in short paced batches;
   * safe on every replica at once (each DELETE picks rows by id and a row deleted twice is just
   * skipped). Concurrent calls share one run.
   */
  prune(options: { batch?: number; pauseMs?: number; maxBatches?: number } = {}): Promise<number> {
    if (!this.retentionDays) return Promise.resolve(0);
    this.pruning ??= this.runPrune(options).finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  private async runPrune({
    batch = PRUNE_BATCH,
    pauseMs = PRUNE_PAUSE_MS,
    maxBatches = PRUNE_MAX_BATCHES,
  }: {
    batch?: number;
    pauseMs?: number;
    maxBatches?: number;
  }): Promise<number> {
    const day = 86_400_000;
    const before = new Date(Date.now() - this.retentionDays * day);
    const rollupsBefore = new Date(Date.now() - Math.max(this.retentionDays, ROLLUP_MIN_DAYS) * day);
    let total = 0;
    for (let i = 0; i < maxBatches && !this.closed; i++) {
      const removed = await pruneExecutions(this.db, before, batch);
      total += removed;
      if (removed < batch) break;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    for (let i = 0; i < maxBatches && !this.closed; i++) {
      if ((await pruneExecutionRollups(this.db, rollupsBefore, batch)) < batch) break;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    if (total) this.logger.info({ executions: total, days: this.retentionDays }, 'old executions removed');
    return total;
  }

  async get(environmentId: string, id: string): Promise<Record<string, unknown>> {
    await this.flush();
    const row = await findExecution(this.db, id);
    if (!row || row.environment_id !== environmentId) throw this.notFound(id);
    return executionDetailView(row);
  }

  notFound(id: string): Problem {
    return new Problem(
      'execution_not_found',
      `No execution ${id}; execution ids come back as execution_id from POST /api/v1/tools/execute.`,
    );
  }

  async list(
    environmentId: string,
    query: ExecutionQuery,
  ): Promise<{ data: Record<string, unknown>[]; next_page_token: string | null }> {
    await this.flush();
    const limit = query.page_size ?? 50;
    const filter: ExecutionFilter = { limit: limit + 1 };
    if (query.tool_name) filter.toolName = query.tool_name;
    if (query.identifier) filter.identifier = query.identifier;
    if (query.connection_names) filter.connectionNames = query.connection_names;
    if (query.status) filter.status = query.status;
    if (query.since) filter.since = new Date(query.since);
    if (query.until) filter.until = new Date(query.until);
    if (query.page_token) filter.before = decodeCursor(query.page_token);
    const rows = await listExecutions(this.db, environmentId, filter);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map(executionView),
      next_page_token:
        rows.length > limit && last
          ? Buffer.from(`${last.started_at.toISOString()}|${last.id}`).toString('base64url')
          : null,
    };
  }

  /**
   * Executions of the last 24 hours or 7 days, for charts: every hour of the window (empty hours
   * as zeros) by outcome, the most frequent error codes, and p50/p95 duration per provider.
   */
  async stats(environmentId: string, window: StatsWindow): Promise<ExecutionStatsView> {
    await this.flush();
    const hourMs = 3_600_000;
    const now = Date.now();
    const thisHour = Math.floor(now / hourMs) * hourMs;
    const firstHour = thisHour - (STATS_WINDOWS[window] - 1) * hourMs;
    const since = new Date(firstHour);
    // Hours that have ended are read once (and kept): a request reads only the hour under way, a
    // few rows, so the 7-day chart costs the same at 10^8 executions as on an empty database.
    const settled = now - thisHour < HOUR_SETTLES_MS ? thisHour - hourMs : thisHour;
    const key = `${environmentId} ${window}`;
    let ended = this.endedHours.get(key);
    if (
      !ended ||
      ended.from !== firstHour ||
      ended.until !== settled ||
      now - ended.at > ENDED_HOURS_TTL_MS
    ) {
      const rows = await executionStatsRows(
        this.db,
        environmentId,
        since,
        new Date(settled),
        this.statsTools,
      );
      ended = { from: firstHour, until: settled, at: now, rows };
      this.endedHours.delete(key);
      if (this.endedHours.size >= ENDED_HOURS_ENTRIES) this.endedHours.clear();
      this.endedHours.set(key, ended);
    }
    const current = await executionStatsRows(
      this.db,
      environmentId,
      new Date(settled),
      null,
      this.statsTools,
    );
    const stats = summarizeExecutionStats([...ended.rows, ...current]);
    const hours = Array.from({ length: STATS_WINDOWS[window] }, (_, i) => ({
      hour: new Date(firstHour + i * hourMs).toISOString(),
      success: 0,
      error: 0,
    }));
    for (const row of stats.hours) {
      const slot = hours[Math.round((row.hour.getTime() - firstHour) / hourMs)];
      if (slot) slot[row.status] += row.count;
    }
    return {
      window,
      since: since.toISOString(),
      hours,
      error_codes: stats.errorCodes,
      providers: stats.providers,
    };
  }
}

export const STATS_WINDOWS = { '24h': 24, '7d': 24 * 7 } as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;

export interface ExecutionStatsView {
  window: StatsWindow;
  since: string;
  hours: Array<{ hour: string; success: number; error: number }>;
  error_codes: Array<{ error_code: string; count: number }>;
  providers: Array<{ provider: string; count: number; p50_ms: number; p95_ms: number }>;
}

function decodeCursor(token: string): { startedAt: Date; id: string } {
  const [at = '', id = ''] = Buffer.from(token, 'base64url').toString('utf8').split('|');
  const startedAt = new Date(at);
  if (Number.isNaN(startedAt.getTime()) || !/^exec_[0-9A-Za-z]+$/.test(id)) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the newest executions.',
      { errors: [{ path: '/page_token', message: 'is not a valid page token' }] },
    );
  }
  return { startedAt, id };
}

export function executionView(row: ExecutionRow): Record<string, unknown> {
  return {
    id: row.id,
    tool_name: row.tool_name,
    tool_version: row.tool_version,
    connected_account_id: row.account_id,
    connection_name: row.connection_name,
    identifier: row.identifier,
    status: row.status,
    error_code: row.error_code,
    upstream_calls: row.upstream_calls,
    duration_ms: row.duration_ms,
    started_at: row.started_at.toISOString(),
    finished_at: row.finished_at.toISOString(),
  };
}

/**
 * One record with everything kept to debug the call (GET /api/v1/executions/:id): the list view,
 * the problem, the masked input, the output's shape, what the provider answered, and links to the
 * account and connection involved.
 */
export function executionDetailView(row: ExecutionRow): Record<string, unknown> {
  return {
    ...executionView(row),
    error:
      row.status === 'error'
        ? {
            code: row.error_code,
            detail: row.error_detail ?? null,
            errors: (row.error_fields ?? []).map((e) => ({ path: e.path, message: e.message })),
          }
        : null,
    input: row.input ?? null,
    output_summary: row.output_summary ?? null,
    upstream_status: row.upstream_status ?? null,
    attempts: row.attempts ?? null,
    token_refreshed: row.token_refreshed ?? null,
    timings: row.timings ?? null,
    links: {
      account: row.account_id ? `/api/v1/connected-accounts/${row.account_id}` : null,
      connection: row.connection_name
        ? `/api/v1/connections/${encodeURIComponent(row.connection_name)}`
        : null,
    },
  };
}
