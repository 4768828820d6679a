import { hashToken } from '../authorization/links.js';
import type { ConnectionService } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import type { Database } from '../store/db.js';
import { randomBase62 } from '../store/ids.js';
import {
  findUsableProxyToken,
  insertProxyToken,
  listProxyTokens,
  type ProxyTokenRow,
  revokeProxyToken,
  touchProxyToken,
} from '../store/proxy-tokens.js';
import type { ClientStatusCache } from './client-status.js';

/** Minted tokens start with this, so the proxy tells them from gateway access tokens. */
export const PROXY_TOKEN_PREFIX = 'ppt_';

/** NOTIFY channel: a proxy token was revoked (payload: its id); every process forgets it at once. */
export const PROXY_TOKEN_CHANNEL = 'portico_proxy_token';

/** What a proxy token reaches: one end user's account on one connection. */
export interface ProxyTokenScope {
  /** The principal the proxied call runs as (the client or admin that minted the token). */
  clientId: string;
  environmentId: string;
  connectionName: string;
  identifier: string;
}

export interface ProxyTokenMintInput {
  connection_name: string;
  identifier: string;
  /** Seconds; default DEFAULT_PROXY_TOKEN_TTL_SECONDS. */
  expires_in?: number;
}

export interface ProxyTokenView {
  id: string;
  connection_name: string;
  identifier: string;
  expires_at: string;
  last_used_at: string | null;
  created_at: string;
}

export const DEFAULT_PROXY_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/**
 * How long a verified token is trusted from memory. Revocation in this process (and, through
 * NOTIFY, in every other) forgets it at once; this bounds the damage of a missed notification.
 */
const CACHE_MS = 60_000;
/** Most tokens remembered at once; the oldest is dropped beyond it. */
const CACHE_MAX = 10_000;

interface Cached {
  id: string;
  scope: ProxyTokenScope;
  /** Trusted until then (ms since the epoch): the sooner of the token's expiry and the cache TTL. */
  until: number;
}

export interface ProxyTokenDeps {
  db: Database;
  clients: ClientStatusCache;
  connections: ConnectionService;
}

/**
 * Proxy tokens: an application mints one for one connection and one end user, and hands it to a
 * provider's own SDK as its access token; the proxy then needs no routing headers. Verified tokens
 * are remembered briefly so the proxy's hot path reads no row.
 */
export class ProxyTokenService {
  private readonly cache = new Map<string, Cached>();
  /** Token values cached, by token id (to forget a revoked one). */
  private readonly byId = new Map<string, string>();

  constructor(private readonly deps: ProxyTokenDeps) {}

  async start(): Promise<void> {
    await this.deps.db.listen(PROXY_TOKEN_CHANNEL, (id) => this.forget(id));
    // A revocation notified while the listener was down never arrived: trust nothing cached.
    this.deps.db.onNotificationsMissed(() => {
      this.cache.clear();
      this.byId.clear();
    });
  }

  async mint(
    principal: { environmentId: string; clientId: string },
    input: ProxyTokenMintInput,
  ): Promise<ProxyTokenView & { token: string }> {
    await this.deps.connections.get(principal.environmentId, input.connection_name);
    const token = `${PROXY_TOKEN_PREFIX}${randomBase62(43)}`;
    const row = await insertProxyToken(this.deps.db, {
      id: `pxt_${randomBase62(22)}`,
      environment_id: principal.environmentId,
      client_id: principal.clientId,
      connection_name: input.connection_name,
      identifier: input.identifier,
      token_hash: hashToken(token),
      expires_at: new Date(Date.now() + (input.expires_in ?? DEFAULT_PROXY_TOKEN_TTL_SECONDS) * 1000),
    });
    return { ...view(row), token };
  }

  async list(
    environmentId: string,
    query: { identifier?: string; page_size?: number; page_token?: string },
  ): Promise<{ data: ProxyTokenView[]; next_page_token: string | null }> {
    const limit = query.page_size ?? 50;
    const rows = await listProxyTokens(this.deps.db, environmentId, {
      ...(query.identifier ? { identifier: query.identifier } : {}),
      ...(query.page_token ? { after: Buffer.from(query.page_token, 'base64url').toString('utf8') } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map(view),
      next_page_token: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null,
    };
  }

  async revoke(environmentId: string, id: string): Promise<void> {
    if (!(await revokeProxyToken(this.deps.db, environmentId, id))) {
      throw new Problem(
        'proxy_token_not_found',
        `No live proxy token has id ${id}; list them with GET /api/v1/proxy/tokens.`,
      );
    }
    this.forget(id);
    await this.deps.db.notify(PROXY_TOKEN_CHANNEL, id);
  }

  /** The scope of a token verified recently, without waiting (the proxy's hot path). */
  knownNow(token: string): ProxyTokenScope | undefined {
    const cached = this.cache.get(token);
    if (!cached) return undefined;
    if (cached.until <= Date.now() || !this.deps.db.listening() || !this.clientKnownActive(cached.scope)) {
      return undefined;
    }
    return cached.scope;
  }

  /** The scope of a live token whose minting client is not revoked; undefined otherwise. */
  async authenticate(token: string): Promise<ProxyTokenScope | undefined> {
    const known = this.knownNow(token);
    if (known) return known;
    this.forgetToken(token);
    const row = await findUsableProxyToken(this.deps.db, hashToken(token));
    if (!row) return undefined;
    // A token minted by a gateway client dies with it; one minted from the dashboard has no client.
    if (row.client_id.startsWith('cli_') && !(await this.deps.clients.isActive(row.client_id)))
      return undefined;
    // Last use is recorded when the token is verified in full, not on every proxied call.
    await touchProxyToken(this.deps.db, row.id);
    const scope: ProxyTokenScope = {
      clientId: row.client_id,
      environmentId: row.environment_id,
      connectionName: row.connection_name,
      identifier: row.identifier,
    };
    if (this.cache.size >= CACHE_MAX) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.forgetToken(oldest);
    }
    this.cache.set(token, {
      id: row.id,
      scope,
      until: Math.min(row.expires_at.getTime(), Date.now() + CACHE_MS),
    });
    this.byId.set(row.id, token);
    return scope;
  }

  private clientKnownActive(scope: ProxyTokenScope): boolean {
    return !scope.clientId.startsWith('cli_') || this.deps.clients.knownActive(scope.clientId);
  }

  private forget(id: string): void {
    const token = this.byId.get(id);
    if (token !== undefined) this.forgetToken(token);
  }

  private forgetToken(token: string): void {
    const cached = this.cache.get(token);
    if (!cached) return;
    this.cache.delete(token);
    this.byId.delete(cached.id);
  }
}

function view(row: ProxyTokenRow): ProxyTokenView {
  return {
    id: row.id,
    connection_name: row.connection_name,
    identifier: row.identifier,
    expires_at: row.expires_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
