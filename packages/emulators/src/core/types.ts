import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Emulator keys: one OAuth server and one path prefix each. Google serves Calendar, Drive, Sheets and Docs. */
export type EmulatorKey = 'notion' | 'google' | 'hubspot' | 'microsoft';

/** A person who can sign in at an emulated provider. Each has their own data. */
export interface EmulatedUser {
  id: string;
  name: string;
  email: string;
}

export interface RegisteredClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

/** A user's consent to a client: outlives access tokens, dies on revocation. */
export interface Grant {
  id: string;
  clientId: string;
  userId: string;
  scopes: string[];
  /** Current refresh token (undefined when the provider issues none). */
  refreshToken?: string;
  revoked: boolean;
  createdAt: number;
}

export interface AccessTokenRecord {
  token: string;
  grantId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  /** Epoch ms; null = never expires (Notion). */
  expiresAt: number | null;
  revoked: boolean;
}

/** Why a bearer token was refused, so each provider can answer in its own words. */
export type AuthFailure = 'missing' | 'malformed' | 'unknown' | 'expired' | 'revoked';

export type OAuthErrorKind =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

export interface TokenIssue {
  grant: Grant;
  access: AccessTokenRecord;
  /**
   * Refresh token newly issued by this response (undefined: none new). On a 'static' refresh it is
   * undefined; a provider that echoes the unchanged token (HubSpot) returns `grant.refreshToken`.
   */
  refreshToken?: string;
  grantType: 'authorization_code' | 'refresh_token';
}

/**
 * The provider-specific facts of an OAuth authorization server. The generic server in
 * core/oauth.ts does the protocol; the profile says how this provider spells it.
 */
export interface OAuthProfile {
  /** Paths relative to the emulator prefix, e.g. '/v1/oauth/authorize'. */
  authorizePath: string;
  tokenPath: string;
  /** How the client may authenticate at the token endpoint. */
  clientAuth: Array<'client_secret_basic' | 'client_secret_post'>;
  /** Body encodings the token endpoint accepts. */
  tokenBodyFormats: Array<'form' | 'json'>;
  pkce: 'supported' | 'unsupported';
  /** Separator of the `scope` parameter. */
  scopeSeparator: ' ' | ',';
  /** Default access-token lifetime in seconds; null = no expiry. Configurable per instance. */
  accessTokenTtlSeconds: number | null;
  /** 'none': no refresh token; 'static': issued once, reused; 'rotate': a new one on every refresh, old one dies. */
  refreshTokens: 'none' | 'static' | 'rotate';
  /** Provider-specific checks of the authorize request; return an error description or null. */
  validateAuthorizeRequest?(params: Record<string, string>): string | null;
  /** Token endpoint success body. */
  tokenResponse(issue: TokenIssue, ctx: ProviderContext): Record<string, unknown>;
  /** Token endpoint error: status and body in the provider's shape. */
  tokenError(kind: OAuthErrorKind, description: string): { status: number; body: unknown };
  /** Prefix of issued tokens, to look like the provider's (e.g. 'ya29.', 'ntn_'). */
  tokenPrefix?: { access?: string; refresh?: string; code?: string };
}

/** What a provider's API routes get from the core. */
export interface ProviderContext {
  key: EmulatorKey;
  users: EmulatedUser[];
  clock(): number;
  /**
   * Resolves the request's `Authorization: Bearer` token. Never replies; the provider answers
   * a failure in its own error shape.
   */
  authenticate(
    req: FastifyRequest,
  ): { ok: true; token: AccessTokenRecord; user: EmulatedUser } | { ok: false; reason: AuthFailure };
  /** Externally visible base URL of this emulator prefix for this request (for webUrl, downloadUrl, next links). */
  publicBase(req: FastifyRequest): string;
  /** Revokes the grant behind an access or refresh token; false when unknown. */
  revokeToken(token: string): boolean;
  /** Resolves a bare access-token string (token-info endpoints); same outcomes as `authenticate`. */
  resolveAccessToken(
    token: string,
  ): { ok: true; token: AccessTokenRecord; user: EmulatedUser } | { ok: false; reason: AuthFailure };
  /** The live grant behind a current refresh token (undefined when unknown or rotated out). */
  grantForRefreshToken(token: string): Grant | undefined;
  /** Random id helper shared by emulators. */
  randomId(bytes?: number): string;
}

/** One emulated provider: its OAuth profile, its seeded data and its API routes. */
export interface EmulatorModule<State = unknown> {
  key: EmulatorKey;
  /** Path prefix under the emulator root, e.g. '/notion'. */
  prefix: string;
  users: EmulatedUser[];
  oauth: OAuthProfile;
  /** Fresh seeded state; called at start and on reset. */
  createState(ctx: ProviderContext): State;
  /** Registers the API routes inside the provider's prefix scope. `getState` always returns the current state. */
  registerRoutes(app: FastifyInstance, ctx: ProviderContext, getState: () => State): void | Promise<void>;
  /** Answers a refused bearer token in the provider's shape. */
  sendAuthError(reply: FastifyReply, reason: AuthFailure): FastifyReply;
  /** Answers an unknown route in the provider's shape. */
  sendNotFound(reply: FastifyReply, req: FastifyRequest): FastifyReply;
}
