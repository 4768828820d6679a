import { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { UpstreamResponse } from '../upstream/http.js';

/**
 * Links in the provider's answers, turned back towards the proxy. Paginated answers carry absolute
 * links to the provider (Graph `@odata.nextLink`, HubSpot `paging.next.link`, GitHub's `Link`
 * header, Drive's resumable-session `Location`): passed on unchanged, an SDK's page iterator would
 * follow them to the provider itself, with the gateway's token, or in the sandbox outside `/proxy`.
 * A link under the provider's API base becomes the same path under the caller's proxy base.
 *
 * Pre-authenticated URLs stay direct: they need no credential, and a proxied one would carry the
 * end user's token to a URL that must not get it. They are the `*downloadUrl` / `*uploadUrl`
 * properties, and the `Location` of a redirect (how Graph, Box and Dropbox hand out downloads).
 */
export interface LinkBases {
  /** Where the provider's links point: its API base (and, in the sandbox, the emulator's public base). */
  upstream: readonly string[];
  /** The same place as the caller reaches it: `{public URL}/proxy`, or the proxy origin. */
  caller: string;
}

/** JSON answers are rewritten up to this size; a larger one passes through as it came. */
export const LINK_REWRITE_MAX_BYTES = 4 * 1024 * 1024;

// Pre-authenticated URLs, and OData's metadata URLs (a schema reference, never a page to fetch).
const KEPT_PROPERTY = /(download|upload)url$|^@odata\.context$/i;
const JSON_TYPE = /[/+]json\b/i;

/** The upstream bases without a trailing slash, longest first (a sandbox base may contain another). */
export function upstreamBases(bases: readonly (string | undefined)[]): string[] {
  const unique = new Set(bases.filter((b): b is string => !!b).map((b) => b.replace(/\/+$/, '')));
  return [...unique].sort((a, b) => b.length - a.length);
}

/** The link moved under the caller's base, or undefined when it does not point at the provider's API. */
export function rewriteLink(link: string, bases: LinkBases): string | undefined {
  for (const base of bases.upstream) {
    if (!link.startsWith(base)) continue;
    const rest = link.slice(base.length);
    // The base must end at a path, query or fragment boundary: api.example.com is not api.example.community.
    if (rest !== '' && !'/?#'.includes(rest[0] as string)) continue;
    return `${bases.caller}${rest}`;
  }
  return undefined;
}

/**
 * The answer with its links rewritten, or the same object when nothing in it needs to change (the
 * common case costs a header lookup and, for a JSON body, one byte search per base host).
 */
export function rewriteLinks(
  response: UpstreamResponse,
  bases: LinkBases,
): UpstreamResponse | Promise<UpstreamResponse> {
  let headers = response.headers;
  const location = headers.location;
  if (typeof location === 'string' && (response.statusCode < 300 || response.statusCode >= 400)) {
    const moved = rewriteLink(location, bases);
    if (moved) headers = { ...headers, location: moved };
  }
  const link = headers.link;
  if (link !== undefined) {
    const moved = rewriteLinkHeader(link, bases);
    if (moved !== link) headers = { ...headers, link: moved };
  }
  const answer = headers === response.headers ? response : { ...response, headers };
  const type = headers['content-type'];
  if (typeof type !== 'string' || !JSON_TYPE.test(type)) return answer;
  if (Buffer.isBuffer(answer.body)) return rewriteWholeBody(answer as WholeResponse, bases);
  return collect(answer.body, LINK_REWRITE_MAX_BYTES).then((collected) =>
    collected.whole
      ? rewriteWholeBody({ ...answer, body: collected.body }, bases)
      : { ...answer, body: collected.body },
  );
}

type WholeResponse = UpstreamResponse & { body: Buffer };

/** `<url>; rel="next", <url>; rel="last"`: each URL in angle brackets. */
function rewriteLinkHeader(value: string | string[], bases: LinkBases): string | string[] {
  const one = (v: string) =>
    v.replace(/<([^>]*)>/g, (whole, url: string) => {
      const moved = rewriteLink(url, bases);
      return moved ? `<${moved}>` : whole;
    });
  return Array.isArray(value) ? value.map(one) : one(value);
}

/** The answer itself when its body holds no link to move. */
function rewriteWholeBody(whole: WholeResponse, bases: LinkBases): UpstreamResponse {
  const raw = whole.body;
  if (raw.length === 0) return whole;
  const encoding = whole.headers['content-encoding'];
  let text: Buffer;
  try {
    text = decoded(raw, typeof encoding === 'string' ? encoding.trim().toLowerCase() : '');
  } catch {
    // A body that does not decode as announced is passed on for the caller to judge.
    return whole;
  }
  if (!bases.upstream.some((base) => text.includes(bytesOf(hostOf(base))))) return whole;
  let body = spliceLinks(text, bases);
  if (body === PARSE) body = parseAndRewrite(text, bases);
  if (body === undefined) return whole;
  const headers: UpstreamResponse['headers'] = { ...whole.headers, 'content-length': String(body.length) };
  // The rewritten body is sent as it is: re-compressing a small JSON page costs more than it saves.
  delete headers['content-encoding'];
  delete headers['transfer-encoding'];
  // The provider's validators describe its bytes, not these.
  delete headers.etag;
  delete headers['content-md5'];
  return { ...whole, headers, body };
}

const PARSE = Symbol('parse');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const isSpace = (byte: number | undefined) =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** The property name whose value opens with the quote at `quote` (`"name": "`), if it is one. */
function keyBefore(text: Buffer, quote: number): string | undefined {
  let at = quote - 1;
  while (isSpace(text[at])) at--;
  if (text[at] !== COLON) return undefined;
  at--;
  while (isSpace(text[at])) at--;
  if (text[at] !== QUOTE) return undefined;
  const end = at;
  const start = text.lastIndexOf(QUOTE, end - 1);
  return start < 0 ? undefined : text.toString('utf8', start + 1, end);
}

/**
 * The body with each string value that starts with an API base moved, spliced into the provider's
 * own bytes (no parse, its formatting kept); undefined when nothing moves; PARSE when a mention of
 * the host cannot be placed this way (escaped slashes or quotes), for the full parse to decide.
 */
function spliceLinks(text: Buffer, bases: LinkBases): Buffer | undefined | typeof PARSE {
  const edits: Array<{ at: number; length: number }> = [];
  for (const host of new Set(bases.upstream.map(hostOf))) {
    const needle = bytesOf(host);
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
      const edit = linkAt(text, at, host, bases);
      if (edit === PARSE) return PARSE;
      if (edit) edits.push(edit);
    }
  }
  if (edits.length === 0) return undefined;
  edits.sort((a, b) => a.at - b.at);
  const caller = Buffer.from(bases.caller);
  const parts: Buffer[] = [];
  let from = 0;
  for (const edit of edits) {
    parts.push(text.subarray(from, edit.at), caller);
    from = edit.at + edit.length;
  }
  parts.push(text.subarray(from));
  return Buffer.concat(parts);
}

/** The base to replace where the host is mentioned at `at`, if that mention starts a string value that moves. */
function linkAt(
  text: Buffer,
  at: number,
  host: string,
  bases: LinkBases,
): { at: number; length: number } | undefined | typeof PARSE {
  for (const base of bases.upstream) {
    if (hostOf(base) !== host) continue;
    const start = at - base.indexOf(host);
    if (
      start < 1 ||
      text[start - 1] !== QUOTE ||
      !text.toString('latin1', start, start + base.length).startsWith(base)
    ) {
      continue;
    }
    if (text[start - 2] === BACKSLASH) return PARSE;
    const next = text[start + base.length];
    // The base must end at a path, query or fragment boundary, or end the string.
    if (next !== undefined && !'/?#"'.includes(String.fromCharCode(next))) continue;
    const key = keyBefore(text, start - 1);
    if (key !== undefined && KEPT_PROPERTY.test(key)) return undefined;
    return { at: start, length: base.length };
  }
  // Not the start of a string: a mention in text, or a link with escaped slashes.
  return text.toString('latin1', Math.max(0, at - 5), at) === ':\\/\\/' ? PARSE : undefined;
}

/** The full parse, for text the splice cannot place: the body re-serialised, or undefined when nothing moves. */
function parseAndRewrite(text: Buffer, bases: LinkBases): Buffer | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.toString('utf8'));
  } catch {
    return undefined;
  }
  let changed = false;
  const walked = walk(parsed, undefined, bases, () => {
    changed = true;
  });
  return changed ? Buffer.from(JSON.stringify(walked)) : undefined;
}

function walk(value: unknown, key: string | undefined, bases: LinkBases, changed: () => void): unknown {
  if (typeof value === 'string') {
    if (key !== undefined && KEPT_PROPERTY.test(key)) return value;
    const moved = rewriteLink(value, bases);
    if (moved === undefined) return value;
    changed();
    return moved;
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, key, bases, changed));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) out[name] = walk(item, name, bases, changed);
    return out;
  }
  return value;
}

const bytes = new Map<string, Buffer>();
/** A base or host as bytes, made once: searching a Buffer for a string encodes it on every call. */
function bytesOf(value: string): Buffer {
  let found = bytes.get(value);
  if (found === undefined) {
    found = Buffer.from(value, 'latin1');
    if (bytes.size > 10_000) bytes.clear();
    bytes.set(value, found);
  }
  return found;
}

const hosts = new Map<string, string>();
/** The host of a base: present in the body whether its slashes are escaped (`https:\/\/`) or not. */
function hostOf(base: string): string {
  let host = hosts.get(base);
  if (host === undefined) {
    host = new URL(base).host;
    if (hosts.size > 10_000) hosts.clear();
    hosts.set(base, host);
  }
  return host;
}

function decoded(raw: Buffer, encoding: string): Buffer {
  switch (encoding) {
    case '':
    case 'identity':
      return raw;
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(raw);
    case 'deflate':
      return inflateSync(raw);
    case 'br':
      return brotliDecompressSync(raw);
    default:
      throw new Error(`unknown content-encoding ${encoding}`);
  }
}

/**
 * Reads a streamed body up to `limit` bytes: the whole of it, or, when it is longer, a stream that
 * gives back what was read and then the rest (backpressure and aborts still reach the provider).
 */
async function collect(
  body: Readable,
  limit: number,
): Promise<{ whole: true; body: Buffer } | { whole: false; body: Readable }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = body[Symbol.asyncIterator]();
  while (true) {
    const next = await iterator.next();
    if (next.done) return { whole: true, body: Buffer.concat(chunks, size) };
    const chunk = next.value as Buffer;
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) break;
  }
  async function* rest() {
    try {
      yield* chunks.splice(0);
      while (true) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value as Buffer;
      }
    } finally {
      // The caller went away (or the end came): the provider's stream is released either way.
      await iterator.return?.();
    }
  }
  return { whole: false, body: Readable.from(rest(), { objectMode: false }) };
}
