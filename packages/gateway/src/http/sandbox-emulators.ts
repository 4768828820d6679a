import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmulatorControl } from '@portico/emulators';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import { emulatorOf, grantFilter, SANDBOX_PREFIX, type Sandbox } from '../sandbox/sandbox.js';
import type { SandboxState } from '../sandbox/state.js';
import { REQUEST_ID_LOG_LABEL, ROUTER_OPTIONS } from './app.js';
import { answerError, registerProblemHandlers } from './errors.js';

export interface EmbeddedSandboxOptions {
  publicUrl: string;
  /** The gateway serves TLS: its emulators are then reached through a loopback listener. */
  tls: boolean;
  logger: Logger;
  /** The gateway's body limit, for emulator routes that set none of their own. */
  bodyLimitBytes: number;
  /** Where the emulators' grants and tokens outlive a restart. */
  state: SandboxState;
}

/**
 * The provider emulators inside this gateway, under /sandbox. They are a Fastify application of
 * their own, built at the first request or sandbox operation that needs them and reached through
 * one catch-all route: loading, seeding and routing four providers was about a seventh of a
 * restart and 10–13 MiB of resident memory, which a gateway that never uses its sandbox (or not
 * yet) does without. The gateway's route still owns what every request gets (request id, body
 * deadline, access log, metrics); the emulators' application answers in the providers' wire
 * format, and in problem+json where the gateway's own would (an unknown path, an error no
 * emulator handles).
 *
 * With `tls` the gateway's port answers cleartext with `tls_required` and its certificate names the
 * public host, not 127.0.0.1: the gateway then reaches its emulators through a second, cleartext
 * listener bound to loopback only (an ephemeral port), served by the same routes.
 */
export function embeddedSandbox(options: EmbeddedSandboxOptions): {
  sandbox: Sandbox;
  mount(app: FastifyInstance): Promise<void>;
} {
  let gateway: FastifyInstance | undefined;
  let loopback: Server | undefined;
  let emulators: Promise<{ app: FastifyInstance; control: EmulatorControl }> | undefined;
  let control: EmulatorControl | undefined;
  const requestIds = new WeakMap<IncomingMessage, string>();

  const start = () => {
    emulators ??= buildEmulators(options, requestIds).then(
      (built) => {
        control = built.control;
        return built;
      },
      (error: unknown) => {
        // The next request that needs them tries again.
        emulators = undefined;
        throw error;
      },
    );
    return emulators;
  };
  const handle = async () => (await start()).control;
  const register: Sandbox['registerClient'] = async (connection, provider, clientSecret, redirectUri) => {
    const control = await handle();
    if (provider.emulator === 'definitions') control.registerDefinition(provider.source);
    if (!provider.oauth) return;
    control.registerClient(emulatorOf(provider), {
      clientId: connection.client_id,
      clientSecret,
      redirectUris: [redirectUri],
      ...(provider.emulator === 'definitions' ? { provider: provider.key } : {}),
    });
  };

  const sandbox: Sandbox = {
    enabled: true,
    get control() {
      return control;
    },
    async ready() {
      await start();
    },
    location() {
      const server = loopback ?? gateway?.server;
      const address = server?.listening ? (server.address() as AddressInfo | string | null) : null;
      const port = typeof address === 'object' && address ? address.port : undefined;
      return {
        publicBase: `${options.publicUrl}${SANDBOX_PREFIX}`,
        // The gateway reaches its own emulators over loopback, whatever the public URL is.
        internalBase: port
          ? `http://127.0.0.1:${port}${SANDBOX_PREFIX}`
          : `${options.publicUrl}${SANDBOX_PREFIX}`,
      };
    },
    registerClient: register,
    async ensureClient(connection, provider, clientSecret, redirectUri) {
      const control = await handle();
      const known = provider.oauth
        ? control.clients(emulatorOf(provider)).some((c) => c.clientId === connection.client_id)
        : false;
      if (!known) await register(connection, provider, clientSecret, redirectUri);
    },
    async expireTokens(connection, provider) {
      return (await handle()).expireAccessTokens(emulatorOf(provider), grantFilter(connection, provider));
    },
    async revokeGrants(connection, provider) {
      return (await handle()).revokeGrants(emulatorOf(provider), grantFilter(connection, provider));
    },
    async reset() {
      (await handle()).reset();
    },
  };

  async function mount(app: FastifyInstance): Promise<void> {
    gateway = app;
    const forward = async (req: FastifyRequest, reply: FastifyReply) => {
      let built: FastifyInstance;
      try {
        built = (await start()).app;
      } catch (error) {
        req.log.error({ err: error }, 'the sandbox emulators failed to start');
        throw new Problem('service_unavailable', 'The sandbox emulators failed to start; retry shortly.');
      }
      requestIds.set(req.raw, String(req.id));
      // The gateway's reply headers would be lost with the reply: the raw response keeps them.
      reply.raw.setHeader('x-request-id', String(req.id));
      reply.hijack();
      built.routing(req.raw, reply.raw);
    };
    await app.register(async (scope) => {
      // Bodies are the emulators' to read (uploads of any size, their own parsers and limits).
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
      scope.all(SANDBOX_PREFIX, forward);
      scope.all(`${SANDBOX_PREFIX}/*`, forward);
    });
    app.addHook('onClose', async () => {
      const built = await emulators?.catch(() => undefined);
      await built?.app.close();
      await options.state.idle();
    });
    if (!options.tls) return;
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

  return { sandbox, mount };
}

async function buildEmulators(
  options: EmbeddedSandboxOptions,
  requestIds: WeakMap<IncomingMessage, string>,
): Promise<{ app: FastifyInstance; control: EmulatorControl }> {
  const { emulatorsPlugin } = await import('@portico/emulators');
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    // The gateway's route logs each request once.
    logController: new LogController({
      requestIdLogLabel: REQUEST_ID_LOG_LABEL,
      disableRequestLogging: true,
    }),
    bodyLimit: options.bodyLimitBytes,
    genReqId: (req) => requestIds.get(req) ?? 'unknown',
    frameworkErrors: (error, req, reply) => void answerError(error, req, reply),
    routerOptions: { ...ROUTER_OPTIONS },
  });
  registerProblemHandlers(app);
  const { host, protocol } = new URL(options.publicUrl);
  // The gateway calls its emulators over loopback, but the links they hand out (downloads, upload
  // sessions, next pages, redirects) go to callers elsewhere: they must name the public URL.
  app.addHook('onRequest', (req, _reply, done) => {
    req.headers['x-forwarded-host'] = host;
    req.headers['x-forwarded-proto'] = protocol.slice(0, -1);
    done();
  });
  let control: EmulatorControl | undefined;
  const saved = await options.state.load();
  await app.register(emulatorsPlugin, {
    prefix: SANDBOX_PREFIX,
    mountPrefix: SANDBOX_PREFIX,
    control: false,
    onOAuthChange: async () => {
      const c = control;
      if (c) await options.state.save(() => c.exportOAuth());
    },
    onControl: (c) => {
      // Before any request: the tokens issued before a restart are known again.
      if (saved) c.importOAuth(saved);
      control = c;
    },
  });
  await app.ready();
  if (!control) throw new Error('sandbox emulators did not start');
  return { app, control };
}
