/** The dashboard session cookie: HttpOnly (no script reads it), SameSite=Lax, Secure over https. */
export const SESSION_COOKIE = 'portico_session';
export const CSRF_HEADER = 'x-csrf-token';

/** The session cookie's value in a Cookie header, if any. */
export function sessionCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

export function sessionCookieHeader(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    // /api/v1 reads it too: the dashboard's calls go to the public API.
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}
