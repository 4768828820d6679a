import type { Database } from '../store/db.js';
import {
  createEnvironment,
  DEFAULT_ENVIRONMENT,
  type Environment,
  findEnvironmentByName,
} from '../store/environments.js';
import { createGatewayClient, type IssuedClient } from './gateway-clients.js';

const BOOTSTRAP_LOCK = 7_406_232;

/**
 * First start on an empty store: the default environment and one client. Replicas starting together
 * serialise on an advisory lock, so exactly one of them creates (and prints) the client.
 */
export async function bootstrapStore(
  db: Database,
): Promise<{ environment: Environment; client?: IssuedClient }> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
    const existing = await findEnvironmentByName(tx, DEFAULT_ENVIRONMENT);
    if (existing) return { environment: existing };
    const environment = await createEnvironment(tx, DEFAULT_ENVIRONMENT);
    const client = await createGatewayClient(tx, environment.id, 'default');
    return { environment, client };
  });
}
