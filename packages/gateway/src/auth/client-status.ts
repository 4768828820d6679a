import type { Database } from '../store/db.js';
import { findGatewayClient, type GatewayClientRow } from '../store/gateway-clients.js';
import { FULL_GRANT, type Grant, type Scope } from './scopes.js';

/** NOTIFY channel: a gateway client was revoked; every process forgets it at once. */
export const CLIENT_CHANNEL = 'portico_client';

/**
 * Whether a gateway client may call the API, cached so authenticated requests read no database row.
 * Revocation reaches every process through NOTIFY; the short TTL bounds the damage of a missed one.
 */
export class ClientStatusCache {
  private readonly active = new Map<string, { environmentId: string; until: number; grant: Grant }>();

  constructor(
    private readonly db: Database,
    private readonly ttlMs = 60_000,
  ) {}

  async start(): Promise<void> {
    await this.db.listen(CLIENT_CHANNEL, (clientId) => this.active.delete(clientId));
    // A revocation notified while the listener was down never arrived: trust nothing cached.
    this.db.onNotificationsMissed(() => this.active.clear());
  }

  /** Forgets a client revoked by this process at once (others learn it through NOTIFY). */
  forget(clientId: string): void {
    this.active.delete(clientId);
  }

  /** True when the client is known to be active without asking the database (the hot path). */
  knownActive(clientId: string): boolean {
    const cached = this.active.get(clientId);
    // While the listener is down a revocation would go unheard: ask the database instead.
    return cached !== undefined && cached.until > Date.now() && this.db.listening();
  }

  async isActive(clientId: string): Promise<boolean> {
    if (this.knownActive(clientId)) return true;
    const row = await findGatewayClient(this.db, clientId);
    if (!row || row.revoked_at) {
      this.active.delete(clientId);
      return false;
    }
    this.active.set(clientId, {
      environmentId: row.environment_id,
      until: Date.now() + this.ttlMs,
      grant: grantOf(row),
    });
    return true;
  }

  /**
   * What an active client was granted, known once `isActive` has answered true (every
   * authentication asks it first); a client not in the cache is granted nothing.
   */
  grantOf(clientId: string): Grant {
    return this.active.get(clientId)?.grant ?? NOTHING;
  }
}

const NOTHING: Grant = { scopes: new Set(), connectionNames: [] };

function grantOf(row: GatewayClientRow): Grant {
  if (!row.scopes && !row.connection_names) return FULL_GRANT;
  return {
    scopes: row.scopes ? new Set(row.scopes as Scope[]) : null,
    connectionNames: row.connection_names,
  };
}
