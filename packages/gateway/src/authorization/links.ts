import { createHash } from 'node:crypto';
import { Problem } from '../errors/problem.js';
import type { AccountRow } from '../store/accounts.js';
import { insertLink } from '../store/authorization.js';
import type { Database, Queryable } from '../store/db.js';
import { randomBase62 } from '../store/ids.js';

export interface AuthorizationLink {
  link: string;
  expires_at: string;
  connected_account_id: string;
}

export interface LinksDeps {
  db: Database;
  publicUrl: string;
  linkTtlSeconds: number;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Authorization links (single use, expiring, stored hashed). Apart from the hosted flow so that the
 * token lifecycle, which sits below it, can hand a user a fresh link when an account needs one.
 */
export class AuthorizationLinks {
  constructor(private readonly deps: LinksDeps) {}

  /** A fresh link for an existing account (e.g. in an `account_not_active` error). */
  async linkFor(
    account: Pick<AccountRow, 'id'>,
    redirectUrl?: string,
    state?: string,
    db: Queryable = this.deps.db,
    /** Hold the consented tokens until the application verifies the user (see verify()). */
    userVerifyUrl?: string,
  ): Promise<AuthorizationLink> {
    const token = randomBase62(43);
    const expiresAt = new Date(Date.now() + this.deps.linkTtlSeconds * 1000);
    await insertLink(db, {
      token_hash: hashToken(token),
      account_id: account.id,
      redirect_url: redirectUrl ?? null,
      caller_state: state ?? null,
      user_verify_url: userVerifyUrl ?? null,
      expires_at: expiresAt,
    });
    return {
      link: `${this.deps.publicUrl}/connect/${token}`,
      expires_at: expiresAt.toISOString(),
      connected_account_id: account.id,
    };
  }

  /** The `account_not_active` problem, with a link the user can open to authorize again. */
  async notActiveProblem(account: AccountRow): Promise<Problem> {
    const link = await this.linkFor(account);
    const why =
      account.status === 'PENDING_AUTH'
        ? 'has not been authorized yet'
        : account.status === 'EXPIRED'
          ? `can no longer be refreshed${account.status_reason ? ` (${account.status_reason})` : ''}`
          : 'was disconnected';
    return new Problem(
      'account_not_active',
      `Connected account ${account.id} (identifier "${account.identifier}") is ${account.status}: it ${why}. Ask the user to open authorization_link.link to connect again, then retry.`,
      {
        extensions: {
          connected_account_id: account.id,
          account_status: account.status,
          authorization_link: { link: link.link, expires_at: link.expires_at },
        },
      },
    );
  }
}
