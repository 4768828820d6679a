/**
 * Every column that stores a sealed secret. Key rotation walks this list, so a new sealed column
 * is rotated by adding it here.
 */
export interface SealedColumn {
  table: string;
  column: string;
}

export const SEALED_COLUMNS: SealedColumn[] = [{ table: 'connections', column: 'client_secret' }];
