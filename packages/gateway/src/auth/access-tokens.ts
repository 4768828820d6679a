import { hkdfSync, randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Keyring } from '../secrets/keyring.js';

/**
 * Gateway access tokens: HS256 JWTs whose signing key is derived from the master key ring, so every
 * replica sharing PORTICO_MASTER_KEY can verify every other replica's tokens and a rotated ring
 * keeps accepting tokens signed with the previous key until it is removed.
 */
const AUDIENCE = 'portico-api';

export interface AccessTokenClaims {
  clientId: string;
  environmentId: string;
}

export interface IssuedAccessToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** Verified tokens kept in memory (a token is reused for its whole life; WebCrypto HMAC is not free). */
const VERIFIED_CACHE_LIMIT = 10_000;

export class AccessTokenIssuer {
  private readonly signingKeys = new Map<string, Uint8Array>();
  private readonly verified = new Map<string, { claims: AccessTokenClaims; expiresAt: number }>();

  constructor(
    private readonly keyring: Keyring,
    private readonly issuer: string,
    private readonly ttlSeconds: number,
  ) {
    for (const id of keyring.keyIds) {
      const master = keyring.key(id)!;
      this.signingKeys.set(
        id,
        new Uint8Array(hkdfSync('sha256', master, 'portico', 'gateway-access-token', 32)),
      );
    }
  }

  async issue(claims: AccessTokenClaims): Promise<IssuedAccessToken> {
    const kid = this.keyring.activeKeyId;
    const token = await new SignJWT({ env: claims.environmentId })
      .setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setAudience(AUDIENCE)
      .setSubject(claims.clientId)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .setJti(randomUUID())
      .sign(this.signingKeys.get(kid)!);
    return { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds };
  }

  /** The claims of a token verified before and not yet expired, without waiting (the hot path). */
  verifiedBefore(token: string): AccessTokenClaims | undefined {
    const cached = this.verified.get(token);
    return cached && cached.expiresAt > Date.now() ? cached.claims : undefined;
  }

  /** The token's claims, or a reason it is refused (shown to the caller; says nothing secret). */
  async verify(
    token: string,
  ): Promise<{ ok: true; claims: AccessTokenClaims } | { ok: false; reason: string }> {
    const cached = this.verifiedBefore(token);
    if (cached) return { ok: true, claims: cached };
    try {
      const { payload } = await jwtVerify(
        token,
        (header) => {
          const key = header.kid ? this.signingKeys.get(header.kid) : undefined;
          if (!key) throw new joseErrors.JWSSignatureVerificationFailed();
          return key;
        },
        { issuer: this.issuer, audience: AUDIENCE, algorithms: ['HS256'], typ: 'at+jwt' },
      );
      if (typeof payload.sub !== 'string' || typeof payload.env !== 'string') {
        return { ok: false, reason: 'The access token is missing its subject.' };
      }
      const claims = { clientId: payload.sub, environmentId: payload.env };
      if (this.verified.size >= VERIFIED_CACHE_LIMIT) this.verified.clear();
      this.verified.set(token, { claims, expiresAt: (payload.exp ?? 0) * 1000 });
      return { ok: true, claims };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) {
        return {
          ok: false,
          reason: 'The access token has expired; request a new one from POST /oauth/token.',
        };
      }
      return {
        ok: false,
        reason: 'The access token is not valid for this gateway; request a new one from POST /oauth/token.',
      };
    }
  }
}
