import type { DefinitionCatalog, GrantFilter, OAuthProfile, RegisteredClient } from '../../core/types.js';
import { type PlayedDefinition, readDefinition } from './definition.js';
import { type DefinitionsState, keyRecord, revokeKeys } from './keys.js';
import { baseProfile, definitionProfile } from './profile.js';

/** A registered definition, with the OAuth profile the core's server answers with for it (oauth2 only). */
export interface CatalogEntry {
  definition: PlayedDefinition;
  profile?: OAuthProfile;
}

/**
 * The definitions one emulator plays. Like clients they are configuration, so they survive a
 * reset; one catalog per host, since the module is created per host.
 */
export class Catalog implements DefinitionCatalog<DefinitionsState> {
  private readonly entries = new Map<string, CatalogEntry>();
  /** The store's profile: each access token lives as long as its client's definition says. */
  readonly storeProfile: OAuthProfile = baseProfile((client) => this.ttlFor(client));

  register(value: unknown): string {
    const definition = readDefinition(value);
    const auth = definition.auth;
    const profile =
      auth.kind === 'oauth2' ? definitionProfile(definition, auth, this.storeProfile) : undefined;
    this.entries.set(definition.key, { definition, profile });
    return definition.key;
  }

  keys(): string[] {
    return [...this.entries.keys()].sort();
  }

  get(key: string): CatalogEntry | undefined {
    return this.entries.get(key);
  }

  revokeKeys(state: DefinitionsState, filter: GrantFilter): number {
    return revokeKeys(state, filter);
  }

  revokeKey(state: DefinitionsState, provider: string, key: string): void {
    keyRecord(state, provider, key).revoked = true;
  }

  /** Undefined (the store's lifetime) for a client of no OAuth definition, e.g. the control API's internal one. */
  private ttlFor(client: RegisteredClient | undefined): number | null | undefined {
    const auth = client?.provider ? this.entries.get(client.provider)?.definition.auth : undefined;
    return auth?.kind === 'oauth2' ? auth.ttlSeconds : undefined;
  }
}
