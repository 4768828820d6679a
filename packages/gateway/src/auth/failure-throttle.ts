import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Counts failed attempts per key (a client id, a caller's address, the pair of both) within a
 * window: after `limit` failures the key is throttled until the window has passed. Callers consult
 * it only once an attempt has proved wrong, so a throttled key never keeps out the one who knows
 * the secret (a guesser must not be able to lock the owner out). Counts live in this process: each
 * replica throttles on its own.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until `key` is no longer throttled, or 0 when it is not. */
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

/**
 * How long a wrong answer is held back once its key is throttled. Only wrong answers wait, so the
 * right secret is never slowed; a guesser gets its verdicts no faster than one a second per
 * connection.
 */
export const WRONG_ANSWER_DELAY_MS = 1000;

export function holdBackWrongAnswer(): Promise<void> {
  return sleep(WRONG_ANSWER_DELAY_MS);
}

/**
 * A key made of text the caller chose (a client id, a username): cut short, so a flood of huge
 * values cannot fill memory. Real ids and usernames are far shorter, so none of them share a key.
 */
export function throttleKey(...parts: string[]): string {
  return parts.map((p) => p.slice(0, 128)).join('\n');
}
