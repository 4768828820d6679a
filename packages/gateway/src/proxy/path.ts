import { Problem } from '../errors/problem.js';
import type { ProviderDefinition } from '../providers/catalog.js';

/**
 * The proxy path must stay on the provider's host. Anything that could move it elsewhere, or climb
 * out of the API base, is refused before a URL is ever built: absolute and scheme-relative URLs,
 * backslashes, dot segments (raw, percent-encoded, double-encoded), control characters and
 * userinfo tricks.
 */
function invalid(detail: string): Problem {
  return new Problem(
    'invalid_path',
    `${detail} Send a path relative to the provider's API, e.g. /v1/users/me.`,
  );
}

/** Decodes percent-escapes up to three times, so double-encoded tricks are seen too. */
function decodings(value: string): string[] {
  const out = [value];
  let current = value;
  for (let i = 0; i < 3; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      // A lone % is legal in a path we forward verbatim; stop decoding here.
      break;
    }
    if (next === current) break;
    out.push(next);
    current = next;
  }
  return out;
}

export function checkProxyPath(rawPath: string): void {
  if (!rawPath.startsWith('/')) throw invalid('The proxy path must start with "/".');
  if (rawPath.startsWith('//')) throw invalid('Scheme-relative paths ("//host/…") are not allowed.');
  for (const form of decodings(rawPath)) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
    if (/[\u0000-\u001f\u007f]/.test(form)) throw invalid('Control characters are not allowed in the path.');
    if (form.includes('\\')) throw invalid('Backslashes are not allowed in the path.');
    if (form.startsWith('//')) throw invalid('Scheme-relative paths ("//host/…") are not allowed.');
    const segments = form.split('/');
    if (segments.some((s) => s === '..' || s === '.'))
      throw invalid('Dot segments ("." and "..") are not allowed in the path.');
    const first = segments[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(first))
      throw invalid('Absolute URLs are not allowed; the provider host comes from the connection.');
    if (first.includes('@')) throw invalid('"@" is not allowed in the first path segment.');
  }
}

/**
 * The upstream URL: the provider's API base (or its sandbox) plus the path, after the catalog's
 * path rewrites, and the query string as sent. Verified to stay under the base.
 */
export function buildUpstreamUrl(
  provider: ProviderDefinition,
  apiBaseUrl: string,
  rawPath: string,
  rawQuery: string,
): URL {
  checkProxyPath(rawPath);
  let path = rawPath;
  for (const rewrite of provider.api.pathRewrites) {
    if (path.startsWith(rewrite.from)) {
      path = rewrite.to + path.slice(rewrite.from.length);
      break;
    }
  }
  const base = new URL(apiBaseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const url = new URL(`${base.origin}${basePath}${path}${rawQuery ? `?${rawQuery}` : ''}`);
  if (url.origin !== base.origin || !url.pathname.startsWith(`${basePath}/`)) {
    throw invalid('The path leaves the provider API.');
  }
  return url;
}
