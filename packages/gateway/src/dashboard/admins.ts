import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { FailureThrottle, holdBackWrongAnswer } from '../auth/failure-throttle.js';
import { Problem } from '../errors/problem.js';
import {
  type AdminRole,
  type AdminRow,
  countAdmins,
  countFullAdmins,
  deleteAdmin,
  deleteAdminSession,
  deleteSessionsOf,
  findAdminByUsername,
  findAdminSession,
  insertAdmin,
  insertAdminSession,
  listAdmins,
  recordFailedSignIn,
  recordSignIn,
  setAdminPassword,
  setAdminRole,
} from '../store/admins.js';
import type { Database, Queryable } from '../store/db.js';
import { newId } from '../store/ids.js';
import { generatePassword, hashPassword, unusableHash, verifyPassword } from './passwords.js';

/** How long a dashboard session lasts from sign-in. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;
/**
 * Wrong passwords in a row that lock an account: for 30 s at first, twice as long with each further
 * failure. A lock (like the address throttle) only changes how wrong passwords are answered.
 */
const LOCK_AFTER = 5;
const FIRST_LOCK_SECONDS = 30;
const MAX_LOCK_SECONDS = 15 * 60;
const FIRST_ADMIN_LOCK = 7_406_233;
/** Serialises changes that could leave an environment without an admin. */
const ROLE_CHANGE_LOCK = 7_406_234;

export type { AdminRole };
export const ADMIN_ROLES: readonly AdminRole[] = ['admin', 'viewer'];

export const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
/** What the audit log records for a sign-in with a username no account has. */
export const UNKNOWN_USERNAME = '(unknown username)';

export interface NewAdmin {
  username: string;
  password: string;
  role?: AdminRole;
}

/** An admin account as the API shows it (never its password hash). */
export interface AdminView {
  username: string;
  role: AdminRole;
  created_at: string;
  last_sign_in_at: string | null;
}

export function adminView(row: AdminRow): AdminView {
  return {
    username: row.username,
    role: row.role ?? 'admin',
    created_at: row.created_at.toISOString(),
    last_sign_in_at: row.last_sign_in_at?.toISOString() ?? null,
  };
}

export interface SignedIn {
  username: string;
  role: AdminRole;
  environmentId: string;
  /** The cookie's value: only its hash is stored. */
  sessionToken: string;
  /** Derived from the cookie's value (csrfTokenOf); only its hash is stored. */
  csrfToken: string;
  expiresAt: Date;
}

export interface AdminSession {
  adminId: string;
  username: string;
  role: AdminRole;
  environmentId: string;
  csrfToken: string;
  expiresAt: Date;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * A session's CSRF token: an HMAC of the cookie's value. The page must be able to ask for it again
 * after a reload (GET /api/v1/admin/session), yet the store keeps only its hash, so it is derived
 * from the one secret each request brings (the HttpOnly cookie), which another site's page can
 * make the browser send but never read.
 */
const csrfTokenOf = (sessionToken: string) =>
  createHmac('sha256', sessionToken).update('portico dashboard csrf token').digest('base64url');

/** Whether a token matches a stored SHA-256 hash, in constant time (the hashes have one length). */
function matchesHash(token: string, hash: string): boolean {
  const given = Buffer.from(hashToken(token), 'hex');
  const stored = Buffer.from(hash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/**
 * Dashboard operators: accounts (scrypt password hashes), sign-in with lockout, and sessions (a
 * random cookie value and a CSRF token the page must echo in a header; only their hashes are stored).
 */
export class AdminService {
  /** Guessing from one address across many usernames is slowed here (per process). */
  private readonly byAddress = new FailureThrottle(30, 15 * 60_000);

  constructor(private readonly db: Database) {}

  /**
   * The first admin, when there is none yet: `admin` with a random one-time password to print.
   * Replicas starting together serialise on an advisory lock, so only one creates (and prints) it.
   */
  async ensureFirstAdmin(environmentId: string): Promise<NewAdmin | undefined> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [FIRST_ADMIN_LOCK]);
      if ((await countAdmins(tx)) > 0) return undefined;
      return this.insert(tx, environmentId, 'admin', generatePassword());
    });
  }

  /** A new admin (or viewer) with the given password, or a generated one. */
  async create(
    environmentId: string,
    username: string,
    password?: string,
    role: AdminRole = 'admin',
  ): Promise<NewAdmin> {
    checkUsername(username);
    checkRole(role);
    if (password !== undefined) checkPassword(password);
    return this.insert(this.db, environmentId, username, password ?? generatePassword(), role);
  }

  async list(environmentId: string): Promise<AdminView[]> {
    return (await listAdmins(this.db, environmentId)).map(adminView);
  }

  /** Changes a role; the last admin of an environment cannot become a viewer. */
  async setRole(environmentId: string, username: string, role: AdminRole): Promise<AdminView> {
    checkRole(role);
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [ROLE_CHANGE_LOCK]);
      const row = await setAdminRole(tx, environmentId, username, role);
      if (!row) throw noAdmin(username);
      if (role !== 'admin' && (await countFullAdmins(tx, environmentId)) === 0) throw lastAdmin(username);
      return adminView(row);
    });
  }

  /** Deletes an admin account (and its sessions); never one's own, never the last admin. */
  async remove(environmentId: string, username: string, by: string | undefined): Promise<void> {
    if (by !== undefined && username === by) {
      throw new Problem(
        'invalid_input',
        'You cannot delete your own admin account; ask another admin, or sign in as another one.',
        { errors: [{ path: '/username', message: 'is the signed-in admin' }] },
      );
    }
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [ROLE_CHANGE_LOCK]);
      if (!(await deleteAdmin(tx, environmentId, username))) throw noAdmin(username);
      if ((await countFullAdmins(tx, environmentId)) === 0) throw lastAdmin(username);
    });
  }

  /** Sets a new password (given or generated) and signs the admin out everywhere. */
  async resetPassword(username: string, password?: string): Promise<NewAdmin> {
    if (password !== undefined) checkPassword(password);
    const next = password ?? generatePassword();
    if (!(await setAdminPassword(this.db, username, await hashPassword(next)))) {
      throw new Problem('not_found', `No admin account is named "${username}".`);
    }
    await deleteSessionsOf(this.db, username);
    return { username, password: next };
  }

  /**
   * Checks a password and opens a session; wrong passwords count towards a lockout. The password is
   * checked even while the account or the address is locked, and the right one always signs in: a
   * lock that refused it would let anybody who knows a username keep the operator out.
   */
  async signIn(username: string, password: string, address: string): Promise<SignedIn> {
    const admin = USERNAME.test(username) ? await findAdminByUsername(this.db, username) : undefined;
    // An unknown username costs the same hash as a known one, so timing tells nothing.
    const matches = await verifyPassword(password, admin?.password_hash ?? (await unusableHash()));
    if (!admin || !matches) throw await this.wrongPassword(admin, username, address);
    // The address's count is not cleared: one account's right password must not buy its holder
    // thirty more guesses at the others' (it never keeps the right password out anyway).
    await recordSignIn(this.db, admin.id);
    const sessionToken = randomBytes(32).toString('base64url');
    const csrfToken = csrfTokenOf(sessionToken);
    const expiresAt = new Date(Date.now() + SESSION_TTL_SECONDS * 1000);
    await insertAdminSession(this.db, {
      token_hash: hashToken(sessionToken),
      admin_id: admin.id,
      csrf_token_hash: hashToken(csrfToken),
      expires_at: expiresAt,
    });
    return {
      username: admin.username,
      role: admin.role ?? 'admin',
      environmentId: admin.environment_id,
      sessionToken,
      csrfToken,
      expiresAt,
    };
  }

  /**
   * Counts a wrong password and says how to answer it: 401, or 429 with Retry-After (held back a
   * moment, to slow guessing) while the account is locked or the address throttled.
   */
  private async wrongPassword(
    admin: AdminRow | undefined,
    username: string,
    address: string,
  ): Promise<Problem> {
    // Decided by the failures before this one: the fifth wrong password is still a plain 401.
    const addressWait = this.byAddress.retryAfterMs(address);
    this.byAddress.fail(address);
    let lockMs = 0;
    if (admin) {
      const wasLocked = (admin.locked_until?.getTime() ?? 0) > Date.now();
      const over = admin.failed_attempts + 1 - LOCK_AFTER;
      const lock = over >= 0 ? Math.min(MAX_LOCK_SECONDS, FIRST_LOCK_SECONDS * 2 ** over) : 0;
      await recordFailedSignIn(this.db, admin.id, lock);
      if (wasLocked) lockMs = lock * 1000;
    }
    if (lockMs <= 0 && addressWait <= 0) {
      return new Problem(
        'invalid_credentials',
        `The username or password is wrong. After ${LOCK_AFTER} failed attempts in a row the account is locked for ${FIRST_LOCK_SECONDS} s, doubling with each further failure: wrong passwords are then answered 429, while the right one still signs in. An operator with shell access can set a new password with "portico admins reset-password <username>".`,
      );
    }
    await holdBackWrongAnswer();
    return lockMs > 0
      ? locked(lockMs, `the account "${username}" is locked after repeated failed sign-ins`)
      : locked(addressWait, 'too many sign-ins have failed from this address');
  }

  /**
   * How a failed sign-in names who tried, for the audit log: the username when an account has it;
   * otherwise nothing of what was typed (people type their password into the username field).
   */
  async auditName(username: string): Promise<string> {
    const admin = USERNAME.test(username) ? await findAdminByUsername(this.db, username) : undefined;
    return admin ? admin.username : UNKNOWN_USERNAME;
  }

  /** The live session a cookie value names, or undefined. */
  async session(sessionToken: string): Promise<AdminSession | undefined> {
    return (await this.find(sessionToken))?.session;
  }

  private async find(sessionToken: string) {
    const row = await findAdminSession(this.db, hashToken(sessionToken));
    if (!row) return undefined;
    const session: AdminSession = {
      adminId: row.admin_id,
      username: row.username,
      role: row.role ?? 'admin',
      environmentId: row.environment_id,
      csrfToken: csrfTokenOf(sessionToken),
      expiresAt: row.expires_at,
    };
    return { session, csrfTokenHash: row.csrf_token_hash };
  }

  /**
   * The session of a cookie value when the request also carries its CSRF token: a page on another
   * site can make the browser send the cookie, but cannot read the token to put in the header.
   */
  async authenticate(sessionToken: string, csrfHeader: string | undefined): Promise<AdminSession> {
    const found = await this.find(sessionToken);
    if (!found) {
      throw new Problem(
        'unauthenticated',
        'The dashboard session has expired or was signed out; sign in again at /dashboard.',
      );
    }
    if (!csrfHeader || !matchesHash(csrfHeader, found.csrfTokenHash)) {
      throw new Problem(
        'csrf_failed',
        'A request authenticated by the dashboard session cookie must carry the session’s CSRF token in the X-CSRF-Token header (GET /api/v1/admin/session returns it).',
      );
    }
    return found.session;
  }

  async signOut(sessionToken: string): Promise<void> {
    await deleteAdminSession(this.db, hashToken(sessionToken));
  }

  private async insert(
    db: Queryable,
    environmentId: string,
    username: string,
    password: string,
    role: AdminRole = 'admin',
  ): Promise<NewAdmin> {
    const row = await insertAdmin(db, {
      id: newId('adm'),
      environment_id: environmentId,
      username,
      password_hash: await hashPassword(password),
      role,
    });
    if (!row) throw new Problem('admin_exists', `An admin account named "${username}" exists already.`);
    return { username, password, role };
  }
}

function locked(ms: number, why: string): Problem {
  const seconds = Math.ceil(ms / 1000);
  return new Problem(
    'rate_limited',
    `The username or password is wrong, and ${why}: wrong passwords are answered like this for ${seconds} s. The right password signs in even now.`,
    { retryAfterMs: seconds * 1000, headers: { 'retry-after': String(seconds) } },
  );
}

const noAdmin = (username: string) =>
  new Problem('not_found', `No admin account is named "${username}"; GET /api/v1/admin/admins lists them.`);

const lastAdmin = (username: string) =>
  new Problem(
    'last_admin',
    `"${username}" is the environment's last admin (role "admin"): make another account an admin first.`,
  );

function checkRole(role: string): void {
  if (!ADMIN_ROLES.includes(role as AdminRole)) {
    throw new Problem('invalid_input', `role must be ${ADMIN_ROLES.join(' or ')}, not "${role}".`, {
      errors: [{ path: '/role', message: `must be ${ADMIN_ROLES.join(' or ')}` }],
    });
  }
}

function checkUsername(username: string): void {
  if (!USERNAME.test(username)) {
    throw new Problem('invalid_input', 'username must be 1–64 letters, digits, ".", "_", "@" or "-".', {
      errors: [{ path: '/username', message: 'must be 1–64 letters, digits, ".", "_", "@" or "-"' }],
    });
  }
}

function checkPassword(password: string): void {
  if (password.length < 12 || password.length > 256) {
    throw new Problem('invalid_input', 'password must be 12–256 characters long.', {
      errors: [{ path: '/password', message: 'must be 12–256 characters long' }],
    });
  }
}
