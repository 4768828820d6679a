import { Problem } from '../errors/problem.js';
import type { ProviderDefinition } from '../providers/catalog.js';

/** Where the proxy lives in Portico's URL space: `/proxy/{provider path}`. */
export const PROXY_PREFIX = '/proxy';

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

/** A "%" not followed by two hex digits: not a URL path (and Fastify's router refuses it too). */
export function malformedEscape(): Problem {
  return invalid(
    'The path has a malformed percent-escape ("%" must be followed by two hex digits; send "%" itself as %25).',
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
      if (i === 0) throw malformedEscape();
      // What an escape decoded to may itself look like a broken escape ("%2525" → "%25" → "%").
      break;
    }
    if (next === current) break;
    out.push(next);
    current = next;
  }
  return out;
}

/** Characters without which none of the tricks below can be spelled (most API paths have none). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
const SUSPECT = /[%\\.:@\u0000-\u001f\u007f]/;

export function checkProxyPath(rawPath: string): void {
  if (!rawPath.startsWith('/')) throw invalid('The proxy path must start with "/".');
  if (rawPath.startsWith('//')) throw invalid('Scheme-relative paths ("//host/…") are not allowed.');
  if (!SUSPECT.test(rawPath)) return;
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

export interface UpstreamTarget {
  /** Scheme, host and port of the provider's API (or its sandbox). */
  origin: string;
  /** The request target sent upstream: the API base path, the path, and the query as sent. */
  path: string;
}

const bases = new Map<string, { origin: string; basePath: string }>();

function parseBase(apiBaseUrl: string) {
  let base = bases.get(apiBaseUrl);
  if (!base) {
    const url = new URL(apiBaseUrl);
    base = { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
    bases.set(apiBaseUrl, base);
  }
  return base;
}

/**
 * Where the proxied request goes: the provider's API base (or its sandbox) plus the path, after the
 * catalog's path rewrites, and the query string as sent. The origin only ever comes from the
 * catalog, and a checked path cannot climb out of the base path, so it stays on the provider's API.
 */
export function upstreamTarget(
  provider: ProviderDefinition,
  apiBaseUrl: string,
  rawPath: string,
  rawQuery: string,
): UpstreamTarget {
  checkProxyPath(rawPath);
  let path = rawPath;
  let query = rawQuery;
  for (const rewrite of provider.api.pathRewrites) {
    if (rewrite.exact ? path !== rewrite.from : !path.startsWith(rewrite.from)) continue;
    path = rewrite.to + path.slice(rewrite.from.length);
    query = withDefaults(query, rewrite.query);
    break;
  }
  const { origin, basePath } = parseBase(apiBaseUrl);
  return { origin, path: `${basePath}${path}${query ? `?${query}` : ''}` };
}

/** The caller's query string with a rewrite's parameters added where the caller did not give them. */
function withDefaults(rawQuery: string, defaults: Record<string, string> | undefined): string {
  if (!defaults) return rawQuery;
  const given = new URLSearchParams(rawQuery);
  const added = Object.entries(defaults)
    .filter(([name]) => !given.has(name))
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  return [...added, ...(rawQuery ? [rawQuery] : [])].join('&');
}
