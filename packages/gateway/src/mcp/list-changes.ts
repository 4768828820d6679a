import type { Logger } from 'pino';

/** One open MCP event stream: how to read what its tool list depends on, and whom to tell. */
interface Watch {
  state: () => Promise<string>;
  last: string;
  changed: () => void;
}

/**
 * Tells connected MCP clients when their tool list changed: an end user authorized an account
 * (through portico_authorize or any link), or one was disconnected or expired, or a remote MCP
 * server behind one of its connections changed its tools. Woken by the event log's notification
 * from any replica and by the tool registry's changes on this one; each open stream then re-reads the state its list depends
 * on and is told only when it differs, so unrelated events cost one read per stream and no message.
 */
export class ToolListChanges {
  private readonly watches = new Set<Watch>();
  private pending: Promise<void> | undefined;
  private again = false;

  constructor(private readonly logger: Logger) {}

  /** Re-reads every open stream's state (coalescing wake-ups that arrive meanwhile). */
  wake(): void {
    if (this.pending) {
      this.again = true;
      return;
    }
    this.pending = this.check().finally(() => {
      this.pending = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Watches until the returned function is called. */
  async watch(state: () => Promise<string>, changed: () => void): Promise<() => void> {
    const watch: Watch = { state, last: await state(), changed };
    this.watches.add(watch);
    return () => this.watches.delete(watch);
  }

  get size(): number {
    return this.watches.size;
  }

  private async check(): Promise<void> {
    for (const watch of [...this.watches]) {
      try {
        const now = await watch.state();
        if (now === watch.last || !this.watches.has(watch)) continue;
        watch.last = now;
        watch.changed();
      } catch (error) {
        this.logger.warn({ err: error }, 'MCP tool list state could not be read');
      }
    }
  }
}
