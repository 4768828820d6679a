import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Database } from '../store/db.js';

/** NOTIFY channel: a replica says it is alive, or that a provider told an account to slow down. */
export const GOVERNOR_CHANNEL = 'portico_governor';
const HEARTBEAT_MS = 10_000;
/** A replica not heard from for this long is gone. */
const GONE_MS = 3 * HEARTBEAT_MS;

/**
 * The replicas sharing one database, known by heartbeats over NOTIFY (no table, no polling), and
 * the 429s one of them met, passed to the others. The embedded store has one process: itself.
 */
export class ReplicaPresence {
  readonly id = randomBytes(6).toString('hex');
  private readonly seen = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly onSlowDown: (accountId: string, retryAfterMs: number | undefined) => void,
    private readonly logger?: Logger,
  ) {}

  async start(): Promise<void> {
    await this.db.listen(GOVERNOR_CHANNEL, (payload) => this.heard(payload));
    if (this.db.kind !== 'postgres') return;
    const beat = () =>
      void this.db
        .notify(GOVERNOR_CHANNEL, JSON.stringify({ r: this.id }))
        .catch((err: unknown) => this.logger?.warn({ err }, 'replica heartbeat failed'));
    beat();
    this.timer = setInterval(beat, HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Live replicas, this one included. */
  count(): number {
    const now = Date.now();
    let live = 1;
    for (const [id, at] of this.seen) {
      if (now - at > GONE_MS) this.seen.delete(id);
      else if (id !== this.id) live++;
    }
    return live;
  }

  /** Tells the other replicas that the provider asked this account to slow down. */
  shareSlowDown(accountId: string, retryAfterMs: number | undefined): void {
    if (this.db.kind !== 'postgres') return;
    void this.db
      .notify(GOVERNOR_CHANNEL, JSON.stringify({ r: this.id, a: accountId, ms: retryAfterMs }))
      .catch((err: unknown) => this.logger?.warn({ err }, 'sharing a slow-down failed'));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private heard(payload: string): void {
    let message: { r?: unknown; a?: unknown; ms?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (typeof message.r !== 'string' || message.r === this.id) return;
    this.seen.set(message.r, Date.now());
    if (typeof message.a === 'string' && typeof message.ms === 'number')
      this.onSlowDown(message.a, message.ms);
  }
}
