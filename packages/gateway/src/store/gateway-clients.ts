import type { Queryable } from './db.js';

export interface GatewayClientRow {
  id: string;
  environment_id: string;
  name: string;
  secret_hash: string;
  /** null: every scope (clients from before scopes, and admin clients). */
  scopes: string[] | null;
  /** null: every connection of the environment. */
  connection_names: string[] | null;
  created_by: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export async function insertGatewayClient(
  db: Queryable,
  row: Pick<GatewayClientRow, 'id' | 'environment_id' | 'name' | 'secret_hash'> &
    Partial<Pick<GatewayClientRow, 'scopes' | 'connection_names' | 'created_by'>>,
): Promise<GatewayClientRow> {
  // The limits are named only when set: a client without any is stored as every client was before
  // them (and stays insertable at any schema version, as the upgrade tests do).
  const limits = (['scopes', 'connection_names', 'created_by'] as const).filter((c) => row[c] != null);
  const columns = ['id', 'environment_id', 'name', 'secret_hash', ...limits];
  const rows = await db.query<GatewayClientRow>(
    `INSERT INTO gateway_clients (${columns.join(', ')})
     VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`,
    [row.id, row.environment_id, row.name, row.secret_hash, ...limits.map((c) => row[c])],
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
