import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { GatewayMetrics } from '../../metrics/metrics.js';
import { callerHeaders } from '../../proxy/service.js';
import type { UpstreamResponse } from '../../upstream/http.js';

/**
 * Writes the provider's answer to the caller: its status, its headers minus hop-by-hop ones and the
 * request id, its body whole (one write, the common JSON case) or streamed with backpressure. A
 * caller that goes away destroys the relayed body, which aborts the upstream request.
 */
export function relay(
  res: ServerResponse,
  response: UpstreamResponse,
  requestId: string,
  log: { info(fields: object, message: string): void },
  metrics?: GatewayMetrics,
): void {
  res.writeHead(response.statusCode, callerHeaders(response.headers, requestId));
  if (Buffer.isBuffer(response.body)) {
    metrics?.proxyBytesOut(response.body.length);
    res.end(response.body);
  } else {
    stream(res, response.body, metrics, (error) => {
      // The provider's stream broke off or the caller left; the caller sees a cut-off answer.
      log.info(
        { request_id: requestId, err: error, status: response.statusCode },
        'relayed body ended early',
      );
    });
  }
}

/** Bytes a relayed body may queue towards a slow caller before the provider's stream is paused. */
const RELAY_QUEUE_BYTES = 256 * 1024;

/**
 * Streams the provider's body to the caller with backpressure. Written out rather than through
 * stream.pipeline, which makes an AbortController and a DOMException for every body it finishes
 * (6 % of a 256 KiB relay). The provider is paused only once a few chunks queue up, not at the
 * socket's 16 KiB mark, so a fast caller does not toggle the upstream socket for every chunk.
 */
function stream(
  res: ServerResponse,
  body: Readable,
  metrics: GatewayMetrics | undefined,
  brokeOff: (error: Error) => void,
): void {
  // Chunks that arrive in one turn of the event loop (one read of the provider's socket yields
  // several) leave in one writev instead of one write each.
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  const onData = (chunk: Buffer) => {
    metrics?.proxyBytesOut(chunk.length);
    if (!corked) {
      corked = true;
      res.cork();
      setImmediate(uncork);
    }
    if (!res.write(chunk) && res.writableLength >= RELAY_QUEUE_BYTES) body.pause();
  };
  const onDrain = () => body.resume();
  const onEnd = () => {
    cleanup();
    res.end();
  };
  const onError = (error: Error) => {
    cleanup();
    res.destroy();
    brokeOff(error);
  };
  const onClose = () => {
    // The caller left before the whole body was written: stop reading from the provider.
    if (!body.readableEnded) {
      cleanup();
      body.destroy();
      brokeOff(new Error('the caller closed the connection'));
    }
  };
  const onBodyClose = () => {
    if (!body.readableEnded) onError(new Error('the provider body closed before its end'));
  };
  const cleanup = () => {
    body.off('data', onData).off('end', onEnd).off('error', onError).off('close', onBodyClose);
    res.off('drain', onDrain).off('close', onClose);
  };
  body.on('data', onData).once('end', onEnd).once('error', onError).once('close', onBodyClose);
  res.on('drain', onDrain).once('close', onClose);
}
