import type { EmulatorKey } from './types.js';

export type GrantType = 'authorization_code' | 'refresh_token';

export interface GrantCounts {
  authorization_code: number;
  refresh_token: number;
}

export interface CountersSnapshot {
  /** Requests that reached a route, keyed "METHOD /prefix/route/:pattern". */
  requests: Record<string, number>;
  /** Requests answered by an injected fault instead of their route, same keys. */
  faulted: Record<string, number>;
  token_grants: Partial<Record<EmulatorKey, GrantCounts & { by_client: Record<string, GrantCounts> }>>;
}

/** Request and token-grant counts, so tests can assert how often the gateway called a provider. */
export class Counters {
  private requests = new Map<string, number>();
  private faulted = new Map<string, number>();
  private grants = new Map<EmulatorKey, { total: GrantCounts; byClient: Map<string, GrantCounts> }>();

  countRequest(key: string): void {
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  countFault(key: string): void {
    this.faulted.set(key, (this.faulted.get(key) ?? 0) + 1);
  }

  countGrant(emulator: EmulatorKey, grantType: GrantType, clientId: string): void {
    let entry = this.grants.get(emulator);
    if (!entry) {
      entry = { total: emptyGrantCounts(), byClient: new Map() };
      this.grants.set(emulator, entry);
    }
    entry.total[grantType]++;
    let client = entry.byClient.get(clientId);
    if (!client) {
      client = emptyGrantCounts();
      entry.byClient.set(clientId, client);
    }
    client[grantType]++;
  }

  reset(): void {
    this.requests.clear();
    this.faulted.clear();
    this.grants.clear();
  }

  snapshot(): CountersSnapshot {
    const token_grants: CountersSnapshot['token_grants'] = {};
    for (const [key, entry] of this.grants) {
      token_grants[key] = {
        ...entry.total,
        by_client: Object.fromEntries([...entry.byClient].map(([id, counts]) => [id, { ...counts }])),
      };
    }
    return {
      requests: Object.fromEntries(this.requests),
      faulted: Object.fromEntries(this.faulted),
      token_grants,
    };
  }
}

function emptyGrantCounts(): GrantCounts {
  return { authorization_code: 0, refresh_token: 0 };
}
