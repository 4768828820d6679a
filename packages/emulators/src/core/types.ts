import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Emulator keys: one path prefix each. Google serves Calendar, Drive, Sheets and Docs; definitions
 * plays any provider from its JSON definition, one OAuth server per definition.
 */
export type EmulatorKey = 'notion' | 'google' | 'hubspot' | 'microsoft' | 'definitions' | 'mcp';

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
  /**
   * The provider definition the client belongs to (definitions emulator only, where it is
   * required): a client id serves one definition at a time, the latest registration wins.
   */
  provider?: string;
}

/** Which tokens or grants a control operation applies to. */
export interface GrantFilter {
  userId?: string;
  clientId?: string;
  /** Definitions emulator: only the grants (and API keys) of this definition's key. */
  provider?: string;
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
  /**
   * Parameters of the authorize request the user consented to (e.g. Google's `access_type`,
   * `prompt`), without the consent form's own fields. Undefined for grants minted by the control API.
   */
  authorizeParams?: Readonly<Record<string, string>>;
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

/** Outcome of resolving an access token. */
export type AccessTokenResolution =
  | { ok: true; token: AccessTokenRecord; user: EmulatedUser }
  | {
      ok: false;
      reason: AuthFailure;
      /** For 'expired': when the token expired (epoch ms), for "expired N seconds ago" messages. */
      expiredAt?: number;
    };

export type OAuthErrorKind =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

/**
 * Why the token endpoint refused a request, finer than the RFC 6749 error kind, so a provider can
 * answer in its own vocabulary (HubSpot's BAD_CLIENT_ID vs BAD_CLIENT_SECRET, Microsoft's AADSTS codes)
 * without reading the description.
 */
export type OAuthErrorCause =
  /** The body's Content-Type is not one the profile accepts. */
  | 'unsupported_content_type'
  /** The body did not parse (bad JSON, too large). */
  | 'malformed_body'
  /** A required parameter is absent; `TokenErrorDetail.parameter` names it. */
  | 'missing_parameter'
  /** No client credentials at all. */
  | 'client_auth_missing'
  /** Credentials sent in a way the profile does not accept, or malformed Basic credentials. */
  | 'client_auth_method'
  | 'unknown_client'
  | 'wrong_secret'
  /** The authorization code was never issued. */
  | 'code_unknown'
  | 'code_reused'
  | 'code_expired'
  /** The authorization code belongs to another client. */
  | 'code_client_mismatch'
  | 'redirect_mismatch'
  /** The code was bound to a PKCE challenge and no `code_verifier` came. */
  | 'pkce_missing'
  /** The `code_verifier` is malformed or does not match the challenge. */
  | 'pkce_mismatch'
  /** The refresh token was never issued. */
  | 'refresh_unknown'
  /** The refresh token's grant was revoked (control API, revocation endpoint, reused code, sign-out). */
  | 'refresh_revoked'
  /** The refresh token was replaced by a newer one ('rotate' profiles). */
  | 'refresh_rotated'
  /** The refresh token belongs to another client. */
  | 'refresh_client_mismatch'
  /** The profile issues no refresh tokens. */
  | 'refresh_unsupported'
  /** `grant_type` is neither authorization_code nor refresh_token. */
  | 'unsupported_grant_type';

export interface TokenErrorDetail {
  cause: OAuthErrorCause;
  /** The request's `grant_type` as sent (undefined when absent or not yet read). */
  grantType?: string;
  /** For 'missing_parameter': the parameter's name. */
  parameter?: string;
  /** The client id the request named, for client-authentication failures. */
  clientId?: string;
}

/** What `validateAuthorizeRequest` may answer: a description (→ invalid_request) or an error kind with one. */
export type AuthorizeProblem = string | { error: OAuthErrorKind | (string & {}); description: string };

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
  /** 'required': every authorize request must carry an S256 code challenge. */
  pkce: 'supported' | 'unsupported' | 'required';
  /** Separator of the `scope` parameter. */
  scopeSeparator: ' ' | ',';
  /** The authorize parameter that carries the scopes (default `scope`; Slack's user tokens: `user_scope`). */
  scopeParameter?: string;
  /** The provider's name on the consent and error pages (default: the emulator's). */
  providerName?: string;
  /**
   * Whether this server knows the client (default: every client of the emulator). The definitions
   * emulator shares one store among its definitions, and a client serves only its own.
   */
  servesClient?(client: RegisteredClient): boolean;
  /**
   * A client the server does not know yet but can learn at its authorize endpoint: the MCP
   * specification's client ID metadata document, fetched from the https URL that is its client_id.
   * The client it answers is registered (without a secret: a public client).
   */
  resolveClient?(clientId: string): Promise<RegisteredClient | undefined>;
  /**
   * The token endpoint takes a request naming only `client_id` (RFC 6749 §2.1 public clients, PKCE
   * standing in for a secret) for a client registered without one. Default: every client authenticates.
   */
  publicClients?: boolean;
  /**
   * The access-token lifetime for a client's grants when it differs per client (definitions: each
   * definition's own); undefined = the store's. A lifetime set through the control API wins.
   */
  accessTokenTtlFor?(client: RegisteredClient | undefined): number | null | undefined;
  /** Default access-token lifetime in seconds; null = no expiry. Configurable per instance. */
  accessTokenTtlSeconds: number | null;
  /** 'none': no refresh token; 'static': issued once, reused; 'rotate': a new one on every refresh, old one dies. */
  refreshTokens: 'none' | 'static' | 'rotate';
  /** The authorize endpoint takes a request without `response_type` as `code` (HubSpot). Default: required. */
  responseTypeOptional?: boolean;
  /** The authorize endpoint takes a request without `state` (Notion). Default: required. */
  stateOptional?: boolean;
  /**
   * Provider-specific checks of the authorize request; return null when fine, else a description
   * (redirected back as `invalid_request`) or `{ error, description }` for another error code
   * (e.g. Google's `invalid_scope`).
   */
  validateAuthorizeRequest?(params: Record<string, string>): AuthorizeProblem | null;
  /**
   * Whether the code exchange gives the new grant a refresh token (only asked when `refreshTokens`
   * is not 'none'; default yes). `params` are the consented authorize request's; `liveGrants` the
   * user's other unrevoked grants to this client (Google issues a second refresh token only on
   * `prompt=consent`). Grants minted by the control API always get one.
   */
  issueRefreshToken?(request: {
    params: Readonly<Record<string, string>>;
    scopes: string[];
    liveGrants: Grant[];
  }): boolean;
  /** Token endpoint success body. */
  tokenResponse(issue: TokenIssue, ctx: ProviderContext): Record<string, unknown>;
  /**
   * Token endpoint error: status and body in the provider's shape. `detail.cause` says exactly what
   * failed; the description is the core's generic English wording.
   */
  tokenError(
    kind: OAuthErrorKind,
    description: string,
    detail: TokenErrorDetail,
  ): { status: number; body: unknown };
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
  authenticate(req: FastifyRequest): AccessTokenResolution;
  /** Externally visible base URL of this emulator prefix for this request (for webUrl, downloadUrl, next links). */
  publicBase(req: FastifyRequest): string;
  /** Whether the user has consented to the client (a live grant): an app "installed" in their account. */
  hasGrant(clientId: string, userId: string): boolean;
  /** Revokes the grant behind an access or refresh token; false when unknown. */
  revokeToken(token: string): boolean;
  /**
   * Revokes every live grant matching the filter (e.g. all of a user's, for a sign-out-everywhere
   * endpoint); returns how many. An empty filter matches all grants.
   */
  revokeGrants(filter: { userId?: string; clientId?: string }): number;
  /**
   * Checks client credentials the way the token endpoint does (for provider endpoints that take them,
   * e.g. Notion's revoke and introspect).
   */
  verifyClient(
    clientId: string,
    clientSecret: string,
  ): { ok: true; client: RegisteredClient } | { ok: false; cause: 'unknown_client' | 'wrong_secret' };
  /** Resolves a bare access-token string (token-info endpoints); same outcomes as `authenticate`. */
  resolveAccessToken(token: string): AccessTokenResolution;
  /** The live grant behind a current refresh token (undefined when unknown or rotated out). */
  grantForRefreshToken(token: string): Grant | undefined;
  /** Random id helper shared by emulators. */
  randomId(bytes?: number): string;
  /** The registered client of that id (the definitions emulator asks which definition a token's client serves). */
  client(clientId: string): RegisteredClient | undefined;
  /** Registers a client from the provider's own registration endpoint (RFC 7591, the MCP emulator). */
  registerClient(client: RegisteredClient): void;
  /**
   * The core's OAuth endpoints answering with another profile than the module's, for a module that
   * plays several providers and routes their requests itself (definitions). Requests must carry
   * their parameters as a parsed `req.body` (form or JSON object) where the endpoint takes a body.
   */
  serveOAuth(profile: OAuthProfile): OAuthEndpoints;
}

/** The core's authorization server, as handlers a module calls from its own routes. */
export interface OAuthEndpoints {
  /** GET authorize: the consent page (or the error page, or a redirect with an error). */
  consentPage(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** POST authorize: the consent form's answer, redirected to the client with a code. */
  consentDecision(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** POST token: the authorization_code and refresh_token grants. */
  token(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/**
 * Provider definitions given at run time (the definitions emulator): what the control API reaches
 * besides the OAuth store. `State` is the module's, where refused API keys are session state.
 */
export interface DefinitionCatalog<State = unknown> {
  /** Reads and stores a definition (the latest for a key wins); returns its key. Throws when unplayable. */
  register(definition: unknown): string;
  keys(): string[];
  /** Refuses matching API keys (Basic passwords) that have been used, from now on; how many. */
  revokeKeys(state: State, filter: GrantFilter): number;
  /** Refuses one API key (or Basic password) of a definition from now on, used or not. */
  revokeKey(state: State, provider: string, key: string): void;
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
  /**
   * The module serves its OAuth endpoints itself (with `ctx.serveOAuth`), at paths only its
   * routes know; the core then mounts none at `oauth.authorizePath` / `oauth.tokenPath`.
   */
  routesOAuthItself?: boolean;
  /** Set by an emulator configured with provider definitions at run time. */
  definitions?: DefinitionCatalog<State>;
}
