import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AccountTokens, Credential } from '../accounts/account-tokens.js';
import type { EndUserDeps } from '../accounts/as-end-user.js';
import { ProviderClient } from '../accounts/provider-client.js';
import { Problem } from '../errors/problem.js';
import { derivedEventId, recordEvents } from '../events/outbox.js';
import type { NewEvent } from '../events/types.js';
import type { Database, Queryable } from '../store/db.js';
import {
  claimDueTriggers,
  forgetItems,
  knownItems,
  lockTrigger,
  recordQuietPolls,
  releaseTriggerLeases,
  saveItems,
  type TriggerRow,
  type TriggerState,
  updateTrigger,
} from '../store/triggers.js';
import { changeName, triggerType } from './catalog.js';
import { readObservations } from './changes.js';
import type { PushNote, TriggerChannels } from './channels.js';
import type { AnyTriggerType, PollResult } from './definition.js';
import { recordStateChange, type StoredCursor } from './service.js';

export interface PollerConfig {
  /**
   * The longest the poller sleeps between looks for due subscriptions (PORTICO_TRIGGER_POLL_MS); it
   * wakes sooner when the next one it knows of comes due. What other replicas change is seen within it.
   */
  pollMs: number;
  /** Polls in flight at once in this process (PORTICO_TRIGGER_CONCURRENCY). */
  concurrency: number;
  /** How long a claim holds a subscription: a replica killed mid-poll leaves it for this long. */
  leaseMs: number;
}

/** Failed polls in a row that make a trigger failing (fewer: degraded). */
export const FAILING_AFTER = 3;
/** The longest a failing trigger waits between polls, in intervals. */
const MAX_BACKOFF_INTERVALS = 32;
/** Quiet polls are written together: at most this long after the poll, or this many at once. */
const QUIET_FLUSH_MS = 200;
const QUIET_FLUSH_SIZE = 500;
/**
 * The least time between two claims: wakes in between share the next one, and subscriptions that
 * come due meanwhile are claimed together (one statement for many polls when thousands are due a
 * minute).
 */
const MIN_CLAIM_GAP_MS = 100;
/** Past a subscription's next due time when the poller looks for it (clocks and rounding). */
const DUE_SLACK_MS = 20;
/** Claimed at once, in polls the process runs at a time: enough not to claim again at every poll. */
const CLAIM_BATCH_PER_SLOT = 8;

type Outcome =
  | { kind: 'polled'; result: PollResult; push?: PushNote | undefined }
  | { kind: 'account'; problem: Problem }
  | { kind: 'rate_limited'; waitMs: number }
  | { kind: 'failed'; error: unknown };

/**
 * Polls the due trigger subscriptions. Every process runs one: subscriptions are claimed in batches
 * with FOR UPDATE SKIP LOCKED and held by a lease, so replicas share the work and each subscription
 * is polled by one at a time; a replica killed mid-poll leaves its claims to whoever looks after
 * their leases run out. Between claims it sleeps until the next subscription comes due (at most
 * PORTICO_TRIGGER_POLL_MS), not a fixed tick: a change waits for its subscription's interval, not
 * for the tick after it. A poll's changes, the cursor after them and the subscription's health are
 * committed together (or not at all, when the lease went to another replica meanwhile), each
 * change as a trigger.fired event whose id is derived from the provider's change: the same change
 * read twice is recorded once.
 */
export class TriggerPoller {
  private readonly owner = `proc_${randomBytes(8).toString('hex')}`;
  private stopped = false;
  private inflight = new Map<string, Promise<void>>();
  /** Claimed and not yet started, with when they were claimed (their leases run from then). */
  private queue: Array<{ row: TriggerRow; claimedAt: number }> = [];
  /** The next look, and when it is due (performance.now()). */
  private timer?: NodeJS.Timeout;
  private timerAt = Number.POSITIVE_INFINITY;
  private looking: Promise<void> | undefined;
  private again = false;
  /** The last claim took all it asked for: more are due, so look again as slots free up. */
  private moreDue = false;
  private lastClaimAt = Number.NEGATIVE_INFINITY;
  private quiet: Array<{
    id: string;
    cursor: Record<string, unknown>;
    intervalSeconds: number;
    polledAt: number;
  }> = [];
  private quietTimer?: NodeJS.Timeout;
  private quietWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      db: Database;
      logger: Logger;
      accountTokens: AccountTokens;
      endUser: Omit<EndUserDeps, 'accountTokens'>;
      config: PollerConfig;
      /** Push channels, opened and renewed while the lease is held. */
      channels?: TriggerChannels;
    },
  ) {}

  start(): void {
    this.wake();
  }

  /**
   * Stops claiming and gives polls in flight a moment to finish; the leases of those that do not,
   * and of those claimed and not started, are released, so another replica (or this one,
   * restarted) polls them from their cursor.
   */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.looking;
    const waiting = this.queue.map((q) => q.row.id);
    this.queue = [];
    const pending = [...this.inflight.values()];
    await Promise.race([
      Promise.allSettled(pending),
      new Promise((resolve) => setTimeout(resolve, 2_000).unref()),
    ]);
    await this.flushQuiet();
    await releaseTriggerLeases(this.deps.db, this.owner, [...waiting, ...this.inflight.keys()]).catch(
      () => {},
    );
  }

  /** Looks for due subscriptions soon: now, or when the least gap since the last claim is over. */
  wake(): void {
    if (this.stopped) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    this.lookIn(this.lastClaimAt + this.gapMs() - performance.now());
  }

  /** The least gap between claims; a shorter PORTICO_TRIGGER_POLL_MS shortens it too. */
  private gapMs(): number {
    return Math.min(MIN_CLAIM_GAP_MS, this.deps.config.pollMs);
  }

  /** Schedules the next look in `ms` (or keeps one already due sooner). */
  private lookIn(ms: number): void {
    if (this.stopped) return;
    const at = performance.now() + Math.max(0, ms);
    if (this.timer && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.look();
      },
      Math.max(0, ms),
    );
    this.timer.unref();
  }

  private look(): void {
    if (this.stopped) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    this.looking = this.claim()
      .catch((err: unknown) => {
        this.deps.logger.warn({ err }, 'trigger subscriptions could not be claimed');
        this.lookIn(this.deps.config.pollMs);
      })
      .finally(() => {
        this.looking = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** One claim: as many due subscriptions as there is room for, then sleep until the next is due. */
  private async claim(): Promise<void> {
    this.again = false;
    const { concurrency, pollMs, leaseMs } = this.deps.config;
    // Enough claimed to keep every slot busy: the next claim comes when the queue runs low.
    if (this.queue.length >= concurrency) {
      this.moreDue = true;
      return;
    }
    const limit = concurrency * CLAIM_BATCH_PER_SLOT - this.queue.length;
    this.lastClaimAt = performance.now();
    const claim = await claimDueTriggers(this.deps.db, this.owner, limit, leaseMs);
    const claimedAt = performance.now();
    for (const row of claim.rows) this.queue.push({ row, claimedAt });
    this.moreDue = claim.rows.length >= limit;
    this.pump();
    if (this.stopped) return;
    const gap = this.gapMs();
    if (this.moreDue) this.lookIn(gap);
    else this.lookIn(Math.min(pollMs, Math.max(gap, claim.nextDueInMs ?? pollMs)));
  }

  /** Starts claimed polls while there are free slots. */
  private pump(): void {
    const { concurrency, leaseMs } = this.deps.config;
    while (!this.stopped && this.inflight.size < concurrency && this.queue.length) {
      const { row, claimedAt } = this.queue.shift()!;
      // Waited half its lease in the queue (a provider far slower than the batch assumed): the rest
      // go back, so no poll runs close to a lease's end, when another replica may take it over.
      if (performance.now() - claimedAt > leaseMs / 2) {
        const back = [row.id, ...this.queue.map((q) => q.row.id)];
        this.queue = [];
        void releaseTriggerLeases(this.deps.db, this.owner, back)
          .catch((err: unknown) => this.deps.logger.warn({ err }, 'trigger leases not released'))
          .finally(() => this.wake());
        return;
      }
      const run = this.run(row)
        .catch((err: unknown) =>
          this.deps.logger.warn({ err, trigger_id: row.id }, 'trigger poll not recorded'),
        )
        .finally(() => {
          this.inflight.delete(row.id);
          this.pump();
          if (this.moreDue && this.queue.length < concurrency) this.wake();
          // The claim could not know when this one comes due again: an interval from now, at the
          // soonest (later after a failure's back-off, which costs one look that finds it not due).
          else this.lookIn(row.interval_seconds * 1000 + DUE_SLACK_MS);
        });
      this.inflight.set(row.id, run);
    }
  }

  /** One poll of one subscription, and what it found, recorded. */
  private async run(row: TriggerRow): Promise<void> {
    const outcome = await this.poll(row);
    if (this.stopped) return;
    const type = safeType(row.trigger_type);
    if (
      outcome.kind === 'polled' &&
      type &&
      outcome.result.observations.length === 0 &&
      !outcome.result.complete &&
      row.state === 'active' &&
      outcome.push?.state !== 'lapsed'
    ) {
      this.queueQuiet(row, outcome.result);
      return;
    }
    const recorded = await this.deps.db.transaction(async (tx) => {
      const locked = await lockTrigger(tx, row.id);
      // Deleted meanwhile, or its lease went to another replica, which polls it from the cursor.
      if (!locked || locked.lease_owner !== this.owner) return false;
      if (outcome.kind === 'polled' && type)
        await this.commitPoll(tx, locked, type, outcome.result, outcome.push);
      else if (outcome.kind === 'account') await this.pauseForAccount(tx, locked, outcome.problem);
      else if (outcome.kind === 'rate_limited') {
        await updateTrigger(tx, locked.id, {
          nextPollInSeconds: Math.max(locked.interval_seconds, Math.ceil(outcome.waitMs / 1000)),
          releaseLease: true,
        });
      } else {
        const error =
          outcome.kind === 'failed' ? outcome.error : new Error(`unknown trigger type ${row.trigger_type}`);
        await this.recordFailure(tx, locked, error);
      }
      return true;
    });
    // A notification that came during the poll made it due again now (updateTrigger): looked for
    // at the next claim, which polls that found something can afford.
    if (recorded) this.wake();
  }

  private async poll(row: TriggerRow): Promise<Outcome> {
    let credential: Credential;
    try {
      credential = await this.deps.accountTokens.forAccount(row.account_id);
    } catch (error) {
      if (
        error instanceof Problem &&
        (error.code === 'account_not_active' || error.code === 'account_not_found')
      )
        return { kind: 'account', problem: error };
      return { kind: 'failed', error };
    }
    const type = safeType(row.trigger_type);
    if (!type) return { kind: 'failed', error: new Error(`unknown trigger type ${row.trigger_type}`) };
    const client = new ProviderClient(credential, {
      ...this.deps.endUser,
      accountTokens: this.deps.accountTokens,
    });
    const stored = (row.cursor ?? { since: row.created_at.getTime(), at: {} }) as unknown as StoredCursor;
    const ctx = { client, config: row.config, since: stored.since };
    // The channel first: a notification from a new channel then finds the poll's cursor saved.
    const push = await this.deps.channels?.maintain(row, type, ctx, stored.at ?? {});
    try {
      const result = await type.poll(ctx, stored.at ?? {});
      return { kind: 'polled', result, push };
    } catch (error) {
      if (error instanceof Problem) {
        if (error.code === 'account_not_active' || error.code === 'account_not_found')
          return { kind: 'account', problem: error };
        if (error.code === 'upstream_rate_limited' || error.code === 'rate_limited')
          return { kind: 'rate_limited', waitMs: error.options.retryAfterMs ?? 1000 };
      }
      return { kind: 'failed', error };
    }
  }

  /** Reports the poll's changes, moves the cursor and marks the subscription healthy. */
  private async commitPoll(
    tx: Queryable,
    row: TriggerRow,
    type: AnyTriggerType,
    result: PollResult,
    push?: PushNote,
  ) {
    const stored = (row.cursor ?? { since: row.created_at.getTime(), at: {} }) as unknown as StoredCursor;
    const known = await knownItems(tx, row.id, result.complete ? null : result.observations.map((o) => o.id));
    const reading = readObservations(result.observations, known, {
      since: stored.since,
      ...(result.complete ? { complete: true } : {}),
    });
    const wanted = Array.isArray(row.config.changes) ? new Set(row.config.changes as string[]) : undefined;
    const events: Array<NewEvent & { id: string }> = [];
    for (const c of reading.changes) {
      const change = changeName(type, c.change);
      if (wanted && !wanted.has(change)) continue;
      events.push({
        id: derivedEventId([row.id, c.id, c.version, c.change]),
        environmentId: row.environment_id,
        type: 'trigger.fired',
        subject: row.id,
        data: {
          trigger_id: row.id,
          trigger_type: row.trigger_type,
          connection_name: row.connection_name,
          identifier: row.identifier,
          change,
          item_id: c.id,
          item: c.item,
        },
      });
    }
    await recordEvents(this.deps.db, tx, events);
    await saveItems(tx, row.id, reading.save);
    await forgetItems(tx, row.id, reading.forget);
    const requested = row.state === 'paused' && row.pause_reason === 'requested';
    // Push lapsed: the changes still come, at the polling interval only.
    const state: TriggerState = requested ? 'paused' : push?.state === 'lapsed' ? 'degraded' : 'active';
    const next = await updateTrigger(tx, row.id, {
      cursor: { since: stored.since, at: result.cursor },
      state,
      pauseReason: requested ? 'requested' : null,
      consecutiveFailures: 0,
      lastSuccess: true,
      lastEvent: events.length > 0,
      nextPollInSeconds: requested ? null : row.interval_seconds,
      releaseLease: true,
    });
    if (next && row.state !== state) {
      const reason =
        push?.state === 'lapsed'
          ? `the push channel could not be opened or renewed (${push.error}); polling every ${row.interval_seconds} s until it is`
          : push?.restored
            ? 'the push channel is open again'
            : 'polled successfully';
      await recordStateChange(this.deps.db, tx, next, row.state, reason);
    }
  }

  /** The account cannot be used (expired, disconnected): paused until it moves again. */
  private async pauseForAccount(tx: Queryable, row: TriggerRow, problem: Problem): Promise<void> {
    const status = (
      await tx.query<{ status: string }>('SELECT status FROM connected_accounts WHERE id = $1', [
        row.account_id,
      ])
    )[0]?.status;
    const requested = row.state === 'paused' && row.pause_reason === 'requested';
    // Authorized again since the poll found it unusable: looked at once more, now.
    const back = status === 'ACTIVE';
    const next = await updateTrigger(tx, row.id, {
      state: 'paused',
      pauseReason: requested ? 'requested' : 'account_not_active',
      lastError: problem.detail,
      nextPollInSeconds: back && !requested ? 0 : null,
      releaseLease: true,
    });
    if (next && row.state !== 'paused') {
      await recordStateChange(
        this.deps.db,
        tx,
        next,
        row.state,
        `the connected account is ${status ?? 'gone'}; authorize it again to resume`,
      );
    }
  }

  private async recordFailure(tx: Queryable, row: TriggerRow, error: unknown): Promise<void> {
    const failures = row.consecutive_failures + 1;
    const requested = row.state === 'paused' && row.pause_reason === 'requested';
    const state: TriggerState = requested ? 'paused' : failures >= FAILING_AFTER ? 'failing' : 'degraded';
    // Retried at its interval until it is failing, then less and less often.
    const backoff =
      failures < FAILING_AFTER ? 1 : Math.min(2 ** (failures - FAILING_AFTER + 1), MAX_BACKOFF_INTERVALS);
    const message = describe(error);
    const next = await updateTrigger(tx, row.id, {
      state,
      consecutiveFailures: failures,
      lastError: message,
      nextPollInSeconds: requested ? null : row.interval_seconds * backoff,
      releaseLease: true,
    });
    this.deps.logger.info(
      { trigger_id: row.id, trigger_type: row.trigger_type, failures, state, error: message },
      'trigger poll failed',
    );
    if (next && row.state !== state) {
      await recordStateChange(
        this.deps.db,
        tx,
        next,
        row.state,
        `${failures} poll${failures === 1 ? '' : 's'} failed in a row: ${message}`,
      );
    }
  }

  private queueQuiet(row: TriggerRow, result: PollResult): void {
    const stored = (row.cursor ?? { since: row.created_at.getTime(), at: {} }) as unknown as StoredCursor;
    this.quiet.push({
      id: row.id,
      cursor: { since: stored.since, at: result.cursor },
      intervalSeconds: row.interval_seconds,
      polledAt: performance.now(),
    });
    if (this.quiet.length >= QUIET_FLUSH_SIZE) {
      void this.flushQuiet();
      return;
    }
    if (!this.quietTimer) {
      this.quietTimer = setTimeout(() => void this.flushQuiet(), QUIET_FLUSH_MS);
      this.quietTimer.unref();
    }
  }

  private flushQuiet(): Promise<void> {
    clearTimeout(this.quietTimer);
    this.quietTimer = undefined;
    const batch = this.quiet;
    this.quiet = [];
    if (!batch.length) return this.quietWrite;
    // Unwritten, the leases run out and the subscriptions are polled again from the old cursor.
    let soonestSeconds = Number.POSITIVE_INFINITY;
    this.quietWrite = this.quietWrite
      .then(() => {
        // The interval runs from the poll, not from this write of it.
        const now = performance.now();
        const polls = batch.map((p) => ({
          id: p.id,
          cursor: p.cursor,
          nextPollInSeconds: Math.max(0, p.intervalSeconds - (now - p.polledAt) / 1000),
        }));
        soonestSeconds = Math.min(...polls.map((p) => p.nextPollInSeconds));
        return recordQuietPolls(this.deps.db, this.owner, polls);
      })
      .then((written) => {
        // Woken by a notification during its poll: due again now.
        if (written.some((w) => w.due)) this.wake();
        // A claim made before this write landed saw these still leased, so it could not know when
        // they come due: look then (a one-second trigger otherwise waited for the longest sleep).
        else this.lookIn(soonestSeconds * 1000 + DUE_SLACK_MS);
      })
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'trigger polls not recorded'));
    return this.quietWrite;
  }
}

function safeType(name: string): AnyTriggerType | undefined {
  try {
    return triggerType(name);
  } catch {
    return undefined;
  }
}

/** What went wrong, for last_error: a problem's detail, an error's message; never a token. */
function describe(error: unknown): string {
  if (error instanceof Problem) return `${error.code}: ${error.detail}`.slice(0, 1000);
  if (error instanceof Error) return error.message.slice(0, 1000);
  return String(error).slice(0, 1000);
}
