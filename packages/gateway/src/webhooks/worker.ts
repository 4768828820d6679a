import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Agent } from 'undici';
import { EVENTS_CHANNEL, recordEvent } from '../events/outbox.js';
import type { Keyring } from '../secrets/keyring.js';
import { WEBHOOK_PREVIOUS_SECRET, WEBHOOK_SECRET } from '../secrets/sealed-columns.js';
import type { Database } from '../store/db.js';
import {
  type AttemptRecord,
  type ClaimedDelivery,
  claimDeliveries,
  disableEndpoint,
  insertAttempts,
  markDelivered,
  markFailed,
} from '../store/webhooks.js';
import type { Tracing } from '../tracing/tracing.js';
import {
  BlockedAddressError,
  guardedLookup,
  isPublicAddress,
  literalAddress,
} from '../upstream/outbound-guard.js';
import { loadUndici, UNDICI_ERRORS } from '../upstream/undici.js';
import { webhookView } from './schemas.js';
import { signedHeaders } from './signer.js';

export interface DeliveryConfig {
  /** http and private addresses allowed (local development, tests). */
  allowPrivate: boolean;
  /** One attempt, from connecting to the end of the response. */
  timeoutMs: number;
  /** Delay before each retry; when the last one fails the endpoint is disabled. */
  retryScheduleMs: number[];
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** How often the queue is looked at without a notification (retries, takeovers, missed NOTIFYs). */
  pollMs?: number;
  /** The least time between two looks at the queue (default MIN_CLAIM_GAP_MS). */
  minClaimGapMs?: number;
}

/**
 * Every committed event (a failed tool call among them) wakes the worker, and so does every
 * finished attempt: at a thousand events a second, one claim statement each would be a thousand
 * queries a second, most finding nothing. Looks are spaced at least this far apart instead (at most
 * 50 a second per process); wakes in between share the next look, which claims for every free slot.
 */
const MIN_CLAIM_GAP_MS = 20;

/** The part of a receiver's answer that is kept: enough to debug, too little to hold anything large. */
const RESPONSE_BODY_LIMIT = 1024;

/**
 * Sends the queued deliveries. Any number of processes run one each: deliveries are claimed with
 * FOR UPDATE SKIP LOCKED, so replicas share the queue and none sends what another claimed; a claim
 * is a lease (the attempt's timeout and a margin), so a process killed mid-delivery leaves the
 * delivery to whoever looks after the lease runs out. Work is looked for when an event commits
 * (NOTIFY), when an attempt ends, and every second.
 */
export class DeliveryWorker {
  private readonly owner = `proc_${randomBytes(8).toString('hex')}`;
  private agent: Promise<Agent> | undefined;
  private readonly leaseMs: number;
  private inflight = 0;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastClaimAt = Number.NEGATIVE_INFINITY;
  private poll?: NodeJS.Timeout;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly attempts = new Set<Promise<void>>();
  private successes: AttemptRecord[] = [];
  private recording: Promise<void> = Promise.resolve();
  private recordScheduled = false;

  constructor(
    private readonly deps: {
      db: Database;
      keyring: Keyring;
      logger: Logger;
      config: DeliveryConfig;
      /** Set only when tracing is on: each attempt is then a client span, its traceparent sent along. */
      tracing?: Tracing | undefined;
    },
  ) {
    this.leaseMs = deps.config.timeoutMs + 5_000;
  }

  /** The delivery agent, made at the first delivery (most gateways have no webhook endpoint). */
  private dispatcher(): Promise<Agent> {
    const { timeoutMs, allowPrivate } = this.deps.config;
    this.agent ??= loadUndici().then(
      ({ Agent }) =>
        new Agent({
          connect: { timeout: timeoutMs, lookup: guardedLookup(allowPrivate) as never },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          keepAliveTimeout: 4_000,
          connections: 64,
        }),
    );
    return this.agent;
  }

  async start(): Promise<void> {
    await this.deps.db.listen(EVENTS_CHANNEL, () => this.wake());
    this.deps.db.onNotificationsMissed(() => this.wake());
    this.poll = setInterval(() => this.wake(), this.deps.config.pollMs ?? 1000);
    this.poll.unref();
    this.wake();
  }

  /** Stops claiming, lets attempts in flight finish (they are bounded by the timeout) and records them. */
  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poll);
    for (const timer of this.timers) clearTimeout(timer);
    // A claim under way still starts its attempts; they are waited for like the others.
    await this.draining;
    await Promise.allSettled([...this.attempts]);
    await this.flushSuccesses();
    await this.agent?.then((agent) => agent.close()).catch(() => {});
  }

  /** Looks for due deliveries now (coalesced with a look already under way). */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'webhook queue could not be read'))
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async drain(): Promise<void> {
    for (;;) {
      this.again = false;
      if (this.deps.config.concurrency - this.inflight <= 0 || this.stopped) return;
      const wait =
        this.lastClaimAt + (this.deps.config.minClaimGapMs ?? MIN_CLAIM_GAP_MS) - performance.now();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait).unref());
        if (this.stopped) return;
      }
      // Attempts may have finished during the wait: their slots are free now.
      const free = this.deps.config.concurrency - this.inflight;
      if (free <= 0) return;
      // This look covers the wakes that came during the wait.
      this.again = false;
      this.lastClaimAt = performance.now();
      const claimed = await claimDeliveries(this.deps.db, this.owner, free, this.leaseMs);
      for (const delivery of claimed) {
        this.inflight++;
        const attempt = this.attempt(delivery)
          .catch((err: unknown) =>
            this.deps.logger.warn({ err, event_id: delivery.event_id }, 'webhook attempt not recorded'),
          )
          .finally(() => {
            this.inflight--;
            this.attempts.delete(attempt);
            this.wake();
          });
        this.attempts.add(attempt);
      }
      if (claimed.length < free && !this.again) return;
    }
  }

  private secretsOf(d: ClaimedDelivery): string[] {
    const { keyring } = this.deps;
    const secrets = [keyring.open(d.secret, { ...WEBHOOK_SECRET, rowId: d.endpoint_id })];
    if (
      d.previous_secret &&
      d.previous_secret_expires_at &&
      d.previous_secret_expires_at.getTime() > Date.now()
    ) {
      secrets.push(keyring.open(d.previous_secret, { ...WEBHOOK_PREVIOUS_SECRET, rowId: d.endpoint_id }));
    }
    return secrets;
  }

  private async attempt(d: ClaimedDelivery): Promise<void> {
    const payload = JSON.stringify({
      id: d.event_id,
      type: d.type,
      created_at: d.event_created_at.toISOString(),
      data: d.data,
    });
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let responseBody: string | null = null;
    const traced = this.deps.tracing && deliverySpan(this.deps.tracing, d);
    try {
      const url = new URL(d.url);
      const literal = literalAddress(url);
      if (literal && !this.deps.config.allowPrivate && !isPublicAddress(literal)) {
        throw new BlockedAddressError(url.hostname, literal);
      }
      const [{ request }, dispatcher] = await Promise.all([loadUndici(), this.dispatcher()]);
      const res = await request(url, {
        method: 'POST',
        dispatcher,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Portico-Webhooks/1',
          ...signedHeaders(d.event_id, payload, this.secretsOf(d)),
          ...traced?.headers,
        },
        body: payload,
        signal: AbortSignal.timeout(this.deps.config.timeoutMs),
      });
      statusCode = res.statusCode;
      responseBody = await readPrefix(res.body, RESPONSE_BODY_LIMIT);
    } catch (err) {
      error = describe(err, this.deps.config.timeoutMs);
    }
    if (traced) {
      const { span } = traced;
      if (statusCode !== null) span.setAttribute('http.response.status_code', statusCode);
      if (error !== null || statusCode === null || statusCode < 200 || statusCode > 299) {
        span.setAttribute('error.type', statusCode === null ? 'delivery_failed' : String(statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
    const record: AttemptRecord = {
      endpointId: d.endpoint_id,
      eventId: d.event_id,
      attempt: d.attempts,
      statusCode,
      durationMs: Math.round(performance.now() - started),
      error:
        error ??
        (statusCode !== null && (statusCode < 200 || statusCode > 299) ? `HTTP ${statusCode}` : null),
      responseBody,
    };
    if (statusCode !== null && statusCode >= 200 && statusCode <= 299) {
      // Successes are written in batches: under load one transaction records many.
      this.successes.push(record);
      await this.scheduleSuccesses();
      return;
    }
    await this.recordFailure(d, record);
  }

  private scheduleSuccesses(): Promise<void> {
    if (!this.recordScheduled) {
      this.recordScheduled = true;
      this.recording = this.recording
        .then(async () => {
          this.recordScheduled = false;
          await this.flushSuccesses();
        })
        // Unrecorded, the deliveries stay claimed; their lease runs out and they are sent again.
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'webhook deliveries not recorded'));
    }
    return this.recording;
  }

  private async flushSuccesses(): Promise<void> {
    const batch = this.successes;
    if (!batch.length) return;
    this.successes = [];
    await this.deps.db.transaction(async (tx) => {
      await insertAttempts(tx, batch);
      await markDelivered(
        tx,
        batch.map((r) => ({ endpointId: r.endpointId, eventId: r.eventId })),
      );
    });
  }

  /**
   * A failed attempt: the next one is scheduled after the schedule's delay for this attempt, with
   * ±20 % jitter so endpoints coming back are not hit by every queued retry at once. After the last
   * one the endpoint is disabled and `webhook.disabled` is recorded, in the same transaction.
   */
  private async recordFailure(d: ClaimedDelivery, record: AttemptRecord): Promise<void> {
    const schedule = this.deps.config.retryScheduleMs;
    const base = schedule[d.attempts - 1];
    const delay = base === undefined ? null : Math.round(base * (0.8 + Math.random() * 0.4));
    const { db, logger } = this.deps;
    await db.transaction(async (tx) => {
      await insertAttempts(tx, [record]);
      const applied = await markFailed(tx, d.endpoint_id, d.event_id, d.attempts, delay);
      if (!applied || delay !== null) return;
      const reason = `Deliveries failed for ${describeSchedule(schedule)} (last: ${record.error}); re-enable with PATCH /api/v1/webhooks/${d.endpoint_id}.`;
      const disabled = await disableEndpoint(tx, d.endpoint_id, reason);
      if (!disabled) return;
      logger.warn({ webhook_id: d.endpoint_id, event_id: d.event_id }, 'webhook endpoint disabled');
      await recordEvent(db, tx, {
        environmentId: d.environment_id,
        type: 'webhook.disabled',
        subject: d.endpoint_id,
        data: { ...webhookView(disabled), reason },
      });
    });
    logger.info(
      {
        webhook_id: d.endpoint_id,
        event_id: d.event_id,
        attempt: d.attempts,
        error: record.error,
        retry_in_ms: delay,
      },
      'webhook attempt failed',
    );
    if (delay !== null && delay < (this.deps.config.pollMs ?? 1000)) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.wake();
      }, delay + 5);
      timer.unref();
      this.timers.add(timer);
    }
  }
}

/**
 * An attempt as the root of its own trace (it runs apart from the request that caused the event):
 * an HTTP client span named by the conventions, the URL without its query (a receiver's URL may
 * hold a token there), and the `traceparent` the receiver gets.
 */
function deliverySpan(tracing: Tracing, d: ClaimedDelivery) {
  let address: { host: string; port: number; url: string } | undefined;
  try {
    const url = new URL(d.url);
    address = {
      host: url.hostname,
      port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      url: `${url.origin}${url.pathname}`,
    };
  } catch {
    address = undefined;
  }
  const { span, context } = tracing.startSpan(
    'POST',
    SpanKind.CLIENT,
    {
      'http.request.method': 'POST',
      ...(address
        ? { 'server.address': address.host, 'server.port': address.port, 'url.full': address.url }
        : {}),
      'portico.webhook.endpoint_id': d.endpoint_id,
      'portico.event.id': d.event_id,
      'portico.event.type': d.type,
      'portico.webhook.attempt': d.attempts,
    },
    { root: true },
  );
  const headers: Record<string, string> = {};
  tracing.inject(context, headers);
  return { span, headers };
}

async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      // Whatever is left is not read: a receiver cannot make the gateway store or wait for more.
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (err instanceof BlockedAddressError || e.cause instanceof BlockedAddressError) {
    return (err instanceof BlockedAddressError ? err : (e.cause as BlockedAddressError)).message;
  }
  if (
    e.name === 'TimeoutError' ||
    e.code === UNDICI_ERRORS.headersTimeout ||
    e.code === UNDICI_ERRORS.bodyTimeout
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  if (e.code === UNDICI_ERRORS.connectTimeout) return `could not connect within ${timeoutMs} ms`;
  const code = e.code ?? e.cause?.code;
  const message = e.cause?.message ?? e.message ?? String(err);
  return (code ? `${code}: ${message}` : message).slice(0, 500);
}

function describeSchedule(schedule: number[]): string {
  const total = schedule.reduce((a, b) => a + b, 0);
  if (total >= 3_600_000) return `${Math.round(total / 360_000) / 10} hours`;
  if (total >= 60_000) return `${Math.round(total / 6_000) / 10} minutes`;
  return `${total} ms`;
}
