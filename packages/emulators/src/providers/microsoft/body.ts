import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { QuickXorHash } from './quick-xor-hash.js';

export interface ReceivedBytes {
  chunks: Buffer[];
  size: number;
  quickXorHash: string;
}

function isReadable(value: unknown): value is Readable {
  return typeof value === 'object' && value !== null && typeof (value as Readable).on === 'function';
}

/**
 * Collects a request body as the chunks that arrived, hashing on the way: uploads can be ~1 GiB,
 * so there is no concatenation into one buffer. (Graph routes receive the raw stream as `body`.)
 */
export async function receiveBytes(req: FastifyRequest): Promise<ReceivedBytes> {
  const hash = new QuickXorHash();
  const chunks: Buffer[] = [];
  let size = 0;
  const body = req.body;
  if (isReadable(body)) {
    for await (const chunk of body) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      hash.update(buffer);
      chunks.push(buffer);
      size += buffer.length;
    }
  } else if (Buffer.isBuffer(body)) {
    hash.update(body);
    chunks.push(body);
    size = body.length;
  }
  return { chunks, size, quickXorHash: hash.digest() };
}

/** JSON request bodies arrive raw too; a missing or empty body reads as undefined. */
export async function receiveJson(
  req: FastifyRequest,
): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const { chunks, size } = await receiveBytes(req);
  if (size === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false };
  }
}
