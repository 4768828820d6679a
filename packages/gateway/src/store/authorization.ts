import type { Queryable } from './db.js';

export interface LinkRow {
  token_hash: string;
  account_id: string;
  redirect_url: string | null;
  caller_state: string | null;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertLink(db: Queryable, row: Omit<LinkRow, 'used_at'>): Promise<void> {
  await db.query(
    `INSERT INTO authorization_links (token_hash, account_id, redirect_url, caller_state, expires_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [row.token_hash, row.account_id, row.redirect_url, row.caller_state, row.expires_at],
  );
}

/** Marks the link used, atomically; undefined when it is unknown, used or expired. */
export async function consumeLink(db: Queryable, tokenHash: string): Promise<LinkRow | undefined> {
  const rows = await db.query<LinkRow>(
    `UPDATE authorization_links SET used_at = now()
     WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING *`,
    [tokenHash],
  );
  return rows[0];
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
  expires_at: Date;
  used_at: Date | null;
}

export async function insertAuthorizationRequest(
  db: Queryable,
  row: Omit<AuthorizationRequestRow, 'used_at'>,
): Promise<void> {
  await db.query(
    `INSERT INTO authorization_requests
       (id, state_hash, account_id, connection_id, code_verifier, redirect_url, caller_state, browser_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      row.id,
      row.state_hash,
      row.account_id,
      row.connection_id,
      row.code_verifier,
      row.redirect_url,
      row.caller_state,
      row.browser_hash,
      row.expires_at,
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
