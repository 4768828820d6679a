import { createHash, timingSafeEqual } from 'node:crypto';
import { Problem } from '../errors/problem.js';
import type { Database, Queryable } from '../store/db.js';
import {
  findGatewayClient,
  type GatewayClientRow,
  insertGatewayClient,
  listGatewayClients,
  revokeGatewayClient,
} from '../store/gateway-clients.js';
import { newId, randomBase62 } from '../store/ids.js';
import { hasScope, reachesConnection } from './access.js';
import { CLIENT_CHANNEL, type ClientStatusCache } from './client-status.js';
import { ALL_SCOPES, expandScopes, FULL_GRANT, type Grant, type Scope } from './scopes.js';

/**
 * Gateway clients: the id and secret an application uses to reach Portico. Secrets are 190-bit
 * random strings, so a fast hash is as safe as a slow one here; only the hash is stored.
 */
const SECRET_PREFIX = 'pcs_';

export interface IssuedClient {
  client_id: string;
  client_secret: string;
  name: string;
  environment_id: string;
}

export interface GatewayClient {
  client_id: string;
  name: string;
  environment_id: string;
  /** What it may do (auth/scopes.ts); every scope for clients created without any. */
  scopes: string[];
  /** The connections it may reach; null: all of the environment's. */
  connection_names: string[] | null;
  created_at: string;
  revoked_at: string | null;
}

export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new client's row and its secret (which is stored only as a hash). */
async function issueClient(
  db: Queryable,
  environmentId: string,
  name: string,
  limits: Pick<GatewayClientRow, 'scopes' | 'connection_names' | 'created_by'> = {
    scopes: null,
    connection_names: null,
    created_by: null,
  },
): Promise<{ row: GatewayClientRow; secret: string }> {
  const secret = SECRET_PREFIX + randomBase62(32);
  const row = await insertGatewayClient(db, {
    id: newId('cli'),
    environment_id: environmentId,
    name,
    secret_hash: hashClientSecret(secret),
    ...limits,
  });
  return { row, secret };
}

/**
 * A client made by an operator with the store in hand (the CLI): any scopes and connections, as
 * names or presets; none given, every scope on every connection.
 */
export async function createGatewayClient(
  db: Queryable,
  environmentId: string,
  name: string,
  options: { scopes?: string[]; connection_names?: string[]; created_by?: string } = {},
): Promise<IssuedClient> {
  const scopes = options.scopes ? [...expandScopes(options.scopes, '/scopes')] : null;
  const { row, secret } = await issueClient(db, environmentId, name, {
    scopes: scopes && scopes.length < ALL_SCOPES.length ? scopes : null,
    connection_names: options.connection_names?.length ? options.connection_names : null,
    created_by: options.created_by ?? null,
  });
  return { client_id: row.id, client_secret: secret, name, environment_id: environmentId };
}

/** The client when id and secret match and it is not revoked; otherwise undefined. */
export async function verifyClientSecret(
  db: Queryable,
  clientId: string,
  clientSecret: string,
): Promise<GatewayClientRow | undefined> {
  const row = await findGatewayClient(db, clientId);
  // Hash even when the client is unknown so timing does not reveal which ids exist.
  const presented = Buffer.from(hashClientSecret(clientSecret), 'hex');
  const stored = Buffer.from(row?.secret_hash ?? hashClientSecret(`${clientSecret}x`), 'hex');
  const matches = timingSafeEqual(presented, stored);
  if (!row || !matches || row.revoked_at) return undefined;
  return row;
}

export async function listClients(db: Queryable): Promise<GatewayClient[]> {
  return (await listGatewayClients(db)).map(toPublic);
}

/** Revokes a client and tells every gateway process to stop accepting its tokens. */
export async function revokeClient(db: Database, clientId: string): Promise<boolean> {
  const revoked = await revokeGatewayClient(db, clientId);
  if (revoked) await db.notify(CLIENT_CHANNEL, clientId);
  return revoked;
}

export function toPublic(row: GatewayClientRow): GatewayClient {
  return {
    client_id: row.id,
    name: row.name,
    environment_id: row.environment_id,
    scopes: row.scopes ?? [...ALL_SCOPES],
    connection_names: row.connection_names,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

/**
 * Gateway clients as the API serves them, one environment at a time: list, create (the secret is
 * returned once), revoke, and the secret check of the client_credentials grant.
 */
export class GatewayClientService {
  constructor(
    private readonly db: Database,
    private readonly status: ClientStatusCache,
  ) {}

  /** The environment's clients, revoked ones included; never their secrets. */
  async list(environmentId: string): Promise<GatewayClient[]> {
    return (await listClients(this.db)).filter((c) => c.environment_id === environmentId);
  }

  /**
   * A new client with at most what its creator has: scopes (names or presets; default all of the
   * creator's) and connections (default the creator's).
   */
  async create(
    environmentId: string,
    name: string,
    options: { scopes?: string[]; connection_names?: string[] } = {},
    creator?: { id: string; grant: Grant },
  ): Promise<GatewayClient & { client_secret: string }> {
    const granting = creator?.grant ?? FULL_GRANT;
    const scopes = options.scopes ? expandScopes(options.scopes, '/scopes') : undefined;
    const beyond = scopes && [...scopes].filter((scope) => !hasScope(granting, scope));
    if (beyond?.length) {
      throw new Problem(
        'insufficient_scope',
        `A client cannot give another more than it has: this one lacks ${beyond.join(', ')}. Ask for fewer scopes, or create the client as an admin.`,
        { errors: [{ path: '/scopes', message: `must not include ${beyond.join(', ')}` }] },
      );
    }
    const connectionNames = options.connection_names ?? granting.connectionNames ?? null;
    const outside = connectionNames?.filter((c) => !reachesConnection(granting, c));
    if (outside?.length) {
      throw new Problem(
        'insufficient_scope',
        `This client may not reach ${outside.join(', ')}, so it cannot give another client those connections.`,
        { errors: [{ path: '/connection_names', message: `must not include ${outside.join(', ')}` }] },
      );
    }
    const scopeList = scopes ? [...scopes] : granting.scopes ? [...granting.scopes] : null;
    const { row, secret } = await issueClient(this.db, environmentId, name, {
      scopes: scopeList && scopeList.length === ALL_SCOPES.length ? null : scopeList,
      connection_names: connectionNames ? [...connectionNames] : null,
      created_by: creator?.id ?? null,
    });
    return { ...toPublic(row), client_secret: secret };
  }

  /**
   * Revokes an active client of the environment; its tokens stop working at once in every process.
   * A client may revoke only clients that have no more than it has (an admin client cannot be
   * revoked by a narrower one).
   */
  async revoke(environmentId: string, clientId: string, revoker?: { grant: Grant }): Promise<void> {
    const row = await findGatewayClient(this.db, clientId);
    if (!row || row.environment_id !== environmentId || row.revoked_at) {
      throw new Problem(
        'client_not_found',
        `No active gateway client ${clientId}; GET /api/v1/clients lists them (revoked ones have revoked_at set).`,
      );
    }
    if (revoker) {
      const target = toPublic(row);
      const beyond = target.scopes.filter((scope) => !hasScope(revoker.grant, scope as Scope));
      const wider = (target.connection_names ?? ['(every connection)']).some(
        (c) => !reachesConnection(revoker.grant, target.connection_names ? c : undefined),
      );
      if (beyond.length || (wider && revoker.grant.connectionNames !== null)) {
        throw new Problem(
          'insufficient_scope',
          `Client ${clientId} has more than this one (${beyond.length ? beyond.join(', ') : 'more connections'}); only a client with at least as much, or an admin, can revoke it.`,
        );
      }
    }
    await revokeClient(this.db, clientId);
    // Other processes learn it through NOTIFY; this one forgets it now.
    this.status.forget(clientId);
  }

  /** The client when id and secret match and it is not revoked; otherwise undefined. */
  verifySecret(clientId: string, clientSecret: string): Promise<GatewayClientRow | undefined> {
    return verifyClientSecret(this.db, clientId, clientSecret);
  }
}
