import { createHash, timingSafeEqual } from 'node:crypto';
import type { Database, Queryable } from '../store/db.js';
import {
  findGatewayClient,
  type GatewayClientRow,
  insertGatewayClient,
  listGatewayClients,
  revokeGatewayClient,
} from '../store/gateway-clients.js';
import { newId, randomBase62 } from '../store/ids.js';
import { CLIENT_CHANNEL } from './client-status.js';

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
  created_at: string;
  revoked_at: string | null;
}

export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export async function createGatewayClient(
  db: Queryable,
  environmentId: string,
  name: string,
): Promise<IssuedClient> {
  const id = newId('cli');
  const secret = SECRET_PREFIX + randomBase62(32);
  await insertGatewayClient(db, {
    id,
    environment_id: environmentId,
    name,
    secret_hash: hashClientSecret(secret),
  });
  return { client_id: id, client_secret: secret, name, environment_id: environmentId };
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
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}
