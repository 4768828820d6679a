import { createHash, randomBytes } from 'node:crypto';
import type { ProviderDefinition } from '../providers/catalog.js';
import type { ProviderEndpoints } from './endpoints.js';

/**
 * The OAuth 2.0 client side, one small function per protocol step (after panva/oauth4webapi),
 * with the provider's own client authentication and body encoding. Every token response is
 * validated before anything is stored.
 */

/** The connection's OAuth client at the provider (not a gateway client, not an end user's tokens). */
export interface ProviderOAuthClient {
  clientId: string;
  clientSecret: string;
}

export interface TokenResponse {
  accessToken: string;
  refreshToken?: string;
  /** Seconds; undefined when the provider does not say (Notion). */
  expiresIn?: number;
  scopes?: string[];
  /** Non-secret provider facts (e.g. Notion's workspace and bot ids). */
  metadata: Record<string, unknown>;
}

/** Why a token endpoint call failed, in the terms the lifecycle acts on. */
export type TokenErrorKind =
  /** The grant is gone (revoked, expired, reused code): the user must authorize again. */
  | 'invalid_grant'
  /** The connection's client id or secret is wrong. */
  | 'invalid_client'
  /** Network, timeout or 5xx: try again later. */
  | 'transient'
  /** The provider answered something that is not a valid token response. */
  | 'invalid_response';

export class TokenEndpointError extends Error {
  constructor(
    readonly kind: TokenErrorKind,
    message: string,
    readonly status?: number,
    readonly providerError?: string,
  ) {
    super(message);
    this.name = 'TokenEndpointError';
  }
}

// A hanging token endpoint must not stall the account for long (a refresh lease lasts 30 s).
const TOKEN_TIMEOUT_MS = 10_000;
/** RFC 6749's token-response fields (and OIDC's id_token): the token, not account metadata. */
const TOKEN_FIELDS = ['access_token', 'refresh_token', 'id_token', 'expires_in', 'token_type', 'scope'];
/**
 * RFC 6749 §5.2 error codes by cause. Only `invalid_grant` means the user's grant is gone; the
 * others are the connection's configuration (its client, or scopes the client may not ask for),
 * which the operator fixes without the user. Providers add their own codes in the catalog.
 */
const RFC_ERROR_KINDS: Record<string, TokenErrorKind> = {
  invalid_grant: 'invalid_grant',
  invalid_client: 'invalid_client',
  unauthorized_client: 'invalid_client',
  invalid_scope: 'invalid_client',
};

export function generateState(): string {
  return randomBytes(32).toString('base64url');
}

/** RFC 7636: a 43-character verifier and its S256 challenge. */
export function generatePkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function requestedScopes(provider: ProviderDefinition, connectionScopes: string[]): string[] {
  return [...new Set([...connectionScopes, ...provider.oauth.requiredScopes])];
}

export function buildAuthorizationUrl(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  params: { clientId: string; redirectUri: string; scopes: string[]; state: string; codeChallenge?: string },
): string {
  const url = new URL(endpoints.authorizeUrl);
  url.searchParams.set('client_id', params.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('state', params.state);
  if (params.scopes.length) url.searchParams.set('scope', params.scopes.join(provider.oauth.scopeSeparator));
  if (params.codeChallenge) {
    url.searchParams.set('code_challenge', params.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  for (const [key, value] of Object.entries(provider.oauth.extraAuthorizeParams))
    url.searchParams.set(key, value);
  return url.toString();
}

export function exchangeAuthorizationCode(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  params: { code: string; redirectUri: string; codeVerifier?: string },
): Promise<TokenResponse> {
  return tokenRequest(provider, endpoints, client, {
    grant_type: 'authorization_code',
    code: params.code,
    redirect_uri: params.redirectUri,
    ...(params.codeVerifier ? { code_verifier: params.codeVerifier } : {}),
  });
}

export function refreshAccessToken(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  refreshToken: string,
): Promise<TokenResponse> {
  return tokenRequest(provider, endpoints, client, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
  });
}

async function tokenRequest(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  params: Record<string, string>,
): Promise<TokenResponse> {
  const headers: Record<string, string> = { accept: 'application/json' };
  let body: string;
  if (provider.oauth.tokenRequest === 'basic_json') {
    headers.authorization = basicAuth(client);
    headers['content-type'] = 'application/json';
    body = JSON.stringify(params);
  } else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams({
      ...params,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }).toString();
  }
  let response: Response;
  try {
    response = await fetch(endpoints.tokenUrl, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
  } catch (error) {
    throw new TokenEndpointError('transient', `token endpoint unreachable: ${(error as Error).message}`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) throw classifyTokenError(response.status, json, provider);
  return parseTokenResponse(json, provider);
}

export function classifyTokenError(
  status: number,
  body: unknown,
  provider: ProviderDefinition,
): TokenEndpointError {
  const record = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const field = provider.oauth.tokenErrorField;
  const code =
    typeof record.error === 'string'
      ? record.error
      : field && typeof record[field] === 'string'
        ? (record[field] as string)
        : undefined;
  const description =
    (typeof record.error_description === 'string' && record.error_description) ||
    (typeof record.message === 'string' && record.message) ||
    `HTTP ${status}`;
  const message = `${code ?? `HTTP ${status}`}: ${description.split(/\r?\n/)[0]}`;
  if (status >= 500 || status === 429) return new TokenEndpointError('transient', message, status, code);
  const kind = code && (provider.oauth.tokenErrorKinds?.[code] ?? RFC_ERROR_KINDS[code]);
  if (kind) return new TokenEndpointError(kind, message, status, code);
  if (status === 401) return new TokenEndpointError('invalid_client', message, status, code);
  return new TokenEndpointError('invalid_response', message, status, code);
}

/** RFC 6749 §5.1, validated: anything that is not a usable bearer token is refused. */
export function parseTokenResponse(json: unknown, provider: ProviderDefinition): TokenResponse {
  if (!json || typeof json !== 'object' || Array.isArray(json)) {
    throw new TokenEndpointError('invalid_response', 'token response is not a JSON object');
  }
  const body = json as Record<string, unknown>;
  if (typeof body.access_token !== 'string' || !body.access_token) {
    throw new TokenEndpointError('invalid_response', 'token response has no access_token');
  }
  if (body.token_type !== undefined && String(body.token_type).toLowerCase() !== 'bearer') {
    throw new TokenEndpointError('invalid_response', `token_type "${String(body.token_type)}" is not bearer`);
  }
  let expiresIn: number | undefined;
  if (body.expires_in !== undefined && body.expires_in !== null) {
    expiresIn = Number(body.expires_in);
    if (!Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new TokenEndpointError('invalid_response', 'expires_in is not a positive number');
    }
  }
  if (
    body.refresh_token !== undefined &&
    body.refresh_token !== null &&
    typeof body.refresh_token !== 'string'
  ) {
    throw new TokenEndpointError('invalid_response', 'refresh_token is not a string');
  }
  const scope = typeof body.scope === 'string' ? body.scope : undefined;
  const notMetadata = new Set([...TOKEN_FIELDS, ...(provider.oauth.tokenResponseTokenFields ?? [])]);
  const metadata = Object.fromEntries(Object.entries(body).filter(([key]) => !notMetadata.has(key)));
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === 'string' && body.refresh_token
      ? { refreshToken: body.refresh_token }
      : {}),
    ...(expiresIn !== undefined ? { expiresIn } : {}),
    ...(scope !== undefined ? { scopes: scope.split(provider.oauth.scopeSeparator).filter(Boolean) } : {}),
    metadata,
  };
}

/** Revokes a grant at the provider; resolves false when the provider has no revocation or refuses. */
export async function revokeGrant(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  tokens: { accessToken: string | null; refreshToken: string | null },
): Promise<boolean> {
  const revocation = provider.oauth.revocation;
  if (!revocation || !endpoints.revocationUrl) return false;
  const token =
    revocation.token === 'refresh' ? (tokens.refreshToken ?? tokens.accessToken) : tokens.accessToken;
  if (!token) return false;
  const url = endpoints.revocationUrl.replace('{token}', encodeURIComponent(token));
  const init: RequestInit = { redirect: 'manual', signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS) };
  if (revocation.style === 'delete') init.method = 'DELETE';
  else if (revocation.style === 'basic_json') {
    init.method = 'POST';
    init.headers = { authorization: basicAuth(client), 'content-type': 'application/json' };
    init.body = JSON.stringify({ token });
  } else {
    init.method = 'POST';
    init.headers = { 'content-type': 'application/x-www-form-urlencoded' };
    init.body = new URLSearchParams({ token }).toString();
  }
  try {
    const response = await fetch(url, init);
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

function basicAuth(client: ProviderOAuthClient): string {
  // RFC 6749 §2.3.1: form-encode each part before joining.
  const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64')}`;
}
