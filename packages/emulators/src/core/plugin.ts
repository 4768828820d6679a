import formbody from '@fastify/formbody';
import type { FastifyPluginAsync } from 'fastify';
import { PAGE_HEADERS } from './consent-page.js';
import { registerControlRoutes } from './control-routes.js';
import { requestHook } from './fault-hook.js';
import { type EmulatorControl, EmulatorHost } from './host.js';
import { loadEmulators } from './modules.js';
import { registerOAuthRoutes } from './oauth-routes.js';
import type { EmulatorKey, EmulatorModule } from './types.js';

export interface EmulatorsPluginOptions {
  /** Which emulators to host (default: all of them). Module objects host custom or test emulators. */
  modules?: Array<EmulatorKey | EmulatorModule>;
  /** Serve the `/_emulator` control API (default true). */
  control?: boolean;
  /** External prefix the plugin is reachable under, for publicBase (default: the Fastify prefix it is registered with). */
  mountPrefix?: string;
  /** Access-token lifetime per emulator; null = never expire. Default: each provider's. */
  tokenTtlSeconds?: Partial<Record<EmulatorKey, number | null>>;
  clock?: () => number;
  /** Keeps grants and tokens across restarts: see HostOptions.onOAuthChange. */
  onOAuthChange?: () => Promise<void>;
  /** Receives the in-process control handle once the emulators are set up. */
  onControl?: (control: EmulatorControl) => void;
}

/** Uploads reach ~1 GiB; provider routes set their own limits, this covers the rest of the scope. */
const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * Hosts the emulators in one Fastify scope: each provider under its prefix with its OAuth server
 * and API routes, plus the `/_emulator` control API. Encapsulated, so a host app (the gateway's
 * sandbox) can mount it under any prefix.
 */
export const emulatorsPlugin: FastifyPluginAsync<EmulatorsPluginOptions> = async (app, opts) => {
  const modules = await loadEmulators(opts.modules);
  const host = new EmulatorHost(modules, {
    clock: opts.clock,
    tokenTtlSeconds: opts.tokenTtlSeconds,
    ...(opts.onOAuthChange ? { onOAuthChange: opts.onOAuthChange } : {}),
  });
  host.routePrefix = app.prefix;
  host.mountPrefix = (opts.mountPrefix ?? app.prefix).replace(/\/+$/, '');
  // A host app (the gateway) may already parse forms; a second parser for the same type would throw.
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) {
    await app.register(formbody, { bodyLimit: DEFAULT_BODY_LIMIT });
  }

  // Consent and error pages, and Drive's HTML exports: any HTML this scope answers.
  app.addHook('onSend', (_req, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) reply.headers(PAGE_HEADERS);
    done(null, payload);
  });

  for (const runtime of host.runtimes.values()) {
    await app.register(
      async (scope) => {
        scope.addHook('onRequest', requestHook(host, runtime));
        scope.setNotFoundHandler((req, reply) => runtime.module.sendNotFound(reply, req));
        registerOAuthRoutes(scope, runtime, host);
        await runtime.module.registerRoutes(scope, runtime.ctx, () => runtime.state);
      },
      { prefix: runtime.module.prefix },
    );
  }

  if (opts.control !== false) {
    await app.register(async (scope) => registerControlRoutes(scope, host.control), { prefix: '/_emulator' });
  }
  opts.onControl?.(host.control);
};
