import Fastify from 'fastify';
import type { EmulatorControl } from './host.js';
import { type EmulatorsPluginOptions, emulatorsPlugin } from './plugin.js';
import type { EmulatorKey } from './types.js';

export interface StartEmulatorsOptions extends Omit<EmulatorsPluginOptions, 'onControl'> {
  /** Default 0: a free port. */
  port?: number;
  host?: string;
  /** Fastify logger setting (default false). */
  logger?: boolean;
}

export interface RunningEmulators {
  /** Root URL, e.g. http://127.0.0.1:4010 (the control API is under `${url}/_emulator`). */
  url: string;
  /** Base URL per hosted emulator, e.g. urls.notion = http://127.0.0.1:4010/notion. */
  urls: Record<EmulatorKey, string>;
  control: EmulatorControl;
  close(): Promise<void>;
}

/** Starts a standalone HTTP server hosting the emulators (on a free loopback port by default). */
export async function startEmulators(options: StartEmulatorsOptions = {}): Promise<RunningEmulators> {
  const { port = 0, host = '127.0.0.1', logger = false, ...pluginOptions } = options;
  const app = Fastify({ logger, forceCloseConnections: true });
  let control: EmulatorControl | undefined;
  const prefixes = new Map<EmulatorKey, string>();
  await app.register(emulatorsPlugin, {
    ...pluginOptions,
    onControl: (c) => {
      control = c;
    },
  });
  await app.listen({ port, host });
  if (!control) throw new Error('emulators did not start');
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const hostForUrl = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${hostForUrl}:${actualPort}`;
  for (const key of control.emulators()) prefixes.set(key, `${url}${control.prefix(key)}`);
  return {
    url,
    urls: Object.fromEntries(prefixes) as Record<EmulatorKey, string>,
    control,
    close: () => app.close(),
  };
}
