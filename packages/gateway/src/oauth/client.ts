import { createHash, randomBytes } from 'node:crypto';
import type { ProviderDefinition } from '../providers/catalog.js';
import { credentialPlacement, withQueryCredential } from '../providers/credential.js';
import { readOne } from '../providers/json-paths.js';
import { fetchFailure, type OutboundFetch } from '../upstream/http.js';
import { oauthOf, type ProviderEndpoints } from './endpoints.js';

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
  return [...new Set([...connectionScopes, ...oauthOf(provider).requiredScopes])];
}

export function buildAuthorizationUrl(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  params: { clientId: string; redirectUri: string; scopes: string[]; state: string; codeChallenge?: string },
): string {
  const oauth = oauthOf(provider);
  const url = new URL(endpoints.authorizeUrl);
  url.searchParams.set('client_id', params.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('state', params.state);
  if (params.scopes.length)
    url.searchParams.set(oauth.scopeParameter, params.scopes.join(oauth.scopeSeparator));
  if (params.codeChallenge) {
    url.searchParams.set('code_challenge', params.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  for (const [key, value] of Object.entries(oauth.extraAuthorizeParams)) url.searchParams.set(key, value);
  if (endpoints.resource) url.searchParams.set('resource', endpoints.resource);
  return url.toString();
}

export function exchangeAuthorizationCode(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  params: { code: string; redirectUri: string; codeVerifier?: string },
  send: OutboundFetch,
): Promise<TokenResponse> {
  return tokenRequest(
    provider,
    endpoints,
    client,
    {
      grant_type: 'authorization_code',
      code: params.code,
      redirect_uri: params.redirectUri,
      ...(params.codeVerifier ? { code_verifier: params.codeVerifier } : {}),
    },
    send,
  );
}

export function refreshAccessToken(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  refreshToken: string,
  send: OutboundFetch,
  /** Trace context for the token endpoint (`traceparent`), when tracing is on. */
  traceHeaders?: Record<string, string>,
): Promise<TokenResponse> {
  return tokenRequest(
    provider,
    endpoints,
    client,
    { grant_type: 'refresh_token', refresh_token: refreshToken },
    send,
    traceHeaders,
  );
}

async function tokenRequest(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  params: Record<string, string>,
  send: OutboundFetch,
  traceHeaders?: Record<string, string>,
): Promise<TokenResponse> {
  const oauth = oauthOf(provider);
  const headers: Record<string, string> = { ...traceHeaders, accept: 'application/json' };
  // RFC 8707: a token bound to one resource (a remote MCP server) names it at every grant.
  if (endpoints.resource) params = { ...params, resource: endpoints.resource };
  const clientAuth = endpoints.clientAuth ?? oauth.clientAuth;
  const fields =
    clientAuth === 'client_secret_basic'
      ? params
      : client.clientSecret === '' || clientAuth === 'none'
        ? // A public client (registered without a secret) identifies itself only.
          { ...params, client_id: client.clientId }
        : { ...params, client_id: client.clientId, client_secret: client.clientSecret };
  if (clientAuth === 'client_secret_basic') headers.authorization = basicAuth(client);
  let body: string;
  if (oauth.tokenBody === 'json') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(fields);
  } else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(fields).toString();
  }
  let response: Response;
  try {
    response = await send(endpoints.tokenUrl, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
  } catch (error) {
    throw new TokenEndpointError('transient', `token endpoint unreachable: ${fetchFailure(error)}`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) throw classifyTokenError(response.status, json, provider);
  // Some providers (GitHub, Slack) answer a refused grant with 200 and an `error` field.
  const accessPath = oauth.tokenResponse.accessToken;
  if (
    json &&
    typeof json === 'object' &&
    typeof (json as Record<string, unknown>).error === 'string' &&
    readOne(json, accessPath) === undefined
  )
    throw classifyTokenError(400, json, provider);
  return parseTokenResponse(json, provider);
}

export function classifyTokenError(
  status: number,
  body: unknown,
  provider: ProviderDefinition,
): TokenEndpointError {
  const record = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const oauth = oauthOf(provider);
  const field = oauth.tokenErrorField;
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
  const kind = code && (oauth.tokenErrorKinds?.[code] ?? RFC_ERROR_KINDS[code]);
  if (kind) return new TokenEndpointError(kind, message, status, code);
  if (status === 401) return new TokenEndpointError('invalid_client', message, status, code);
  return new TokenEndpointError('invalid_response', message, status, code);
}

/**
 * RFC 6749 §5.1, validated, with each value read where the definition says the provider keeps it
 * (Slack nests the user's token under `authed_user`): anything that is not a usable bearer token is
 * refused.
 */
export function parseTokenResponse(json: unknown, provider: ProviderDefinition): TokenResponse {
  const oauth = oauthOf(provider);
  const paths = oauth.tokenResponse;
  if (!json || typeof json !== 'object' || Array.isArray(json)) {
    throw new TokenEndpointError('invalid_response', 'token response is not a JSON object');
  }
  const body = json as Record<string, unknown>;
  // A nested path may hold the value only in the code exchange's answer: Slack's refresh answers
  // with the user token at the top level, where RFC 6749 puts it.
  const read = (path: string, rfc: string) => readOne(body, path) ?? (path === rfc ? undefined : body[rfc]);
  const accessToken = read(paths.accessToken, 'access_token');
  if (typeof accessToken !== 'string' || !accessToken) {
    throw new TokenEndpointError('invalid_response', `token response has no ${paths.accessToken}`);
  }
  const tokenType = paths.tokenType === null ? undefined : readOne(body, paths.tokenType);
  if (tokenType !== undefined && tokenType !== null && String(tokenType).toLowerCase() !== 'bearer') {
    throw new TokenEndpointError('invalid_response', `token_type "${String(tokenType)}" is not bearer`);
  }
  let expiresIn: number | undefined;
  const rawExpiry = read(paths.expiresIn, 'expires_in');
  if (rawExpiry !== undefined && rawExpiry !== null) {
    expiresIn = Number(rawExpiry);
    if (!Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new TokenEndpointError('invalid_response', `${paths.expiresIn} is not a positive number`);
    }
  }
  const refreshToken = read(paths.refreshToken, 'refresh_token');
  if (refreshToken !== undefined && refreshToken !== null && typeof refreshToken !== 'string') {
    throw new TokenEndpointError('invalid_response', `${paths.refreshToken} is not a string`);
  }
  const scopeValue = read(paths.scope, 'scope');
  const scope = typeof scopeValue === 'string' ? scopeValue : undefined;
  // A nested token's own object (Slack's authed_user) holds the token too: keep it out of metadata.
  const tokenParents = new Set(
    [paths.accessToken, paths.refreshToken].filter((p) => p.includes('.')).map((p) => p.split('.')[0]),
  );
  const notMetadata = new Set([...TOKEN_FIELDS, ...(oauth.tokenResponseTokenFields ?? [])]);
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (notMetadata.has(key)) continue;
    if (tokenParents.has(key) && value && typeof value === 'object') {
      metadata[key] = Object.fromEntries(
        Object.entries(value).filter(([field]) => !TOKEN_FIELDS.includes(field)),
      );
    } else metadata[key] = value;
  }
  return {
    accessToken,
    ...(typeof refreshToken === 'string' && refreshToken ? { refreshToken } : {}),
    ...(expiresIn !== undefined ? { expiresIn } : {}),
    ...(scope !== undefined ? { scopes: scope.split(oauth.scopeSeparator).filter(Boolean) } : {}),
    metadata,
  };
}

/** Revokes a grant at the provider; resolves false when the provider has no revocation or refuses. */
export async function revokeGrant(
  provider: ProviderDefinition,
  endpoints: ProviderEndpoints,
  client: ProviderOAuthClient,
  tokens: { accessToken: string | null; refreshToken: string | null },
  send: OutboundFetch,
): Promise<boolean> {
  const revocation = provider.oauth?.revocation;
  if (!revocation || !endpoints.revocationUrl) return false;
  const token =
    revocation.token === 'refresh' ? (tokens.refreshToken ?? tokens.accessToken) : tokens.accessToken;
  if (!token) return false;
  let url = endpoints.revocationUrl
    .replace('{token}', encodeURIComponent(token))
    .replace('{client_id}', encodeURIComponent(client.clientId));
  const init: RequestInit = { redirect: 'manual', signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS) };
  switch (revocation.style) {
    case 'delete':
      init.method = 'DELETE';
      break;
    case 'basic_delete':
      // GitHub: DELETE /applications/{client_id}/grant with the token in a JSON body.
      init.method = 'DELETE';
      init.headers = { authorization: basicAuth(client), 'content-type': 'application/json' };
      init.body = JSON.stringify({ access_token: token });
      break;
    case 'credential_post':
    case 'credential_delete': {
      // The access token as the API takes it (Dropbox, Zendesk: Bearer; Shopify: its own header).
      init.method = revocation.style === 'credential_post' ? 'POST' : 'DELETE';
      const placement = credentialPlacement(provider, token);
      if (placement.in === 'header') init.headers = { [placement.name]: placement.value };
      else url = withQueryCredential(url, placement.name, placement.value);
      break;
    }
    case 'basic_json':
      init.method = 'POST';
      init.headers = { authorization: basicAuth(client), 'content-type': 'application/json' };
      init.body = JSON.stringify({ token });
      break;
    default: {
      // RFC 7009: form_client authenticates the client as at the token endpoint (Box, Asana, Calendly).
      const clientInBody =
        revocation.style === 'form_client' && provider.oauth!.clientAuth === 'client_secret_post';
      const basic =
        revocation.style === 'basic_form' ||
        (revocation.style === 'form_client' && provider.oauth!.clientAuth === 'client_secret_basic');
      init.method = 'POST';
      init.headers = {
        'content-type': 'application/x-www-form-urlencoded',
        ...(basic ? { authorization: basicAuth(client) } : {}),
      };
      init.body = new URLSearchParams({
        token,
        ...(clientInBody ? { client_id: client.clientId, client_secret: client.clientSecret } : {}),
      }).toString();
    }
  }
  try {
    const response = await send(url, init);
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
