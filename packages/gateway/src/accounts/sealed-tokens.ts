import type { Keyring } from '../secrets/keyring.js';
import { ACCOUNT_ACCESS_TOKEN, ACCOUNT_REFRESH_TOKEN } from '../secrets/sealed-columns.js';

/**
 * An account's tokens as stored: sealed, and bound to the account's row so a sealed value copied
 * to another row does not open. The one place a token set is sealed (callback, verification,
 * refresh); a missing refresh token stays null for the caller to decide (a refresh keeps the old).
 */
export function sealTokens(
  keyring: Keyring,
  accountId: string,
  tokens: { accessToken: string; refreshToken?: string | null | undefined },
): { accessToken: string; refreshToken: string | null } {
  return {
    accessToken: keyring.seal(tokens.accessToken, { ...ACCOUNT_ACCESS_TOKEN, rowId: accountId }),
    refreshToken: tokens.refreshToken
      ? keyring.seal(tokens.refreshToken, { ...ACCOUNT_REFRESH_TOKEN, rowId: accountId })
      : null,
  };
}
