import { type Database, quoteIdent } from '../store/db.js';
import type { Keyring } from './keyring.js';
import { SEALED_COLUMNS, type SealedColumn } from './sealed-columns.js';

export interface RotationResult {
  resealed: number;
  alreadyCurrent: number;
}

/**
 * Re-seals every stored secret with the active key. Rows are updated one by one with a
 * compare-and-swap on the old value, so running gateways (which hold every key of the ring) keep
 * serving and a value they change meanwhile is neither lost nor overwritten.
 */
export async function rotateSecrets(
  db: Database,
  keyring: Keyring,
  columns: SealedColumn[] = SEALED_COLUMNS,
): Promise<RotationResult> {
  let resealed = 0;
  let alreadyCurrent = 0;
  for (const { table, column } of columns) {
    const t = quoteIdent(table);
    const c = quoteIdent(column);
    const rows = await db.query<{ id: string; value: string }>(
      `SELECT id, ${c} AS value FROM ${t} WHERE ${c} IS NOT NULL`,
    );
    for (const row of rows) {
      if (!keyring.isStale(row.value)) {
        alreadyCurrent++;
        continue;
      }
      const at = { table, column, rowId: row.id };
      const fresh = keyring.seal(keyring.open(row.value, at), at);
      const updated = await db.query(`UPDATE ${t} SET ${c} = $1 WHERE id = $2 AND ${c} = $3 RETURNING id`, [
        fresh,
        row.id,
        row.value,
      ]);
      if (updated.length) resealed++;
    }
  }
  return { resealed, alreadyCurrent };
}
