import type { EmulatedUser, GrantFilter } from '../../core/types.js';
import type { ApiKeySpec } from './definition.js';
import { userForKey } from './users.js';

// API keys and Basic passwords. A sandbox has no key store to paste from, so the rule is a
// convention anyone can follow: keys that say they are sandbox keys work, everything else is
// refused, and a key refused once (control API) stays refused until reset.

/** A key (or Basic password) seen or refused at one definition. */
export interface KeyRecord {
  user: EmulatedUser;
  revoked: boolean;
}

/** Session state of the definitions emulator: reset forgets which keys were used and refused. */
export interface DefinitionsState {
  /** Definition key → API key (Basic password) → record. */
  keys: Map<string, Map<string, KeyRecord>>;
}

export function createDefinitionsState(): DefinitionsState {
  return { keys: new Map() };
}

/**
 * An API key is accepted when it starts with `sandbox_`; a definition with a `pattern` needs the
 * key to match it, and then any key containing "sandbox" (case-insensitive) is accepted, since the
 * pattern may forbid the prefix (e.g. `^sk_test_[A-Za-z0-9]+$` takes sk_test_sandbox1).
 */
export function acceptsApiKey(spec: ApiKeySpec, key: string): boolean {
  if (!spec.pattern) return key.startsWith('sandbox_');
  return spec.pattern.test(key) && /sandbox/i.test(key);
}

/** Basic credentials: any user name, a password starting with `sandbox_`. */
export function acceptsBasicPassword(password: string): boolean {
  return password.startsWith('sandbox_');
}

/** The record of a key, created on first use: the same key always signs in the same user. */
export function keyRecord(
  state: DefinitionsState,
  provider: string,
  key: string,
  userName?: string,
): KeyRecord {
  let keys = state.keys.get(provider);
  if (!keys) {
    keys = new Map();
    state.keys.set(provider, keys);
  }
  let record = keys.get(key);
  if (!record) {
    record = { user: userForKey(key, userName), revoked: false };
    keys.set(key, record);
  }
  return record;
}

/** Refuses the used keys the filter names (keys have no client, so a client filter names none); how many. */
export function revokeKeys(state: DefinitionsState, filter: GrantFilter): number {
  if (filter.clientId !== undefined) return 0;
  let count = 0;
  for (const [provider, keys] of state.keys) {
    if (filter.provider !== undefined && provider !== filter.provider) continue;
    for (const record of keys.values()) {
      if (record.revoked || (filter.userId !== undefined && record.user.id !== filter.userId)) continue;
      record.revoked = true;
      count++;
    }
  }
  return count;
}
