/**
 * Slows down guessing at POST /oauth/token: after `limit` failed attempts within `windowMs` for one
 * key (a client id, a caller's address), further attempts for that key are refused until the
 * window has passed. Successes clear a key. Counts live in this process: each replica throttles on
 * its own, which bounds guessing to (replicas × limit) per window.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until `key` may try again, or 0 when it may try now. */
  retryAfterMs(key: string): number {
    const entry = this.failures.get(key);
    if (!entry) return 0;
    const left = entry.resetAt - this.now();
    if (left <= 0) {
      this.failures.delete(key);
      return 0;
    }
    return entry.count >= this.limit ? left : 0;
  }

  fail(key: string): void {
    const now = this.now();
    const entry = this.failures.get(key);
    if (entry && entry.resetAt > now) {
      entry.count++;
      return;
    }
    // A flood of distinct keys must not grow memory without bound: forget the oldest first.
    if (this.failures.size >= this.maxKeys) this.failures.delete(this.failures.keys().next().value!);
    this.failures.delete(key);
    this.failures.set(key, { count: 1, resetAt: now + this.windowMs });
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }
}
