import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { Problem } from '../errors/problem.js';
import type { ProviderDefinition, RateLimit } from '../providers/catalog.js';
import { Lane, type Waiter } from './lane.js';

/** What the governor needs to know of a call: whose account, which connection, which provider. */
export interface GovernedCall {
  accountId: string;
  connectionId: string;
  provider: ProviderDefinition;
}

export interface GovernorOptions {
  /** Longest a call waits for its turn before it is refused (429 rate_limited). */
  maxWaitMs: number;
  /** Most calls one lane holds waiting; one more is refused at once. */
  maxQueue: number;
  /**
   * Most calls one account holds waiting in a lane it shares with others (a connection's limit):
   * one end user cannot fill the queue every other user of the connection waits in. Default maxQueue.
   */
  maxQueuePerAccount?: number;
  /** Replicas sharing the provider's limits (each keeps its share); 1 on the embedded store. */
  replicas(): number;
  /** Passes a provider's 429 on to the other replicas. */
  share?(accountId: string, retryAfterMs: number | undefined): void;
  registry?: Registry;
  clock?: () => number;
}

/**
 * Time allowed for a request to reach the provider, added to each window: a tenth of it, at most a
 * second (a provider counts a call when it arrives; a busy host can take that long to get it there).
 */
const marginMs = (windowMs: number) => Math.min(1000, windowMs / 10);
/** Why a call was refused its turn, as its problem says it. */
const WHY = {
  queue: (max: number) => `${max} calls already wait for this limit`,
  account: (_max: number, perAccount: number) =>
    `this end user already has ${perAccount} calls waiting for the connection's limit, the most one may`,
  time: () => "this call's turn does not come soon enough",
};

/** Lanes with nothing counted or waiting are dropped this often, so memory follows the busy keys. */
const SWEEP_MS = 60_000;

/**
 * The rate governor: keeps each account's and connection's calls under the provider's documented
 * limits (the catalog's `rate_limits`), for the tools and the proxy alike. A call over the rate
 * waits for its turn in a bounded queue instead of meeting the provider's 429; a 429 the provider
 * sends anyway (with Retry-After, or a second) pauses the account. On PostgreSQL each replica keeps
 * its share of each limit (the limit divided by the live replicas), so a call never waits on the
 * database; a 429 is shared with the other replicas.
 */
export class RateGovernor {
  private readonly lanes = new Map<string, Lane>();
  /** The lanes of connection-wide limits, which every account of the connection waits in. */
  private readonly shared = new WeakSet<Lane>();
  private readonly clock: () => number;
  private readonly sweep: NodeJS.Timeout;
  private readonly metrics: ReturnType<typeof governorMetrics> | undefined;

  constructor(private readonly options: GovernorOptions) {
    this.clock = options.clock ?? Date.now;
    this.metrics = options.registry ? governorMetrics(options.registry, this.lanes) : undefined;
    this.sweep = setInterval(() => this.dropIdle(), SWEEP_MS);
    this.sweep.unref();
  }

  /** Undefined when the call may go now (the common case, without a promise); else its turn. */
  acquire(call: GovernedCall): Promise<void> | undefined {
    const limits = call.provider.api.rateLimits;
    if (limits.length === 0) return undefined;
    const lanes = limits.map((limit) => this.lane(call, limit));
    if (lanes.every((lane) => lane.delayMs() === 0 && lane.depth === 0)) {
      for (const lane of lanes) lane.tryTake();
      return undefined;
    }
    return this.wait(call, lanes);
  }

  /**
   * The provider answered 429 (here, or on another replica when `heard`): the account's calls pause
   * for `retryAfterMs`, or, when the provider did not say, until a whole window has passed (its
   * window is full, with calls Portico did not see: other apps, other replicas). A pause longer
   * than half a call's allowed wait is not held here: such calls go, and the provider's 429 with
   * its Retry-After tells the caller how long to wait.
   */
  slowDown(accountId: string, retryAfterMs: number | undefined, heard = false): void {
    if (!heard) this.options.share?.(accountId, retryAfterMs);
    const until =
      retryAfterMs === undefined ? undefined : this.clock() + Math.min(Math.max(retryAfterMs, 100), 300_000);
    for (const [key, lane] of this.lanes) {
      if (!key.startsWith(`account:${accountId}:`)) continue;
      if (until === undefined) lane.saturate();
      else lane.pauseUntil(until);
    }
    this.metrics?.pauses.inc();
  }

  /** How long a call of this account would wait for its turn now, ms (0 without limits). */
  delayMs(call: GovernedCall): number {
    return Math.max(0, ...call.provider.api.rateLimits.map((limit) => this.lane(call, limit).delayMs()));
  }

  /** The longest a call may wait for its turn. */
  get maxWaitMs(): number {
    return this.options.maxWaitMs;
  }

  close(): void {
    clearInterval(this.sweep);
  }

  /** Each lane in turn (the account's, then the connection's), within one overall deadline. */
  private async wait(call: GovernedCall, lanes: Lane[]): Promise<void> {
    const started = this.clock();
    const deadline = started + this.options.maxWaitMs;
    this.metrics?.waits.inc({ provider: call.provider.key });
    for (const lane of lanes) {
      if (lane.depth === 0 && lane.tryTake()) continue;
      if (lane.depth >= this.options.maxQueue) throw this.refusal(call, lane, 'queue');
      if (this.shared.has(lane) && lane.depthOf(call.accountId) >= this.perAccount)
        throw this.refusal(call, lane, 'account');
      // A turn that cannot come in time is refused now, with when to come back.
      if (lane.delayMs() > deadline - this.clock()) throw this.refusal(call, lane, 'time');
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          grant: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(
          () => {
            if (lane.remove(call.accountId, waiter)) reject(this.refusal(call, lane, 'time'));
          },
          Math.max(0, deadline - this.clock()),
        );
        timer.unref();
        lane.enqueue(call.accountId, waiter);
      });
    }
    this.metrics?.waited.observe({ provider: call.provider.key }, (this.clock() - started) / 1000);
  }

  private get perAccount(): number {
    return Math.min(this.options.maxQueuePerAccount ?? this.options.maxQueue, this.options.maxQueue);
  }

  private refusal(call: GovernedCall, lane: Lane, why: 'queue' | 'account' | 'time'): Problem {
    this.metrics?.refusals.inc({ provider: call.provider.key });
    const retryAfterMs = Math.max(1000, Math.ceil(lane.delayMs()));
    const limits = call.provider.api.rateLimits
      .map((l) => `${l.requests} per ${l.perSeconds} s per ${l.scope}`)
      .join(', ');
    return new Problem(
      'rate_limited',
      `${call.provider.displayName} allows ${limits}; ${WHY[why](this.options.maxQueue, this.perAccount)}. Retry in ${Math.ceil(retryAfterMs / 1000)} s, or send fewer calls at once.`,
      { retryAfterMs, headers: { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } },
    );
  }

  private lane(call: GovernedCall, limit: RateLimit): Lane {
    const owner = limit.scope === 'account' ? call.accountId : call.connectionId;
    const key = `${limit.scope}:${owner}:${limit.requests}/${limit.perSeconds}`;
    const share = Math.max(1, Math.floor(limit.requests / Math.max(1, this.options.replicas())));
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = new Lane(
        share,
        limit.perSeconds * 1000,
        marginMs(limit.perSeconds * 1000),
        this.clock,
        this.options.maxWaitMs / 2,
      );
      this.lanes.set(key, lane);
      if (limit.scope === 'connection') this.shared.add(lane);
    } else {
      lane.setCapacity(share);
    }
    return lane;
  }

  private dropIdle(): void {
    for (const [key, lane] of this.lanes) if (lane.idle()) this.lanes.delete(key);
  }
}

function governorMetrics(registry: Registry, lanes: Map<string, Lane>) {
  new Gauge({
    name: 'portico_rate_governor_queued',
    help: 'Calls waiting for their turn under a provider rate limit, now.',
    registers: [registry],
    collect() {
      let queued = 0;
      for (const lane of lanes.values()) queued += lane.depth;
      this.set(queued);
    },
  });
  new Gauge({
    name: 'portico_rate_governor_lanes',
    help: 'Accounts and connections with calls counted against a rate limit, now.',
    registers: [registry],
    collect() {
      this.set(lanes.size);
    },
  });
  return {
    waits: new Counter({
      name: 'portico_rate_governor_waits_total',
      help: 'Calls that waited for their turn under a provider rate limit, by provider.',
      labelNames: ['provider'],
      registers: [registry],
    }),
    waited: new Histogram({
      name: 'portico_rate_governor_wait_seconds',
      help: 'How long calls that waited for their turn waited, by provider.',
      labelNames: ['provider'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30],
      registers: [registry],
    }),
    refusals: new Counter({
      name: 'portico_rate_governor_refusals_total',
      help: 'Calls refused because their queue was full or their turn did not come in time, by provider.',
      labelNames: ['provider'],
      registers: [registry],
    }),
    pauses: new Counter({
      name: 'portico_rate_governor_pauses_total',
      help: 'Accounts paused after the provider answered 429.',
      registers: [registry],
    }),
  };
}
