import type { Socket } from 'node:net';

/** How long a socket whose peer is gone is kept open for its answer to be read (a backstop). */
const READ_GRACE_MS = 1000;

type WriteCallback = (error?: Error | null) => void;

/**
 * Lets the answer a provider gives before it has read the whole request body reach the caller.
 *
 * A server may refuse an upload early (413 for a body over its limit, 401, a quota error) and close
 * the connection at once (RFC 9112 §9.6 allows it; Fastify does it for every body it refuses). The
 * answer is then in this socket's receive buffer, but the next write of the body fails with EPIPE or
 * ECONNRESET, and Node destroys the socket unread: undici reported "write EPIPE" and the caller got
 * a retryable 503 instead of the provider's 413.
 *
 * Here such a write failure ends the upload instead (it and every later write of the body are
 * dropped) and the socket stays open for reading: undici parses the answer and, since it completed
 * before its request, ends the exchange with it and closes the socket. The peer is gone, so reading
 * ends at once: with the answer, or with ECONNRESET when there was none (reported as before). A
 * socket still open after READ_GRACE_MS is destroyed with the write's error.
 */
export function readAnswerAfterFailedWrite(socket: Socket): void {
  let failed = false;
  const settle =
    (done: WriteCallback): WriteCallback =>
    (error) => {
      if (!error || !peerGone(error)) {
        done(error);
        return;
      }
      if (!failed) {
        failed = true;
        setTimeout(() => socket.destroy(error), READ_GRACE_MS).unref();
      }
      done();
    };
  const write = socket._write;
  socket._write = function (this: Socket, chunk, encoding, done) {
    if (failed) done();
    else write.call(this, chunk, encoding, settle(done));
  };
  const writev = socket._writev;
  if (writev) {
    socket._writev = function (this: Socket, chunks, done) {
      if (failed) done();
      else writev.call(this, chunks, settle(done));
    };
  }
}

function peerGone(error: Error): boolean {
  const code = (error as { code?: string }).code;
  return code === 'EPIPE' || code === 'ECONNRESET';
}
