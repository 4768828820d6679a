import type { EmulatorControl, EmulatorKey } from '@portico/emulators';
import { Problem } from '../errors/problem.js';
import type { SandboxLocation } from '../oauth/endpoints.js';
import type { ProviderDefinition } from '../providers/catalog.js';
import type { ConnectionRow } from '../store/connections.js';

export const SANDBOX_PREFIX = '/sandbox';

/**
 * Sandbox mode: sandbox connections talk to provider emulators, either mounted inside the gateway
 * under /sandbox or a standalone emulator server (PORTICO_SANDBOX_URL). Their OAuth clients are
 * registered at the emulator automatically.
 */
export interface Sandbox {
  readonly enabled: boolean;
  location(): SandboxLocation | undefined;
  /**
   * Registers the connection's OAuth client at its emulator, and the provider's definition where the
   * definitions emulator plays it (API-key providers have no client; their definition is enough).
   */
  registerClient(
    connection: ConnectionRow,
    provider: ProviderDefinition,
    clientSecret: string,
    redirectUri: string,
  ): Promise<void>;
  /**
   * Registers the connection's client unless the emulator knows its id: emulators keep clients in
   * memory, so after a restart the client must be known again before a refresh can be judged.
   */
  ensureClient(
    connection: ConnectionRow,
    provider: ProviderDefinition,
    clientSecret: string,
    redirectUri: string,
  ): Promise<void>;
  /** Rehearsing failures: expires the access tokens the connection's accounts hold; how many. */
  expireTokens(connection: ConnectionRow, provider: ProviderDefinition): Promise<number>;
  /** Revokes the connection's grants at the emulator (their next refresh is refused); how many. */
  revokeGrants(connection: ConnectionRow, provider: ProviderDefinition): Promise<number>;
  /** Re-seeds every emulator's data and forgets its tokens and grants (clients stay). */
  reset(): Promise<void>;
  /**
   * The in-process emulators (mounted mode only), for tests and demos: there once `ready()` has
   * resolved (they start at the first request that needs them).
   */
  readonly control?: EmulatorControl;
  /** Starts the in-process emulators and resolves once they serve (mounted mode only). */
  ready?(): Promise<void>;
}

const off = async (): Promise<never> => {
  throw new Problem('service_unavailable', 'Sandbox mode is off (PORTICO_SANDBOX=false).', {
    retryable: false,
  });
};

export function disabledSandbox(): Sandbox {
  return {
    enabled: false,
    location: () => undefined,
    async registerClient() {
      throw new Error('sandbox mode is off');
    },
    async ensureClient() {},
    expireTokens: off,
    revokeGrants: off,
    reset: off,
  };
}

/** A standalone emulator server (npm run emulators) used as the sandbox. */
export function remoteSandbox(rootUrl: string): Sandbox {
  const sandbox: Sandbox = {
    enabled: true,
    location: () => ({ publicBase: rootUrl, internalBase: rootUrl }),
    async registerClient(connection, provider, clientSecret, redirectUri) {
      const post = async (route: string, body: unknown) => {
        const res = await fetch(`${rootUrl}/_emulator${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`emulator refused ${route}: HTTP ${res.status}`);
      };
      if (provider.emulator === 'definitions') await post('/definitions', provider.source);
      if (!provider.oauth) return;
      await post('/clients', {
        emulator: emulatorOf(provider),
        ...(provider.emulator === 'definitions' ? { provider: provider.key } : {}),
        client_id: connection.client_id,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
      });
    },
    async ensureClient(connection, provider, clientSecret, redirectUri) {
      const res = await fetch(`${rootUrl}/_emulator/clients`, { signal: AbortSignal.timeout(10_000) });
      const all = (res.ok ? await res.json() : {}) as Record<string, Array<{ client_id: string }>>;
      const known = all[emulatorOf(provider)]?.some((c) => c.client_id === connection.client_id);
      if (!known) await sandbox.registerClient(connection, provider, clientSecret, redirectUri);
    },
    async expireTokens(connection, provider) {
      const filter = grantFilter(connection, provider);
      const res = await control('/tokens/expire', {
        emulator: emulatorOf(provider),
        ...(filter.clientId ? { client_id: filter.clientId } : { provider: filter.provider }),
      });
      return (res as { expired: number }).expired;
    },
    async revokeGrants(connection, provider) {
      const filter = grantFilter(connection, provider);
      const res = await control('/grants/revoke', {
        emulator: emulatorOf(provider),
        ...(filter.clientId ? { client_id: filter.clientId } : { provider: filter.provider }),
      });
      return (res as { revoked: number }).revoked;
    },
    async reset() {
      await control('/reset', {});
    },
  };
  /** A call to the standalone emulators' control API. */
  async function control(route: string, body: Record<string, unknown>): Promise<unknown> {
    const res = await fetch(`${rootUrl}/_emulator${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) {
      throw new Problem('upstream_error', `The sandbox emulators refused ${route}: HTTP ${res.status}.`);
    }
    return res.json();
  }
  return sandbox;
}

export function emulatorOf(provider: ProviderDefinition): EmulatorKey {
  return provider.emulator;
}

/**
 * What of the emulator's grants a connection owns: its OAuth client's, or for an API-key provider
 * (no client) the keys used with that provider.
 */
export function grantFilter(
  connection: ConnectionRow,
  provider: ProviderDefinition,
): { clientId?: string; provider?: string } {
  return provider.oauth ? { clientId: connection.client_id } : { provider: provider.key };
}
