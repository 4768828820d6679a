import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { quoteIdent } from './quote.js';

export interface HeartbeatOptions {
  /** How often the listening connection proves it still carries notifications. */
  intervalMs: number;
  /** How long one proof may take before the connection is presumed dead. */
  timeoutMs: number;
}

export const DEFAULT_HEARTBEAT: HeartbeatOptions = { intervalMs: 2_000, timeoutMs: 3_000 };

/**
 * TCP keepalive after this much idleness, on every connection: traffic keeps NAT and firewall state
 * alive on the way, and the operating system eventually fails a connection whose peer is gone.
 */
export const KEEPALIVE_IDLE_MS = 10_000;

/** Time to open the listening connection, as for the pool's connections. */
const CONNECT_TIMEOUT_MS = 5_000;

type Handler = (payload: string) => void;
/** Channel → its handlers. */
export type Handlers = Map<string, Set<Handler>>;

export function addHandler(handlers: Handlers, channel: string, handler: Handler): void {
  const set = handlers.get(channel) ?? new Set();
  set.add(handler);
  handlers.set(channel, set);
}

export interface NotificationListenerDeps {
  Client: typeof pg.Client;
  /** Connection settings (URL, search_path); keepalive and timeouts are added here. */
  config: pg.ClientConfig;
  heartbeat: HeartbeatOptions;
  logger?: Logger | undefined;
  /**
   * Called when the listening connection fell silent: every connection opened before `since` went
   * over the same network path and is presumably as dead.
   */
  onSilent(since: number): void;
}

/**
 * The one PostgreSQL connection that LISTENs, and whether it can be trusted.
 *
 * A connection can die half-open (lost NAT or firewall state, a failover during a partition): the
 * server's end is gone but this end never hears so, and a quiet LISTEN connection would wait for
 * notifications forever. So every `intervalMs` the listener NOTIFYs a channel of its own over that
 * same connection and must hear it back within `timeoutMs`; the round trip covers the socket both
 * ways and the delivery of notifications. A miss, an error or the end of the connection drops it:
 * its socket is destroyed and it reconnects with backoff (0.25 s doubling to 10 s), LISTENs again
 * and tells the caches that notifications may have been missed.
 */
export class NotificationListener {
  private readonly handlers: Handlers = new Map();
  private readonly missed: Array<() => void> = [];
  /** Heard only by this process: each replica proves its own connection. */
  private readonly beatChannel = `portico_heartbeat_${randomBytes(6).toString('hex')}`;
  private readonly beatTimer: NodeJS.Timeout;
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private beat: { payload: string; deadline: NodeJS.Timeout } | undefined;
  private beats = 0;
  /** When the current connection last proved itself. */
  private lastBeatAt = 0;
  /** Since when notifications may have been missed; undefined while none can have been. */
  private lostAt: number | undefined;
  private attempt = 0;
  private closed = false;

  constructor(private readonly deps: NotificationListenerDeps) {
    this.beatTimer = setInterval(() => this.sendBeat(), deps.heartbeat.intervalMs);
    this.beatTimer.unref();
  }

  /**
   * True while the connection is up and proved itself recently. Anything else (reconnecting, or a
   * heartbeat overdue) means a notification may go unheard, so NOTIFY-kept caches must not be trusted.
   */
  healthy(): boolean {
    const { intervalMs, timeoutMs } = this.deps.heartbeat;
    return this.client !== undefined && Date.now() - this.lastBeatAt <= intervalMs + timeoutMs;
  }

  async listen(channel: string, handler: Handler): Promise<void> {
    addHandler(this.handlers, channel, handler);
    if (!this.client) await this.connect();
    // (Again when a connection made meanwhile listed its channels before this one was added.)
    const client = this.client;
    if (client) await this.withinDeadline(client, client.query(`LISTEN ${quoteIdent(channel)}`));
  }

  onNotificationsMissed(handler: () => void): void {
    this.missed.push(handler);
  }

  /** The database answers again: listen again now rather than at the next backoff step. */
  retryNow(): void {
    if (this.lostAt !== undefined && !this.connecting && !this.closed) this.connect().catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.beatTimer);
    this.clearBeat();
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // A polite goodbye, unless the connection is dead and would never answer it.
    const timer = setTimeout(() => destroySocket(client), this.deps.heartbeat.timeoutMs);
    await client.end().catch(() => {});
    clearTimeout(timer);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const { Client, config } = this.deps;
    const client = new Client({
      ...config,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    });
    client.on('notification', (msg) => this.deliver(client, msg.channel, msg.payload ?? ''));
    client.on('error', (err) => this.drop(client, 'error', err));
    client.on('end', () => this.drop(client, 'ended'));
    try {
      await client.connect();
      await this.withinDeadline(
        client,
        (async () => {
          await client.query(`LISTEN ${quoteIdent(this.beatChannel)}`);
          for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
        })(),
      );
    } catch (error) {
      destroySocket(client);
      throw error;
    }
    if (this.closed) {
      destroySocket(client);
      return;
    }
    this.client = client;
    this.lastBeatAt = Date.now();
    this.attempt = 0;
    if (this.lostAt !== undefined) {
      this.deps.logger?.info({ down_ms: Date.now() - this.lostAt }, 'database listener reconnected');
      this.lostAt = undefined;
      for (const handler of this.missed) handler();
    }
  }

  private deliver(client: pg.Client, channel: string, payload: string): void {
    if (channel !== this.beatChannel) {
      for (const handler of this.handlers.get(channel) ?? []) handler(payload);
      return;
    }
    if (client === this.client && this.beat?.payload === payload) {
      this.clearBeat();
      this.lastBeatAt = Date.now();
    }
  }

  private sendBeat(): void {
    const client = this.client;
    // An unanswered beat has its own deadline; one at a time.
    if (!client || this.beat) return;
    const sentAt = Date.now();
    const payload = String(++this.beats);
    const deadline = setTimeout(() => {
      if (client !== this.client) return;
      this.deps.logger?.warn(
        { timeout_ms: this.deps.heartbeat.timeoutMs, silent_ms: Date.now() - this.lastBeatAt },
        'database listener missed its heartbeat; presuming the connection dead',
      );
      this.deps.onSilent(sentAt);
      this.drop(client, 'silent');
    }, this.deps.heartbeat.timeoutMs);
    deadline.unref();
    this.beat = { payload, deadline };
    // Failures end the connection too, and are handled there.
    client.query('SELECT pg_notify($1, $2)', [this.beatChannel, payload]).catch(() => {});
  }

  private clearBeat(): void {
    if (this.beat) clearTimeout(this.beat.deadline);
    this.beat = undefined;
  }

  /** Forgets the current connection and reconnects; later events of an old connection are ignored. */
  private drop(client: pg.Client, reason: 'error' | 'ended' | 'silent', err?: Error): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.clearBeat();
    destroySocket(client);
    if (this.lostAt === undefined) {
      this.lostAt = Date.now();
      this.deps.logger?.warn({ reason, err }, 'database listener lost; notifications may be missed');
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const delay = Math.min(10_000, 250 * 2 ** this.attempt++);
    setTimeout(() => {
      if (this.closed || this.client) return;
      this.connect().catch(() => this.scheduleReconnect());
    }, delay).unref();
  }

  /** A statement on `client` that has not finished in time means the connection is dead: drop it. */
  private async withinDeadline<T>(client: pg.Client, work: Promise<T>): Promise<T> {
    // Destroying the socket fails the statement, which rejects `work`.
    const timer = setTimeout(() => destroySocket(client), this.deps.heartbeat.timeoutMs);
    try {
      return await work;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Closes a connection at once, without the goodbye a dead peer would never answer; pg then fails
 * whatever statement was waiting on it.
 */
export function destroySocket(client: pg.ClientBase): void {
  (client as pg.Client).connection.stream.destroy();
}
