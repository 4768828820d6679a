import { createHmac, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import type { DriveItem, MicrosoftState } from './model.js';

/** What a pre-authenticated download link grants: one item, until `exp` (epoch seconds). */
type TempAuth = {
  u: string;
  d: string;
  i: string;
  exp: number;
};

export const DOWNLOAD_PATH = '/_layouts/15/download.aspx';

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

/** A SharePoint-style `tempauth` token: claims the emulator signs, so links need no other credential. */
export function signTempAuth(
  state: MicrosoftState,
  claims: { exp: number; [claim: string]: unknown },
): string {
  const payload = `v1.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${payload}.${sign(state.signingKey, payload)}`;
}

/** The claims of a genuine token (expired or not); undefined when forged or malformed. */
export function verifyTempAuth(state: MicrosoftState, tempauth: string): Record<string, unknown> | undefined {
  const dot = tempauth.lastIndexOf('.');
  if (dot < 0) return undefined;
  const payload = tempauth.slice(0, dot);
  const given = Buffer.from(tempauth.slice(dot + 1));
  const expected = Buffer.from(sign(state.signingKey, payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const claims: unknown = JSON.parse(
      Buffer.from(payload.replace(/^v1\./, ''), 'base64url').toString('utf8'),
    );
    return typeof claims === 'object' &&
      claims !== null &&
      typeof (claims as { exp?: unknown }).exp === 'number'
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `@microsoft.graph.downloadUrl`: a SharePoint `download.aspx` link whose `tempauth` token is the
 * only credential, so it works without an Authorization header until it expires.
 */
export function downloadUrl(
  base: string,
  state: MicrosoftState,
  nowMs: number,
  grant: { userId: string; driveId: string; item: DriveItem },
): string {
  const claims: TempAuth = {
    u: grant.userId,
    d: grant.driveId,
    i: grant.item.id,
    exp: Math.floor(nowMs / 1000) + state.downloadUrlTtlSeconds,
  };
  const tempauth = signTempAuth(state, claims);
  return `${base}${DOWNLOAD_PATH}?UniqueId=${grant.item.uniqueId.toLowerCase()}&Translate=false&tempauth=${tempauth}&ApiVersion=2.0`;
}

function verify(state: MicrosoftState, tempauth: string): TempAuth | undefined {
  const claims = verifyTempAuth(state, tempauth);
  return claims &&
    typeof claims.u === 'string' &&
    typeof claims.d === 'string' &&
    typeof claims.i === 'string'
    ? (claims as unknown as TempAuth)
    : undefined;
}

/** SharePoint refuses a bad or stale tempauth with a bare 401 and an `error_description`. */
function unauthorized(reply: FastifyReply, description: string): FastifyReply {
  return reply
    .code(401)
    .type('application/json;odata=verbose;charset=utf-8')
    .send({ error_description: description });
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .type('application/json;odata=verbose;charset=utf-8')
    .send({
      error: {
        code: '-2147024894, System.IO.FileNotFoundException',
        message: { lang: 'en-US', value: 'File Not Found.' },
      },
    });
}

/** Yields the bytes in [start, end) of a chunked file without copying the chunks. */
function* slice(chunks: Buffer[], start: number, end: number): Generator<Buffer> {
  let offset = 0;
  for (const chunk of chunks) {
    const chunkEnd = offset + chunk.length;
    if (chunkEnd > start && offset < end) {
      yield chunk.subarray(Math.max(0, start - offset), Math.min(chunk.length, end - offset));
    }
    offset = chunkEnd;
    if (offset >= end) break;
  }
}

/** A single `bytes=a-b` range (what resuming downloaders send); anything else serves the whole file. */
function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'invalid' | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match) return undefined;
  const [, from, to] = match;
  if (from === '' && to === '') return undefined;
  let start: number;
  let end: number;
  if (from === '') {
    start = Math.max(0, size - Number(to));
    end = size;
  } else {
    start = Number(from);
    end = to === '' ? size : Math.min(size, Number(to) + 1);
  }
  return start >= size || start >= end ? 'invalid' : { start, end };
}

export function sendFileBytes(req: FastifyRequest, reply: FastifyReply, item: DriveItem): FastifyReply {
  reply
    .header('content-type', item.mimeType)
    .header('accept-ranges', 'bytes')
    .header('etag', `"{${item.uniqueId}},${item.version}"`)
    .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(item.name)}`);
  const range = parseRange(req.headers.range, item.size);
  if (range === 'invalid') return reply.code(416).header('content-range', `bytes */${item.size}`).send();
  const { start, end } = range ?? { start: 0, end: item.size };
  if (range) reply.code(206).header('content-range', `bytes ${start}-${end - 1}/${item.size}`);
  reply.header('content-length', String(end - start));
  return reply.send(Readable.from(slice(item.chunks, start, end), { objectMode: false }));
}

export function registerDownloadRoute(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => MicrosoftState,
): void {
  app.route({
    method: 'GET',
    url: DOWNLOAD_PATH,
    handler: async (req, reply) => {
      const state = getState();
      const tempauth = (req.query as Record<string, string | undefined>).tempauth;
      if (!tempauth) return unauthorized(reply, 'Unsupported security token.');
      const claims = verify(state, tempauth);
      if (!claims) return unauthorized(reply, 'Invalid JWT token. The token signature is not valid.');
      if (claims.exp * 1000 <= ctx.clock())
        return unauthorized(reply, 'Invalid JWT token. The token is expired.');
      const item = state.tenants.get(claims.u)?.drives.get(claims.d)?.items.get(claims.i);
      if (!item || item.folder) return notFound(reply);
      return sendFileBytes(req, reply, item);
    },
  });
}
