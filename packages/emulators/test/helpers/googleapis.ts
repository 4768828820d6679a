import { google } from 'googleapis';
import type { RunningEmulators } from '../../src/index.js';
import { mintToken } from './emulators.js';

/** The body of a Google API error, as googleapis hands it back. */
export interface GoogleErrorBody {
  error: { code: number; message: string; errors?: Array<Record<string, string>>; status?: string };
}

/**
 * googleapis resolves its absolute API paths against a service-level `rootUrl`, dropping its path
 * (the emulator's `/google` prefix); a per-call `rootUrl` is used verbatim, so this passes
 * `{ rootUrl }` to every method, merged under any options the caller gives.
 */
export function perCallRoot<T extends object>(api: T, rootUrl: string): T {
  // A blank target: googleapis' resources are non-configurable properties a proxy of the original could not replace.
  return new Proxy({} as T, {
    get(_blank, prop) {
      const value = Reflect.get(api, prop) as unknown;
      if (typeof value === 'function') {
        return (params?: unknown, options?: object) =>
          (value as (p: unknown, o: unknown) => unknown).call(api, params ?? {}, { rootUrl, ...options });
      }
      if (value && typeof value === 'object' && prop !== 'context')
        return perCallRoot(value as object, rootUrl);
      return value;
    },
  });
}

export type GoogleAuth = InstanceType<typeof google.auth.OAuth2>;

/**
 * A googleapis client for one service, authorized with `token` and pointed at the emulator:
 * `googleClient(emu, token, (auth) => google.docs({ version: 'v1', auth }))`.
 */
export function googleClient<T extends object>(
  emu: RunningEmulators,
  token: string,
  service: (auth: GoogleAuth) => T,
): T {
  const auth = new google.auth.OAuth2();
  auth.setCredentials({ access_token: token });
  return perCallRoot(service(auth), `${emu.urls.google}/`);
}

/** Mints a token for `userId` with `scopes` and returns it with a client of one service. */
export function googleClientFor<T extends object>(
  emu: RunningEmulators,
  userId: string,
  scopes: string[],
  service: (auth: GoogleAuth) => T,
): { api: T; token: string } {
  const token = mintToken(emu, 'google', userId, scopes);
  return { api: googleClient(emu, token, service), token };
}

/** googleapis rejects with a GaxiosError; the status and body are what callers branch on. */
export async function failure(promise: Promise<unknown>): Promise<{ status: number; body: GoogleErrorBody }> {
  try {
    await promise;
  } catch (e) {
    const res = (e as { response?: { status: number; data: unknown } }).response;
    if (res) {
      const data = res.data;
      const body = typeof data === 'string' ? JSON.parse(data) : data;
      return { status: res.status, body: body as GoogleErrorBody };
    }
    throw e;
  }
  throw new Error('expected the call to fail');
}

/** A plain-HTTP call to the Google emulator, for what the SDK hides: status and JSON error body. */
export async function rawGoogle(
  emu: RunningEmulators,
  path: string,
  init: RequestInit & { token?: string } = {},
): Promise<{ status: number; body: GoogleErrorBody }> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  if (init.body) headers.set('content-type', 'application/json');
  const res = await fetch(`${emu.urls.google}${path}`, { ...init, headers });
  return { status: res.status, body: (await res.json()) as GoogleErrorBody };
}
