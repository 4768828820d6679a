import type { ProviderDefinition } from '../providers/catalog.js';
import { credentialPlacement, withQueryCredential } from '../providers/credential.js';
import { matches, readOne } from '../providers/json-paths.js';
import { fetchFailure, type OutboundFetch } from '../upstream/http.js';

const USER_INFO_TIMEOUT_MS = 10_000;

export type UserInfoOutcome =
  | { ok: true; id?: string; label?: string }
  /** The provider refused the credential (401, 403, or a 200 its `ok` rule rejects). */
  | { ok: false; refused: true; message: string }
  /** The provider could not be asked (network, timeout, 5xx): the credential is not judged. */
  | { ok: false; refused: false; message: string };

/**
 * The definition's user-info request, made with a new credential: it proves an API key or a
 * password works before it is stored, and gives the account a label a person recognises.
 */
export async function fetchUserInfo(
  provider: ProviderDefinition,
  url: string,
  secret: string,
  send: OutboundFetch,
): Promise<UserInfoOutcome> {
  const request = provider.userInfo;
  if (!request) return { ok: true };
  const placement = credentialPlacement(provider, secret);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    // A placeholder the token response did not fill (an instance URL it did not return).
    return { ok: false, refused: false, message: `the user-info URL ${url} is incomplete` };
  }
  const headers: Record<string, string> = { accept: 'application/json', ...provider.api.defaultHeaders };
  if (placement.in === 'header') headers[placement.name] = placement.value;
  const path =
    placement.in === 'query'
      ? withQueryCredential(`${target.pathname}${target.search}`, placement.name, placement.value)
      : `${target.pathname}${target.search}`;
  let response: Response;
  try {
    response = await send(`${target.origin}${path}`, {
      method: request.method,
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(USER_INFO_TIMEOUT_MS),
    });
  } catch (error) {
    return {
      ok: false,
      refused: false,
      message: `${provider.displayName} could not be reached (${fetchFailure(error)})`,
    };
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const described = provider.api.describeError(response.status, body).message;
  if (response.status === 401 || response.status === 403) {
    return {
      ok: false,
      refused: true,
      message: described ?? `${provider.displayName} answered ${response.status}`,
    };
  }
  if (!response.ok) {
    return {
      ok: false,
      refused: response.status < 500,
      message: described ?? `${provider.displayName} answered ${response.status}`,
    };
  }
  if (request.ok && !matches(body, request.ok)) {
    return {
      ok: false,
      refused: true,
      message: described ?? `${provider.displayName} refused the credentials`,
    };
  }
  const id = request.id ? readOne(body, request.id) : undefined;
  const label = request.label ? readOne(body, request.label) : undefined;
  return {
    ok: true,
    ...(id !== undefined && id !== null ? { id: String(id) } : {}),
    ...(label !== undefined && label !== null ? { label: String(label) } : {}),
  };
}
