import type { Queryable } from './db.js';

export type AdminRole = 'admin' | 'viewer';

export interface AdminRow {
  id: string;
  environment_id: string;
  username: string;
  password_hash: string;
  /** admin: every change; viewer: reads only. */
  role: AdminRole;
  failed_attempts: number;
  locked_until: Date | null;
  last_sign_in_at: Date | null;
  created_at: Date;
}

export interface AdminSessionRow {
  token_hash: string;
  admin_id: string;
  /** SHA-256 (hex) of the session's CSRF token. */
  csrf_token_hash: string;
  expires_at: Date;
  created_at: Date;
}

export async function insertAdmin(
  db: Queryable,
  row: Pick<AdminRow, 'id' | 'environment_id' | 'username' | 'password_hash' | 'role'>,
): Promise<AdminRow | undefined> {
  // The column's default is "admin": left unnamed then, so a store still before migration 20 (an
  // upgrade's tests) takes the statement too.
  const viewer = row.role !== 'admin';
  const rows = await db.query<AdminRow>(
    `INSERT INTO admin_users (id, environment_id, username, password_hash${viewer ? ', role' : ''})
     VALUES ($1, $2, $3, $4${viewer ? ', $5' : ''})
     ON CONFLICT (username) DO NOTHING RETURNING *`,
    [row.id, row.environment_id, row.username, row.password_hash, ...(viewer ? [row.role] : [])],
  );
  return rows[0];
}

export async function countAdmins(db: Queryable): Promise<number> {
  const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM admin_users');
  return Number(rows[0]?.n ?? 0);
}

/** An environment's admins, by username (a handful). */
export async function listAdmins(db: Queryable, environmentId: string): Promise<AdminRow[]> {
  return db.query<AdminRow>(
    'SELECT * FROM admin_users WHERE environment_id = $1 ORDER BY username LIMIT 1000',
    [environmentId],
  );
}

/** Admins with the role "admin" (those who can change things) in an environment. */
export async function countFullAdmins(db: Queryable, environmentId: string): Promise<number> {
  const rows = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM admin_users WHERE environment_id = $1 AND role = 'admin'",
    [environmentId],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function setAdminRole(
  db: Queryable,
  environmentId: string,
  username: string,
  role: AdminRole,
): Promise<AdminRow | undefined> {
  const rows = await db.query<AdminRow>(
    'UPDATE admin_users SET role = $3 WHERE environment_id = $1 AND username = $2 RETURNING *',
    [environmentId, username, role],
  );
  return rows[0];
}

/** Deletes an admin (its sessions go with it). */
export async function deleteAdmin(db: Queryable, environmentId: string, username: string): Promise<boolean> {
  const rows = await db.query(
    'DELETE FROM admin_users WHERE environment_id = $1 AND username = $2 RETURNING id',
    [environmentId, username],
  );
  return rows.length > 0;
}

export async function findAdminByUsername(db: Queryable, username: string): Promise<AdminRow | undefined> {
  return (await db.query<AdminRow>('SELECT * FROM admin_users WHERE username = $1', [username]))[0];
}

export async function setAdminPassword(db: Queryable, username: string, hash: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE admin_users SET password_hash = $2, failed_attempts = 0, locked_until = NULL
     WHERE username = $1 RETURNING id`,
    [username, hash],
  );
  return rows.length > 0;
}

/** Counts a failed sign-in; a positive `lockSeconds` also locks the account that long. */
export async function recordFailedSignIn(db: Queryable, id: string, lockSeconds: number): Promise<void> {
  await db.query(
    `UPDATE admin_users SET failed_attempts = failed_attempts + 1,
       locked_until = CASE WHEN $2::int > 0 THEN now() + make_interval(secs => $2::int) ELSE locked_until END
     WHERE id = $1`,
    [id, lockSeconds],
  );
}

export async function recordSignIn(db: Queryable, id: string): Promise<void> {
  await db.query(
    'UPDATE admin_users SET failed_attempts = 0, locked_until = NULL, last_sign_in_at = now() WHERE id = $1',
    [id],
  );
}

export async function insertAdminSession(
  db: Queryable,
  row: Pick<AdminSessionRow, 'token_hash' | 'admin_id' | 'csrf_token_hash' | 'expires_at'>,
): Promise<void> {
  await db.query(
    'INSERT INTO admin_sessions (token_hash, admin_id, csrf_token_hash, expires_at) VALUES ($1, $2, $3, $4)',
    [row.token_hash, row.admin_id, row.csrf_token_hash, row.expires_at],
  );
}

export async function findAdminSession(
  db: Queryable,
  tokenHash: string,
): Promise<(AdminSessionRow & { username: string; environment_id: string; role: AdminRole }) | undefined> {
  const rows = await db.query<
    AdminSessionRow & { username: string; environment_id: string; role: AdminRole }
  >(
    `SELECT s.*, a.username, a.environment_id, a.role FROM admin_sessions s JOIN admin_users a ON a.id = s.admin_id
     WHERE s.token_hash = $1 AND s.expires_at > now()`,
    [tokenHash],
  );
  return rows[0];
}

export async function deleteAdminSession(db: Queryable, tokenHash: string): Promise<void> {
  await db.query('DELETE FROM admin_sessions WHERE token_hash = $1 OR expires_at < now()', [tokenHash]);
}

export async function deleteSessionsOf(db: Queryable, username: string): Promise<void> {
  await db.query(
    'DELETE FROM admin_sessions WHERE admin_id IN (SELECT id FROM admin_users WHERE username = $1)',
    [username],
  );
}
