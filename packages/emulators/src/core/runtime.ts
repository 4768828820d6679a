import type { Counters } from './counters.js';
import type { OAuthStore } from './oauth-store.js';
import type { EmulatorModule, ProviderContext } from './types.js';

// What the OAuth endpoints need of the host, apart from host.ts: the host builds them into each
// module's context (ctx.serveOAuth), so they must not import it.

/** One hosted emulator: its module, OAuth bookkeeping, live state and the context its routes use. */
export interface ModuleRuntime {
  module: EmulatorModule;
  store: OAuthStore;
  ctx: ProviderContext;
  state: unknown;
}

/** The host's clock and counters, as the token endpoint uses them. */
export interface OAuthHost {
  readonly clock: () => number;
  readonly counters: Counters;
  /** Resolves once the latest change to grants and tokens is kept. */
  persisted(): Promise<void>;
}
