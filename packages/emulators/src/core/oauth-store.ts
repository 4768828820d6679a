import { randomBytes, timingSafeEqual } from 'node:crypto';
import type {
  AccessTokenRecord,
  AuthFailure,
  Grant,
  GrantFilter,
  OAuthErrorCause,
  OAuthProfile,
  RegisteredClient,
} from './types.js';

/** An authorization code waiting to be exchanged: single use, bound to everything the consent saw. */
export interface AuthorizationCode {
  code: string;
  clientId: string;
  redirectUri: string;
  userId: string;
  scopes: string[];
  codeChallenge?: string;
  codeChallengeMethod?: 'S256' | 'plain';
  /** The authorize request's parameters (without the consent form's `decision` / `user_id`). */
  authorizeParams: Record<string, string>;
  expiresAt: number;
  used: boolean;
  /** Grant created by the first exchange, so a replay can be traced to it. */
  grantId?: string;
}

export type { GrantFilter } from './types.js';

/** Outcome of looking up a refresh token at the token endpoint. */
export type RefreshTokenCheck =
  | { ok: true; grant: Grant }
  | { ok: false; cause: Extract<OAuthErrorCause, 'refresh_unknown' | 'refresh_revoked' | 'refresh_rotated'> };

export interface CreateGrantOptions {
  /** Give the grant a refresh token (default: whenever the profile issues them). */
  refreshToken?: boolean;
  authorizeParams?: Record<string, string>;
}

export const CODE_LIFETIME_MS = 10 * 60 * 1000;

/**
 * What of an emulator's OAuth bookkeeping outlives its process (the gateway keeps it in its
 * store): the grants, with their current refresh tokens, and the access tokens still in force.
 * Clients are configuration the gateway registers again; codes live ten minutes; a rotated-out or
 * expired token is then simply unknown, which the provider refuses alike.
 */
export interface OAuthSnapshot {
  grants: Grant[];
  accessTokens: AccessTokenRecord[];
}

export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** Constant-time string comparison (for secrets and PKCE values). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The OAuth bookkeeping of one emulator: clients, consents (grants), codes and tokens. Clients
 * survive a reset (they are configuration); everything else is session state.
 */
export class OAuthStore {
  readonly clients = new Map<string, RegisteredClient>();
  readonly grants = new Map<string, Grant>();
  readonly accessTokens = new Map<string, AccessTokenRecord>();
  /** Refresh token → grant id. Only current refresh tokens are present. */
  readonly refreshTokens = new Map<string, string>();
  /** Every refresh token ever issued → grant id, to tell a rotated-out or revoked token from an unknown one. */
  readonly issuedRefreshTokens = new Map<string, string>();
  readonly codes = new Map<string, AuthorizationCode>();
  private ttl: number | null;
  /** Told of every change to grants and tokens (the host persists them). */
  onChange: () => void = () => {};
  /** The control API set the lifetime: it then beats the profile's per-client lifetimes until reset. */
  private ttlSet = false;

  constructor(
    private readonly profile: OAuthProfile,
    private readonly clock: () => number,
    private readonly defaultTtl: number | null,
  ) {
    this.ttl = defaultTtl;
  }

  /** Access-token lifetime in seconds currently in force; null = never expires. */
  get ttlSeconds(): number | null {
    return this.ttl;
  }

  set ttlSeconds(seconds: number | null) {
    this.ttl = seconds;
    this.ttlSet = true;
  }

  reset(opts: { clients?: boolean } = {}): void {
    this.grants.clear();
    this.accessTokens.clear();
    this.refreshTokens.clear();
    this.issuedRefreshTokens.clear();
    this.codes.clear();
    this.ttl = this.defaultTtl;
    this.ttlSet = false;
    if (opts.clients) this.clients.clear();
    this.onChange();
  }

  snapshot(): OAuthSnapshot {
    const now = this.clock();
    return {
      grants: [...this.grants.values()],
      accessTokens: [...this.accessTokens.values()].filter(
        (r) => !r.revoked && (r.expiresAt === null || r.expiresAt > now),
      ),
    };
  }

  /** Takes back a snapshot over whatever this store holds (at start, before any request). */
  restore(snapshot: OAuthSnapshot): void {
    for (const grant of snapshot.grants) {
      this.grants.set(grant.id, grant);
      if (grant.refreshToken === undefined) continue;
      this.issuedRefreshTokens.set(grant.refreshToken, grant.id);
      if (!grant.revoked) this.refreshTokens.set(grant.refreshToken, grant.id);
    }
    for (const record of snapshot.accessTokens) this.accessTokens.set(record.token, record);
  }

  /** The lifetime of the next access token of a grant: the profile's for its client, unless set here. */
  private ttlFor(grant: Grant): number | null {
    if (this.ttlSet || !this.profile.accessTokenTtlFor) return this.ttl;
    const own = this.profile.accessTokenTtlFor(this.clients.get(grant.clientId));
    return own === undefined ? this.ttl : own;
  }

  registerClient(client: RegisteredClient): void {
    this.clients.set(client.clientId, { ...client, redirectUris: [...client.redirectUris] });
  }

  createCode(input: Omit<AuthorizationCode, 'code' | 'expiresAt' | 'used'>): AuthorizationCode {
    const code: AuthorizationCode = {
      ...input,
      code: (this.profile.tokenPrefix?.code ?? '') + randomToken(24),
      expiresAt: this.clock() + CODE_LIFETIME_MS,
      used: false,
    };
    this.codes.set(code.code, code);
    return code;
  }

  /** Checks client credentials as the token endpoint does. */
  verifyClient(
    clientId: string,
    clientSecret: string,
  ): { ok: true; client: RegisteredClient } | { ok: false; cause: 'unknown_client' | 'wrong_secret' } {
    const client = this.clients.get(clientId);
    if (!client) return { ok: false, cause: 'unknown_client' };
    if (!safeEqual(client.clientSecret, clientSecret)) return { ok: false, cause: 'wrong_secret' };
    return { ok: true, client };
  }

  createGrant(clientId: string, userId: string, scopes: string[], opts: CreateGrantOptions = {}): Grant {
    const grant: Grant = {
      id: 'grant_' + randomToken(12),
      clientId,
      userId,
      scopes: [...scopes],
      revoked: false,
      createdAt: this.clock(),
    };
    if (opts.authorizeParams) grant.authorizeParams = Object.freeze({ ...opts.authorizeParams });
    if (this.profile.refreshTokens !== 'none' && opts.refreshToken !== false) this.setRefreshToken(grant);
    this.grants.set(grant.id, grant);
    this.onChange();
    return grant;
  }

  /** Gives the grant a fresh refresh token; the previous one stops working at once. */
  setRefreshToken(grant: Grant): string {
    if (grant.refreshToken) this.refreshTokens.delete(grant.refreshToken);
    const token = (this.profile.tokenPrefix?.refresh ?? '') + randomToken(32);
    grant.refreshToken = token;
    this.refreshTokens.set(token, grant.id);
    this.issuedRefreshTokens.set(token, grant.id);
    this.onChange();
    return token;
  }

  issueAccessToken(grant: Grant): AccessTokenRecord {
    const ttl = this.ttlFor(grant);
    const record: AccessTokenRecord = {
      token: (this.profile.tokenPrefix?.access ?? '') + randomToken(32),
      grantId: grant.id,
      clientId: grant.clientId,
      userId: grant.userId,
      scopes: [...grant.scopes],
      expiresAt: ttl === null ? null : this.clock() + ttl * 1000,
      revoked: false,
    };
    this.accessTokens.set(record.token, record);
    this.onChange();
    return record;
  }

  grantForRefreshToken(token: string): Grant | undefined {
    const grantId = this.refreshTokens.get(token);
    return grantId ? this.grants.get(grantId) : undefined;
  }

  /** The live grant behind a refresh token, or why there is none. */
  checkRefreshToken(token: string): RefreshTokenCheck {
    const grantId = this.issuedRefreshTokens.get(token);
    const grant = grantId ? this.grants.get(grantId) : undefined;
    if (!grant) return { ok: false, cause: 'refresh_unknown' };
    if (grant.revoked) return { ok: false, cause: 'refresh_revoked' };
    if (grant.refreshToken !== token || !this.refreshTokens.has(token))
      return { ok: false, cause: 'refresh_rotated' };
    return { ok: true, grant };
  }

  /** Live (unrevoked) grants of one user to one client. */
  liveGrants(clientId: string, userId: string): Grant[] {
    return [...this.grants.values()].filter(
      (g) => !g.revoked && g.clientId === clientId && g.userId === userId,
    );
  }

  resolveAccessToken(
    token: string,
  ): { ok: true; record: AccessTokenRecord } | { ok: false; reason: AuthFailure; expiredAt?: number } {
    const record = this.accessTokens.get(token);
    if (!record) return { ok: false, reason: 'unknown' };
    const grant = this.grants.get(record.grantId);
    if (record.revoked || !grant || grant.revoked) return { ok: false, reason: 'revoked' };
    if (record.expiresAt !== null && record.expiresAt <= this.clock())
      return { ok: false, reason: 'expired', expiredAt: record.expiresAt };
    return { ok: true, record };
  }

  revokeGrant(grant: Grant): void {
    grant.revoked = true;
    if (grant.refreshToken) this.refreshTokens.delete(grant.refreshToken);
    for (const record of this.accessTokens.values()) {
      if (record.grantId === grant.id) record.revoked = true;
    }
    this.onChange();
  }

  /** Revokes the grant behind an access or refresh token; false when the token is unknown. */
  revokeToken(token: string): boolean {
    const grantId = this.accessTokens.get(token)?.grantId ?? this.refreshTokens.get(token);
    const grant = grantId ? this.grants.get(grantId) : undefined;
    if (!grant) return false;
    this.revokeGrant(grant);
    return true;
  }

  revokeGrants(filter: GrantFilter = {}): number {
    let count = 0;
    for (const grant of this.grants.values()) {
      if (grant.revoked || !this.matches(grant, filter)) continue;
      this.revokeGrant(grant);
      count++;
    }
    return count;
  }

  /** Makes matching access tokens expired now (also never-expiring ones, so tests can force a refresh). */
  expireAccessTokens(filter: GrantFilter = {}): number {
    const now = this.clock();
    let count = 0;
    for (const record of this.accessTokens.values()) {
      if (!this.matches(record, filter)) continue;
      if (record.expiresAt === null || record.expiresAt > now) {
        record.expiresAt = now - 1;
        count++;
      }
    }
    if (count > 0) this.onChange();
    return count;
  }

  private matches(item: { userId: string; clientId: string }, filter: GrantFilter): boolean {
    return (
      (filter.userId === undefined || item.userId === filter.userId) &&
      (filter.clientId === undefined || item.clientId === filter.clientId) &&
      (filter.provider === undefined || this.clients.get(item.clientId)?.provider === filter.provider)
    );
  }
}
