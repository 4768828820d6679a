import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Problem } from '../../errors/problem.js';
import { type CallHeaders, hasBody } from '../../proxy/service.js';

/**
 * The request body to forward: none, the whole body when it announces at most `replayLimitBytes`
 * (held so it can be sent again after a refresh), otherwise the stream itself. Validation happens
 * before this reads anything. A held body must arrive within `deadlineMs`, as Portico's own JSON
 * bodies must (a streamed one is bounded by the upstream idle timeout instead).
 */
export async function proxyBody(
  headers: CallHeaders,
  raw: IncomingMessage,
  deadlineMs: number,
  replayLimitBytes: number,
): Promise<Buffer | readonly Buffer[] | Readable | null> {
  if (!hasBody(headers)) return null;
  const announced = Number(headers['content-length']);
  if (headers['transfer-encoding'] === undefined && announced <= replayLimitBytes) {
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
              `The request body did not arrive within ${deadlineMs} ms of its headers; send it again, whole.`,
            ),
          ),
        deadlineMs,
      );
      raw.on('data', onData).once('end', finish).once('error', finish).once('close', onClose);
    });
  }
  return raw;
}

/**
 * An answer given before the upload finished (a provider timeout, an early refusal) ends the
 * exchange: close the connection rather than wait for the rest of a body nobody will read.
 */
export function closeIfAnsweredEarly(raw: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (!raw.complete) raw.socket.destroy();
  });
}
