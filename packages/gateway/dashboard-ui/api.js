// The dashboard's only way to the gateway: the public API under /api/v1, authenticated by the
// HttpOnly session cookie plus the session's CSRF token in a header.
let csrf = null;

export class ApiError extends Error {
  constructor(problem) {
    super(problem.detail ?? problem.title ?? 'Request failed');
    this.problem = problem;
  }
}

export function setCsrf(token) {
  csrf = token;
}

// The page being shown: a navigation aborts the reads of the one before, so a slow page that
// finishes late cannot draw itself over the page the operator went to meanwhile.
let navigation = new AbortController();

/** Starts a navigation: the reads still under way for the previous page are abandoned. */
export function beginNavigation() {
  navigation.abort();
  navigation = new AbortController();
}

export async function api(path, { method = 'GET', body, query } = {}) {
  const url = new URL(`/api/v1${path}`, location.origin);
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== '') url.searchParams.set(k, v);
  const headers = { accept: 'application/json' };
  if (csrf) headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
    // Only reads belong to a page; a change the operator asked for completes whatever they do next.
    ...(method === 'GET' ? { signal: navigation.signal } : {}),
  });
  if (res.status === 204) return null;
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) {
    if (res.status === 401 && path !== '/admin/session')
      window.dispatchEvent(new Event('portico:signed-out'));
    throw new ApiError(data ?? { status: res.status, title: res.statusText });
  }
  return data;
}
