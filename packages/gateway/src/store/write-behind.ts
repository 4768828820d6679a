import type { Logger } from 'pino';

/** Rows are written this often, or sooner when this many are waiting. */
const FLUSH_MS = 200;
const FLUSH_ROWS = 200;
/** While the database is unreachable, at most this many rows wait; older ones are dropped. */
const MAX_PENDING = 10_000;

/**
 * Records written behind the request that made them (execution records, audit entries): rows wait
 * in memory and go in one statement every 200 ms, so a call never waits for its own INSERT. Reads
 * flush first; a graceful stop flushes; a failed write keeps its rows for the next one, so only a
 * crash (or a database away for 10,000 rows) loses any.
 */
export class WriteBehind<T> {
  private pending: T[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: {
      /** Writes one batch, all or nothing. */
      write: (batch: T[]) => Promise<void>;
      /** Work on each row done before its first write, off the request (masking, summaries). */
      prepare?: (row: T) => void;
      logger: Logger;
      /** What the rows are, for the log line of a failed write. */
      what: string;
    },
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  push(row: T): void {
    this.pending.push(row);
    if (this.pending.length >= FLUSH_ROWS) void this.flush();
  }

  /** Writes every waiting row; concurrent calls queue behind one another. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (!this.pending.length) return;
      const batch = this.pending;
      this.pending = [];
      if (this.options.prepare) for (const row of batch) this.options.prepare(row);
      try {
        await this.options.write(batch);
      } catch (error) {
        // Kept for the next flush: a database blip must not lose the records.
        this.pending = batch.concat(this.pending);
        if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
        this.options.logger.warn(
          { err: error, rows: batch.length },
          `could not write ${this.options.what} yet`,
        );
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
