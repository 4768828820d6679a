import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  type EmulatorKey,
  type RunningEmulators,
  type StartEmulatorsOptions,
  startEmulators,
} from '../../src/index.js';

/**
 * Starts the emulators once for the enclosing suite (or file), closes them afterwards and resets
 * their state before every test. The returned handle stands in for the running emulators: read it
 * only inside hooks and tests, once `beforeAll` has run.
 */
export function useEmulators(options: StartEmulatorsOptions): RunningEmulators {
  let running: RunningEmulators | undefined;
  const current = (): RunningEmulators => {
    if (!running) throw new Error('the emulators are not running yet; read them inside a hook or test');
    return running;
  };
  beforeAll(async () => {
    running = await startEmulators(options);
  });
  afterAll(async () => {
    await running?.close();
  });
  beforeEach(() => {
    current().control.reset();
  });
  return new Proxy({} as RunningEmulators, {
    get(_blank, prop) {
      const target = current();
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

type Provider = EmulatorKey;

/** An access token minted directly by the emulator, without an OAuth round trip. */
export function mintToken(
  emu: RunningEmulators,
  provider: Provider,
  userId: string,
  scopes?: string[],
): string {
  return emu.control.issueToken(provider, { userId, ...(scopes ? { scopes } : {}) }).access_token;
}
