import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type EmulatorControl, type EmulatorKey, emulatorsPlugin } from '@portico/emulators';
import type { FastifyInstance } from 'fastify';
import { Problem } from '../errors/problem.js';
import type { SandboxLocation } from '../oauth/endpoints.js';
import { getProvider } from '../providers/catalog.js';
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
  registerClient(connection: ConnectionRow, clientSecret: string, redirectUri: string): Promise<void>;
  /**
   * Registers the connection's client unless the emulator knows its id: emulators keep clients in
   * memory, so after a restart the client must be known again before a refresh can be judged.
   */
  ensureClient(connection: ConnectionRow, clientSecret: string, redirectUri: string): Promise<void>;
  /** Rehearsing failures: expires the access tokens the connection's accounts hold; how many. */
  expireTokens(connection: ConnectionRow): Promise<number>;
  /** Revokes the connection's grants at the emulator (their next refresh is refused); how many. */
  revokeGrants(connection: ConnectionRow): Promise<number>;
  /** Re-seeds every emulator's data and forgets its tokens and grants (clients stay). */
  reset(): Promise<void>;
  /** The in-process emulators (mounted mode only), for tests and demos. */
  readonly control?: EmulatorControl;
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

/**
 * The sandbox the configuration asks for, known before the app exists; the embedded emulators join
 * it when `mount` registers them on the app (nothing calls the sandbox before that).
 */
export function configuredSandbox(config: {
  sandbox: boolean;
  sandboxUrl?: string | undefined;
  publicUrl: string;
  tls?: unknown;
}): { sandbox: Sandbox; mount(app: FastifyInstance): Promise<void> } {
  if (!config.sandbox) return { sandbox: disabledSandbox(), mount: async () => {} };
  if (config.sandboxUrl) return { sandbox: remoteSandbox(config.sandboxUrl), mount: async () => {} };
  let mounted: Sandbox | undefined;
  const inner = (): Sandbox => {
    if (!mounted) throw new Error('the sandbox emulators are not mounted yet');
    return mounted;
  };
  return {
    sandbox: {
      enabled: true,
      get control() {
        return mounted?.control;
      },
      location: () => mounted?.location(),
      registerClient: (...args) => inner().registerClient(...args),
      ensureClient: (...args) => inner().ensureClient(...args),
      expireTokens: (connection) => inner().expireTokens(connection),
      revokeGrants: (connection) => inner().revokeGrants(connection),
      reset: () => inner().reset(),
    },
    async mount(app) {
      mounted = await mountSandbox(app, config.publicUrl, { tls: Boolean(config.tls) });
    },
  };
}

/**
 * Emulators inside this gateway; `internalBase` is known once the server listens. With `tls` the
 * gateway's port answers cleartext with `tls_required` and its certificate names the public host,
 * not 127.0.0.1: the gateway then reaches its emulators through a second, cleartext listener bound
 * to loopback only (an ephemeral port), served by the same routes.
 */
export async function mountSandbox(
  app: FastifyInstance,
  publicUrl: string,
  opts: { tls?: boolean } = {},
): Promise<Sandbox> {
  let control: EmulatorControl | undefined;
  let loopback: Server | undefined;
  if (opts.tls) {
    app.addHook('onReady', async () => {
      const server = createServer((req, res) => {
        // Only the emulators are served here: the rest of the gateway is reached over TLS.
        if (!req.url?.startsWith(`${SANDBOX_PREFIX}/`)) {
          res.writeHead(404).end();
          return;
        }
        app.routing(req, res);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      server.unref();
      loopback = server;
    });
    app.addHook('onClose', async () => {
      loopback?.closeAllConnections();
      await new Promise((resolve) => (loopback ? loopback.close(resolve) : resolve(undefined)));
    });
  }
  const { host, protocol } = new URL(publicUrl);
  await app.register(async (scope) => {
    // The gateway calls its emulators over loopback, but the links they hand out (downloads, upload
    // sessions, next pages, redirects) go to callers elsewhere: they must name the public URL.
    scope.addHook('onRequest', (req, _reply, done) => {
      req.headers['x-forwarded-host'] = host;
      req.headers['x-forwarded-proto'] = protocol.slice(0, -1);
      done();
    });
    await scope.register(emulatorsPlugin, {
      prefix: SANDBOX_PREFIX,
      mountPrefix: SANDBOX_PREFIX,
      control: false,
      onControl: (c) => {
        control = c;
      },
    });
  });
  if (!control) throw new Error('sandbox emulators did not start');
  const handle = control;
  const register = (connection: ConnectionRow, clientSecret: string, redirectUri: string) =>
    handle.registerClient(emulatorOf(connection), {
      clientId: connection.client_id,
      clientSecret,
      redirectUris: [redirectUri],
    });
  return {
    enabled: true,
    control: handle,
    location() {
      const address = (loopback ?? app.server).address() as AddressInfo | string | null;
      const port = typeof address === 'object' && address ? address.port : undefined;
      return {
        publicBase: `${publicUrl}${SANDBOX_PREFIX}`,
        // The gateway reaches its own emulators over loopback, whatever the public URL is.
        internalBase: port ? `http://127.0.0.1:${port}${SANDBOX_PREFIX}` : `${publicUrl}${SANDBOX_PREFIX}`,
      };
    },
    async registerClient(connection, clientSecret, redirectUri) {
      register(connection, clientSecret, redirectUri);
    },
    async ensureClient(connection, clientSecret, redirectUri) {
      const known = handle.clients(emulatorOf(connection)).some((c) => c.clientId === connection.client_id);
      if (!known) register(connection, clientSecret, redirectUri);
    },
    async expireTokens(connection) {
      return handle.expireAccessTokens(emulatorOf(connection), { clientId: connection.client_id });
    },
    async revokeGrants(connection) {
      return handle.revokeGrants(emulatorOf(connection), { clientId: connection.client_id });
    },
    async reset() {
      handle.reset();
    },
  };
}

/** A standalone emulator server (npm run emulators) used as the sandbox. */
export function remoteSandbox(rootUrl: string): Sandbox {
  const sandbox: Sandbox = {
    enabled: true,
    location: () => ({ publicBase: rootUrl, internalBase: rootUrl }),
    async registerClient(connection, clientSecret, redirectUri) {
      const res = await fetch(`${rootUrl}/_emulator/clients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          emulator: emulatorOf(connection),
          client_id: connection.client_id,
          client_secret: clientSecret,
          redirect_uris: [redirectUri],
        }),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`emulator refused the client registration: HTTP ${res.status}`);
    },
    async ensureClient(connection, clientSecret, redirectUri) {
      const res = await fetch(`${rootUrl}/_emulator/clients`, { signal: AbortSignal.timeout(10_000) });
      const all = (res.ok ? await res.json() : {}) as Record<string, Array<{ client_id: string }>>;
      const known = all[emulatorOf(connection)]?.some((c) => c.client_id === connection.client_id);
      if (!known) await sandbox.registerClient(connection, clientSecret, redirectUri);
    },
    async expireTokens(connection) {
      const res = await control('/tokens/expire', {
        emulator: emulatorOf(connection),
        client_id: connection.client_id,
      });
      return (res as { expired: number }).expired;
    },
    async revokeGrants(connection) {
      const res = await control('/grants/revoke', {
        emulator: emulatorOf(connection),
        client_id: connection.client_id,
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

function emulatorOf(connection: ConnectionRow): EmulatorKey {
  return getProvider(connection.provider).emulator;
}
