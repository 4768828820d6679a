import type { AccountListing } from '../store/accounts.js';
import type { AccountView } from './schemas.js';

/** What the view reads of an account: a listing's row, or the whole row. */
type ShownAccount = Omit<AccountListing, keyof ConnectionFacts>;
type ConnectionFacts = Pick<AccountListing, 'connection_name' | 'provider'>;

/** A connected account as the API (and every event about it) shows it: never a token. */
export function accountView(row: ShownAccount, connection: { name: string; provider: string }): AccountView {
  return {
    id: row.id,
    connection_name: connection.name,
    provider: connection.provider,
    identifier: row.identifier,
    label: labelOf(row.provider_metadata),
    status: row.status,
    status_reason: row.status_reason,
    scopes: row.scopes,
    token_expires_at: row.token_expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function labelOf(metadata: Record<string, unknown> | null | undefined): string | null {
  const info = metadata?.user_info as { label?: unknown } | undefined;
  return typeof info?.label === 'string' ? info.label : null;
}
