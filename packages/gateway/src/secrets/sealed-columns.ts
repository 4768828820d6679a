/**
 * Every column that stores a sealed secret. Key rotation walks this list, so a new sealed column
 * is rotated by adding it here.
 */
export interface SealedColumn {
  table: string;
  column: string;
}

export const SEALED_COLUMNS: SealedColumn[] = [
  { table: 'connections', column: 'client_secret' },
  { table: 'connected_accounts', column: 'access_token' },
  { table: 'connected_accounts', column: 'refresh_token' },
  { table: 'authorization_requests', column: 'code_verifier' },
  { table: 'webhook_endpoints', column: 'secret' },
  { table: 'webhook_endpoints', column: 'previous_secret' },
  { table: 'authorization_requests', column: 'pending_tokens' },
  { table: 'sandbox_state', column: 'state' },
  { table: 'trigger_channels', column: 'secret' },
  { table: 'trigger_push_secrets', column: 'secret' },
];

export const CONNECTION_CLIENT_SECRET = SEALED_COLUMNS[0]!;
export const ACCOUNT_ACCESS_TOKEN = SEALED_COLUMNS[1]!;
export const ACCOUNT_REFRESH_TOKEN = SEALED_COLUMNS[2]!;
export const REQUEST_CODE_VERIFIER = SEALED_COLUMNS[3]!;
export const WEBHOOK_SECRET = SEALED_COLUMNS[4]!;
export const WEBHOOK_PREVIOUS_SECRET = SEALED_COLUMNS[5]!;
export const REQUEST_PENDING_TOKENS = SEALED_COLUMNS[6]!;
export const SANDBOX_STATE = SEALED_COLUMNS[7]!;
export const TRIGGER_CHANNEL_SECRET = SEALED_COLUMNS[8]!;
export const TRIGGER_PUSH_SECRET = SEALED_COLUMNS[9]!;
