import type { Queryable } from './db.js';

export interface LinkRow {
  token_hash: string;
  account_id: string;
  redirect_url: string | null;
  caller_state: string | null;
  /** Where the browser goes after consent for the application to verify its user (opt-in). */
  user_verify_url: string | null;
  expires_at: Date;
  used_at: Date | null;
  /** Hash of the resume cookie of the browser that first started the trip (cleared on success). */
  resume_hash: string | null;
  /** Credentials entered on its form so far (bounded: authorization/service.ts). */
  credential_entries: number;
}

export async function insertLink(
  db: Queryable,
  row: Omit<LinkRow, 'used_at' | 'resume_hash' | 'credential_entries'>,
): Promise<void> {
  await db.query(
    `INSERT INTO authorization_links (token_hash, account_id, redirect_url, caller_state, user_verify_url, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [row.token_hash, row.account_id, row.redirect_url, row.caller_state, row.user_verify_url, row.expires_at],
  );
}

/**
 * Marks the link used, atomically, binding it to `resume.fresh` (the hash of a new resume cookie);
 * a used link is taken again only with `resume.presented` matching its binding. Undefined when it
 * is unknown, expired, or used and not resumable by this browser.
 */
export async function consumeLink(
  db: Queryable,
  tokenHash: string,
  resume: { fresh: string; presented: string | undefined },
): Promise<LinkRow | undefined> {
  const rows = await db.query<LinkRow>(
    `UPDATE authorization_links SET used_at = now(), resume_hash = COALESCE(resume_hash, $2)
     WHERE token_hash = $1 AND expires_at > now()
       AND (used_at IS NULL OR (resume_hash IS NOT NULL AND resume_hash = $3)) RETURNING *`,
    [tokenHash, resume.fresh, resume.presented ?? null],
  );
  return rows[0];
}

/** An authorization begun from the link succeeded: no browser may start it again. */
export async function endLinkResume(db: Queryable, tokenHash: string): Promise<void> {
  await db.query('UPDATE authorization_links SET resume_hash = NULL WHERE token_hash = $1', [tokenHash]);
}

/**
 * Counts one more credential entered on the link's form, while fewer than `max` were: the new
 * count, or undefined when the link is spent of entries (or unknown).
 */
export async function countCredentialEntry(
  db: Queryable,
  tokenHash: string,
  max: number,
): Promise<number | undefined> {
  const rows = await db.query<{ credential_entries: number }>(
    `UPDATE authorization_links SET credential_entries = credential_entries + 1
     WHERE token_hash = $1 AND credential_entries < $2 RETURNING credential_entries`,
    [tokenHash, max],
  );
  return rows[0]?.credential_entries;
}

/** The link and the trip begun from it end here: nobody may resume or finish them. */
export async function lockLinkTrip(db: Queryable, tokenHash: string, requestId: string): Promise<void> {
  await db.query('UPDATE authorization_links SET resume_hash = NULL WHERE token_hash = $1', [tokenHash]);
  await db.query('UPDATE authorization_requests SET used_at = COALESCE(used_at, now()) WHERE id = $1', [
    requestId,
  ]);
}

export async function findLink(db: Queryable, tokenHash: string): Promise<LinkRow | undefined> {
  return (await db.query<LinkRow>('SELECT * FROM authorization_links WHERE token_hash = $1', [tokenHash]))[0];
}

export interface AuthorizationRequestRow {
  id: string;
  state_hash: string;
  account_id: string;
  connection_id: string;
  code_verifier: string | null;
  redirect_url: string | null;
  caller_state: string | null;
  /** Hash of the binding cookie of the browser that opened the link. */
  browser_hash: string | null;
  user_verify_url: string | null;
  /** The token set awaiting the application's verification of its user, sealed. */
  pending_tokens: string | null;
  expires_at: Date;
  used_at: Date | null;
  verified_at: Date | null;
  /** The link the trip was started from (to end its resume on success). */
  link_hash: string | null;
}

export async function insertAuthorizationRequest(
  db: Queryable,
  row: Omit<AuthorizationRequestRow, 'used_at' | 'pending_tokens' | 'verified_at'>,
): Promise<void> {
  await db.query(
    `INSERT INTO authorization_requests
       (id, state_hash, account_id, connection_id, code_verifier, redirect_url, caller_state, browser_hash,
        user_verify_url, expires_at, link_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      row.id,
      row.state_hash,
      row.account_id,
      row.connection_id,
      row.code_verifier,
      row.redirect_url,
      row.caller_state,
      row.browser_hash,
      row.user_verify_url,
      row.expires_at,
      row.link_hash,
    ],
  );
}

/** Claims the request for this connection, atomically; undefined when unknown, used, expired or foreign. */
export async function consumeAuthorizationRequest(
  db: Queryable,
  stateHash: string,
  connectionId: string,
): Promise<AuthorizationRequestRow | undefined> {
  const rows = await db.query<AuthorizationRequestRow>(
    `UPDATE authorization_requests SET used_at = now()
     WHERE state_hash = $1 AND connection_id = $2 AND used_at IS NULL AND expires_at > now() RETURNING *`,
    [stateHash, connectionId],
  );
  return rows[0];
}

export async function findAuthorizationRequest(
  db: Queryable,
  stateHash: string,
): Promise<AuthorizationRequestRow | undefined> {
  return (
    await db.query<AuthorizationRequestRow>('SELECT * FROM authorization_requests WHERE state_hash = $1', [
      stateHash,
    ])
  )[0];
}

/**
 * Keeps a consented request's token set (sealed) until the application verifies its user; the
 * request's expiry becomes the end of the verification window.
 */
export async function holdForVerification(
  db: Queryable,
  id: string,
  sealedTokens: string,
  expiresAt: Date,
): Promise<void> {
  await db.query('UPDATE authorization_requests SET pending_tokens = $2, expires_at = $3 WHERE id = $1', [
    id,
    sealedTokens,
    expiresAt,
  ]);
}

/** The request with its account's environment, locked until the transaction ends. */
export async function lockAuthorizationRequest(
  tx: Queryable,
  id: string,
): Promise<(AuthorizationRequestRow & { environment_id: string; expired: boolean }) | undefined> {
  const rows = await tx.query<AuthorizationRequestRow & { environment_id: string; expired: boolean }>(
    `SELECT r.*, a.environment_id, (r.expires_at <= now()) AS expired
     FROM authorization_requests r JOIN connected_accounts a ON a.id = r.account_id
     WHERE r.id = $1 FOR UPDATE OF r`,
    [id],
  );
  return rows[0];
}

/** Ends a verification: the held token set is dropped whether it was verified or refused. */
export async function finishVerification(db: Queryable, id: string, verified: boolean): Promise<void> {
  await db.query(
    `UPDATE authorization_requests SET pending_tokens = NULL,
       verified_at = CASE WHEN $2 THEN now() ELSE verified_at END WHERE id = $1`,
    [id, verified],
  );
}

/** Token sets whose verification never came: wiped once their window has passed. */
export async function wipeUnverifiedTokens(db: Queryable): Promise<number> {
  const rows = await db.query(
    `UPDATE authorization_requests SET pending_tokens = NULL
     WHERE pending_tokens IS NOT NULL AND expires_at <= now() RETURNING id`,
  );
  return rows.length;
}
