import type { RateGovernor } from '../governor/governor.js';
import type { GatewayMetrics } from '../metrics/metrics.js';
import { credentialPlacement, withQueryCredential } from '../providers/credential.js';
import {
  discard,
  isReplayable,
  type UpstreamHttp,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../upstream/http.js';
import type { AccountTokens, Credential } from './account-tokens.js';

export interface EndUserDeps {
  accountTokens: AccountTokens;
  http: UpstreamHttp;
  metrics?: GatewayMetrics | undefined;
  /** Keeps calls under the provider's rate limits (absent: calls go as they come). */
  governor?: RateGovernor | undefined;
}

/** A request to a provider before any credential is on it; headers as a flat name/value list. */
export interface EndUserRequest extends UpstreamRequest {
  headers: string[];
}

export interface EndUserResponse {
  response: UpstreamResponse;
  /** The credential the answer was obtained with (a refreshed one after a 401). */
  credential: Credential;
}

/**
 * The one way a request goes to a provider as an end user, for the proxy and the tools alike: the
 * provider's default headers the request does not set, the end user's token, and, when the provider
 * answers 401, one refresh and one replay. `build` is asked again after a refresh because the
 * request may depend on the credential (its API base URL). A body that streamed cannot be sent
 * again: its 401 is the answer, given once the credential is refreshed, so that sending the
 * request again succeeds.
 */
export async function sendAsEndUser(
  deps: EndUserDeps,
  credential: Credential,
  build: (credential: Credential) => EndUserRequest,
): Promise<EndUserResponse> {
  const turn = deps.governor?.acquire(credential);
  if (turn) await turn;
  let request = build(credential);
  let response = await deps.http.send(withCredential(request, credential));
  deps.metrics?.upstreamResponse(credential.provider.key, response.statusCode);
  if (response.statusCode === 429 && deps.governor) {
    response = await afterTooManyRequests(deps, deps.governor, credential, request, response, build);
  }
  if (response.statusCode !== 401) return { response, credential };
  if (!isReplayable(request.body)) {
    try {
      return { response, credential: await deps.accountTokens.afterUnauthorized(credential) };
    } catch (error) {
      // The account cannot be refreshed: what the caller must do now is reconnect it.
      discard(response.body);
      throw error;
    }
  }
  discard(response.body);
  credential = await deps.accountTokens.afterUnauthorized(credential);
  request = build(credential);
  response = await deps.http.send(withCredential(request, credential));
  deps.metrics?.upstreamResponse(credential.provider.key, response.statusCode);
  return { response, credential };
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * A 429 slows the account's calls down (the governor pauses them as the provider asked). A request
 * that can be sent again without harm, to a provider whose limits the governor keeps, is sent once
 * more when its turn comes, if that is soon (half the wait a call is allowed); otherwise the 429 is
 * the answer.
 */
async function afterTooManyRequests(
  deps: EndUserDeps,
  governor: RateGovernor,
  credential: Credential,
  request: EndUserRequest,
  response: UpstreamResponse,
  build: (credential: Credential) => EndUserRequest,
): Promise<UpstreamResponse> {
  const pauseMs = retryAfterMs(response.headers);
  governor.slowDown(credential.accountId, pauseMs);
  if (
    !IDEMPOTENT.has(request.method.toUpperCase()) ||
    !isReplayable(request.body) ||
    credential.provider.api.rateLimits.length === 0 ||
    // A long pause is the caller's to wait out: the 429 goes back with its Retry-After.
    Math.max(pauseMs ?? 0, governor.delayMs(credential)) > governor.maxWaitMs / 2
  ) {
    return response;
  }
  discard(response.body);
  const turn = governor.acquire(credential);
  if (turn) await turn;
  const again = await deps.http.send(withCredential(build(credential), credential));
  deps.metrics?.upstreamResponse(credential.provider.key, again.statusCode);
  if (again.statusCode === 429) governor.slowDown(credential.accountId, retryAfterMs(again.headers));
  return again;
}

/** How long a 429 asks to wait: Retry-After in seconds or as a date; undefined when it does not say. */
function retryAfterMs(headers: UpstreamResponse['headers']): number | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Appends what the credential brings to the request's own header list (built afresh for each send,
 * so appending is safe): defaults the caller did not set, then the end user's credential where the
 * provider takes it (a header callers never get to set themselves, or a query parameter).
 */
function withCredential(request: EndUserRequest, credential: Credential): EndUserRequest {
  const headers = request.headers;
  const provider = credential.provider;
  const defaults = provider.api.defaultHeaders;
  for (const name in defaults) {
    if (!hasHeader(headers, name)) headers.push(name, defaults[name] as string);
  }
  // A remote MCP server that asks for no authorization: its accounts hold no token to send.
  if (!credential.accessToken && credential.endpoints.mcpUrl) return request;
  if (provider.auth === 'oauth2' && provider.api.credential.name === 'authorization') {
    // The hot path: most providers take a bearer token.
    headers.push(
      'authorization',
      provider.api.credential.value === 'Bearer {token}'
        ? `Bearer ${credential.accessToken}`
        : credentialPlacement(provider, credential.accessToken).value,
    );
    return request;
  }
  const placement = credentialPlacement(provider, credential.accessToken);
  if (placement.in === 'query') {
    request.path = withQueryCredential(request.path, placement.name, placement.value);
    return request;
  }
  // A caller's own value of the credential's header (X-Shopify-Access-Token…) never reaches the provider.
  for (let i = headers.length - 2; i >= 0; i -= 2) if (headers[i] === placement.name) headers.splice(i, 2);
  headers.push(placement.name, placement.value);
  return request;
}

/** Whether a flat list names the header (names are lower case, as Node and the tools give them). */
function hasHeader(headers: string[], name: string): boolean {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return true;
  return false;
}
