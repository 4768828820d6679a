import type { Queryable } from './db.js';

export interface GatewayClientRow {
  id: string;
  environment_id: string;
  name: string;
  secret_hash: string;
  created_at: Date;
  revoked_at: Date | null;
}

export async function insertGatewayClient(
  db: Queryable,
  row: Pick<GatewayClientRow, 'id' | 'environment_id' | 'name' | 'secret_hash'>,
): Promise<GatewayClientRow> {
  const rows = await db.query<GatewayClientRow>(
    'INSERT INTO gateway_clients (id, environment_id, name, secret_hash) VALUES ($1, $2, $3, $4) RETURNING *',
    [row.id, row.environment_id, row.name, row.secret_hash],
  );
  return rows[0]!;
}

export async function findGatewayClient(db: Queryable, id: string): Promise<GatewayClientRow | undefined> {
  const rows = await db.query<GatewayClientRow>('SELECT * FROM gateway_clients WHERE id = $1', [id]);
  return rows[0];
}

export async function listGatewayClients(db: Queryable): Promise<GatewayClientRow[]> {
  return db.query<GatewayClientRow>('SELECT * FROM gateway_clients ORDER BY created_at, id');
}

export async function revokeGatewayClient(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query(
    'UPDATE gateway_clients SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id',
    [id],
  );
  return rows.length > 0;
}
