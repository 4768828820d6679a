import type { EmulatorKey, EmulatorModule } from './types.js';

export const EMULATOR_KEYS: readonly EmulatorKey[] = [
  'notion',
  'google',
  'hubspot',
  'microsoft',
  'definitions',
  'mcp',
];

/**
 * Every provider emulator, loaded on demand so that hosting one provider does not pay for
 * (or depend on) the others.
 */
export const emulatorLoaders: Record<EmulatorKey, () => Promise<EmulatorModule>> = {
  notion: async () => (await import('../providers/notion/index.js')).notionEmulator as EmulatorModule,
  google: async () => (await import('../providers/google/index.js')).googleEmulator as EmulatorModule,
  hubspot: async () => (await import('../providers/hubspot/index.js')).hubspotEmulator as EmulatorModule,
  microsoft: async () =>
    (await import('../providers/microsoft/index.js')).microsoftEmulator as EmulatorModule,
  mcp: async () => (await import('../providers/mcp/index.js')).mcpEmulator as EmulatorModule,
  // A new module per host: the definitions it is given are that host's.
  definitions: async () =>
    (await import('../providers/definitions/index.js')).createDefinitionsEmulator() as EmulatorModule,
};

export function isEmulatorKey(value: unknown): value is EmulatorKey {
  return typeof value === 'string' && (EMULATOR_KEYS as readonly string[]).includes(value);
}

/** Resolves keys to modules; module objects (custom or test emulators) pass through. */
export async function loadEmulators(
  selection?: Array<EmulatorKey | EmulatorModule>,
): Promise<EmulatorModule[]> {
  const wanted = selection ?? [...EMULATOR_KEYS];
  return Promise.all(
    wanted.map((item) => {
      if (typeof item !== 'string') return item;
      if (!isEmulatorKey(item)) throw new Error(`unknown emulator: ${item}`);
      return emulatorLoaders[item]();
    }),
  );
}
