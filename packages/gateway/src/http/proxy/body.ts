import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Problem } from '../../errors/problem.js';
import { type CallHeaders, hasBody } from '../../proxy/service.js';
import type { BodyRates } from '../request-body.js';

/** How the proxy takes request bodies, the same on the fast path and the route. */
export interface ProxyBodyLimits {
  /** Bodies up to this length are held for a replay (PORTICO_PROXY_REPLAY_LIMIT)... */
  replayLimitBytes: number;
  /** ...and must arrive within this long of their headers (PORTICO_BODY_TIMEOUT_MS). */
  timeoutMs: number;
  /** Larger ones stream, at a minimum rate (PORTICO_BODY_MIN_BYTES_PER_SEC). */
  rates: BodyRates;
}

/**
 * The request body to forward: none, the whole body when it announces at most `replayLimitBytes`
 * (held so it can be sent again after a refresh), otherwise the stream itself. Validation happens
 * before this reads anything. A held body must arrive within `timeoutMs`, as Portico's own JSON
 * bodies must; a streamed one must keep up the minimum rate (besides the upstream idle timeout),
 * or it is cut: destroying the request ends the upload upstream, and the caller, which could not
 * read an answer before its body is sent anyway, sees the connection close.
 */
export async function proxyBody(
  headers: CallHeaders,
  raw: IncomingMessage,
  limits: ProxyBodyLimits,
): Promise<Buffer | readonly Buffer[] | Readable | null> {
  if (!hasBody(headers)) return null;
  const announced = Number(headers['content-length']);
  if (headers['transfer-encoding'] === undefined && announced <= limits.replayLimitBytes) {
    // Held in the chunks Node's parser made (each a fresh Buffer of its own), not copied into one:
    // a copy would allocate every uploaded megabyte twice, and the garbage of large Buffers is what
    // makes V8 run full collections (they were most of an upload's CPU).
    const chunks: Buffer[] = [];
    return new Promise((resolve, reject) => {
      const finish = (error?: unknown) => {
        clearTimeout(timer);
        raw.off('data', onData).off('end', finish).off('error', finish).off('close', onClose);
        if (error) reject(error);
        else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : chunks);
      };
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
      };
      const onClose = () => {
        if (!raw.complete) finish(new Problem('malformed_request', 'The request body ended early.'));
      };
      const timer = setTimeout(
        () =>
          finish(
            new Problem(
              'request_timeout',
              `The request body did not arrive within ${limits.timeoutMs} ms of its headers; send it again, whole.`,
            ),
          ),
        limits.timeoutMs,
      );
      raw.on('data', onData).once('end', finish).once('error', finish).once('close', onClose);
    });
  }
  limits.rates.watch(raw, () => raw.destroy(limits.rates.tooSlow()));
  return raw;
}
