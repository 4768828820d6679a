import type { OAuthSnapshots } from '@portico/emulators';
import type { Logger } from 'pino';
import type { Keyring } from '../secrets/keyring.js';
import { SANDBOX_STATE } from '../secrets/sealed-columns.js';
import type { Database } from '../store/db.js';
import { readSandboxState, writeSandboxState } from '../store/sandbox-state.js';

/** The embedded emulators' state document (one per gateway database). */
const EMBEDDED = 'embedded';
const AT = { ...SANDBOX_STATE, rowId: EMBEDDED };

/**
 * Keeps the embedded emulators' grants and tokens in the gateway's store (the data directory's
 * database, or PostgreSQL), sealed like every stored token: without it a restart forgot every
 * token the sandbox had issued and each sandbox account went EXPIRED at its next refresh.
 */
export class SandboxState {
  private queued: Promise<void> | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly keyring: Keyring,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<OAuthSnapshots | undefined> {
    const sealed = await readSandboxState(this.db, EMBEDDED);
    if (sealed === undefined) return undefined;
    try {
      return JSON.parse(this.keyring.open(sealed, AT)) as OAuthSnapshots;
    } catch (err) {
      // A document sealed under a key no longer configured: start afresh rather than not at all.
      this.logger.warn({ err }, 'the stored sandbox state cannot be read; the sandbox starts empty');
      return undefined;
    }
  }

  /**
   * Writes the state `read` gives once the writes already running are done. Changes that arrive
   * meanwhile share one write (the latest state covers them all); never rejects.
   */
  save(read: () => OAuthSnapshots): Promise<void> {
    if (this.queued) return this.queued;
    const next = this.chain.then(async () => {
      this.queued = undefined;
      try {
        const sealed = this.keyring.seal(JSON.stringify(read()), AT);
        await writeSandboxState(this.db, EMBEDDED, sealed);
      } catch (err) {
        this.logger.warn(
          { err },
          'the sandbox state could not be stored; a restart may forget its latest tokens',
        );
      }
    });
    this.queued = next;
    this.chain = next;
    return next;
  }

  /** Resolves once every write asked for has finished (before the store closes). */
  idle(): Promise<void> {
    return this.chain;
  }
}
