import { readdirSync, readFileSync } from 'node:fs';
import { compileDefinition } from './definition.js';
import type { ProviderDefinition, ProviderKey } from './types.js';

export type { OAuthFacts, ProviderDefinition, ProviderKey, RateLimit } from './types.js';

/** Where the built-in definitions live: one JSON file per provider, beside their schema. */
export const BUILT_IN_DIR = new URL('../../providers/', import.meta.url);

function loadBuiltIns(): Record<ProviderKey, ProviderDefinition> {
  const files = readdirSync(BUILT_IN_DIR)
    .filter((name) => name.endsWith('.json') && name !== 'provider.schema.json')
    .sort();
  const out: Record<ProviderKey, ProviderDefinition> = {};
  for (const name of files) {
    const json = JSON.parse(readFileSync(new URL(name, BUILT_IN_DIR), 'utf8')) as { key?: string };
    const definition = compileDefinition(json, { builtIn: true });
    if (`${definition.key}.json` !== name) throw new Error(`providers/${name} defines "${definition.key}"`);
    out[definition.key] = definition;
  }
  return out;
}

/**
 * The built-in provider catalog, read once from the definition files. An environment's custom
 * providers come on top of it (connections/custom-providers.ts).
 */
export const PROVIDERS: Readonly<Record<ProviderKey, ProviderDefinition>> = Object.freeze(loadBuiltIns());

/** The specification's providers, in its order. */
const SPECIFICATION_ORDER = [
  'notion',
  'google_calendar',
  'google_drive',
  'google_sheets',
  'google_docs',
  'hubspot',
  'sharepoint',
];

/** The built-in keys: the specification's seven first, in its order, then the rest by key. */
export const PROVIDER_KEYS: readonly ProviderKey[] = Object.freeze([
  ...SPECIFICATION_ORDER.filter((key) => Object.hasOwn(PROVIDERS, key)),
  ...Object.keys(PROVIDERS)
    .filter((key) => !SPECIFICATION_ORDER.includes(key))
    .sort(),
]);

export function isBuiltInProvider(key: string): boolean {
  return Object.hasOwn(PROVIDERS, key);
}

/** A built-in provider (tools and the sandbox's own emulators name only these). */
export function getProvider(key: ProviderKey): ProviderDefinition {
  const provider = PROVIDERS[key];
  if (!provider) throw new Error(`unknown built-in provider ${key}`);
  return provider;
}

/** A built-in provider, or undefined for an operator's custom one. */
export function findBuiltInProvider(key: string): ProviderDefinition | undefined {
  return isBuiltInProvider(key) ? PROVIDERS[key] : undefined;
}
