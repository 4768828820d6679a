import type { IncomingMessage, ServerResponse } from 'node:http';
import { Problem } from '../errors/problem.js';
import { lingeringClose } from './errors.js';

interface Watched {
  req: IncomingMessage;
  /** When the current window began, and the socket's bytes read then. */
  since: number;
  bytes: number;
  slow(): void;
}

/**
 * Holds streamed request bodies (large proxied uploads, uploads to the sandbox) to a minimum
 * transfer rate: each must bring `minBytesPerSec` on average over every window of `windowMs`, or
 * `slow` is called. A pause alone would let a body trickle in a byte at a time for ever, holding a
 * socket and, for the proxy, an upstream request. Every body is checked on one timer, which runs
 * only while some are watched: nothing per request but an entry in a set.
 */
export class BodyRates {
  private readonly watched = new Set<Watched>();
  private readonly minBytesPerWindow: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly minBytesPerSec: number,
    readonly windowMs: number,
  ) {
    this.minBytesPerWindow = (minBytesPerSec * windowMs) / 1000;
  }

  /** Watches `req` until its body is complete; `slow` is called once if it falls behind. */
  watch(req: IncomingMessage, slow: () => void): void {
    this.watched.add({ req, since: performance.now(), bytes: req.socket.bytesRead, slow });
    // Checked often enough that a window ends at most a second (or half a window) late.
    this.timer ??= setInterval(() => this.check(), Math.min(1000, this.windowMs / 2)).unref();
  }

  /** What a body that fell behind is told (when an answer can still reach it). */
  tooSlow(): Problem {
    return new Problem(
      'request_timeout',
      `The request body arrived slower than ${this.minBytesPerSec} bytes/s over ${this.windowMs} ms; send it again, faster.`,
    );
  }

  private check(): void {
    const now = performance.now();
    for (const entry of this.watched) {
      const { req } = entry;
      // Forgotten here rather than through listeners on each request.
      if (req.complete || req.destroyed || req.socket.destroyed) {
        this.watched.delete(entry);
        continue;
      }
      const read = req.socket.bytesRead;
      // The socket's bytes count, not the body's: listening for data would consume the body.
      // A socket the gateway paused (a provider or emulator not reading yet) is not the client's
      // doing: its window starts again.
      if (req.socket.isPaused()) {
        entry.since = now;
        entry.bytes = read;
      } else if (now - entry.since >= this.windowMs) {
        if (read - entry.bytes < this.minBytesPerWindow) {
          this.watched.delete(entry);
          entry.slow();
        } else {
          entry.since = now;
          entry.bytes = read;
        }
      }
    }
    if (!this.watched.size) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/**
 * An answer given before its request's body is in (a 401 from a route that never reads it, a
 * provider's early refusal, a timeout) ends the exchange: the connection is closed the lingering
 * way, so the client reads the answer while what it still sends is dropped for a moment, instead of
 * Node reading the rest for as long as it trickles in to reuse the connection. The one exception is
 * a 413 (see answerError in ./errors.ts), whose body is read and dropped so the connection can stay:
 * the body deadline (or the minimum rate) still bounds that.
 */
export function closeIfAnsweredEarly(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (req.complete) return;
    // A 413 keeps the connection: the rest of the body is read and dropped (a provider's 413 relayed
    // by the proxy included, which nothing else would read), bounded by the deadline and the rate.
    if (res.statusCode === 413) req.resume();
    else lingeringClose(req.socket);
  });
}
