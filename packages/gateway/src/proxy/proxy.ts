import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { sendAsEndUser } from '../accounts/as-end-user.js';
import type { Credential, CredentialManager } from '../accounts/credentials.js';
import { Problem } from '../errors/problem.js';
import type { GatewayMetrics } from '../metrics/metrics.js';
import type { UpstreamHttp, UpstreamResponse } from '../upstream/http.js';
import { type UpstreamTarget, upstreamTarget } from './path.js';

/** Headers that describe one hop, or that only Portico may set; never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);
const ROUTING = ['connection_name', 'identifier', 'x-connection-name', 'x-identifier'];
// What a proxy in front of Portico said about the caller (X-Forwarded-* too, by prefix) describes
// the hop to Portico, and would tell the provider where the caller sits.
const FORWARDING = ['forwarded', 'x-real-ip'];
// Expect: 100-continue is answered by Portico's own server before the body is read; the upstream
// request already has the whole body ready (or streaming), so it has nothing to wait for.
const NOT_FORWARDED_UP = new Set([
  ...HOP_BY_HOP,
  ...ROUTING,
  ...FORWARDING,
  'authorization',
  'cookie',
  'expect',
]);
// A provider's cookies belong to its own domain; they are not handed to the caller. The request id
// the caller gets is Portico's own (it names the gateway's log lines).
const NOT_FORWARDED_DOWN = new Set([...HOP_BY_HOP, 'set-cookie', 'x-request-id']);

/** Bodies up to this size are buffered, so a 401 can be answered by refreshing and replaying them. */
const REPLAYABLE_BODY_BYTES = 1024 * 1024;

export interface ProxyDeps {
  credentials: CredentialManager;
  http: UpstreamHttp;
  metrics?: GatewayMetrics;
}

/** One proxied request, as the caller sent it (independent of the HTTP framework that received it). */
export interface ProxyCall {
  environmentId: string;
  method: string;
  /** The request target after `/proxy`: path and query as sent. */
  target: string;
  headers: IncomingHttpHeaders;
}

/** A call whose credential and upstream target are settled: ready to go on the wire. */
export interface PreparedCall {
  call: ProxyCall;
  credential: Credential;
  target: UpstreamTarget;
}

/**
 * ANY /proxy/{path}: the caller's request, sent to the provider as the end user. Bodies stream both
 * ways (a 1 GiB upload or download never sits in memory); the upstream answer comes back as is.
 */
export class ProxyService {
  constructor(private readonly deps: ProxyDeps) {}

  /**
   * The call prepared without waiting on anything (credential cached, path valid), or undefined
   * when it needs the full path: a lookup, a refresh or a problem to report.
   */
  preparedNow(call: ProxyCall): PreparedCall | undefined {
    const connectionName = routingValue(call.headers, 'connection_name', 'x-connection-name');
    const identifier = routingValue(call.headers, 'identifier', 'x-identifier');
    if (!connectionName || !identifier) return undefined;
    const credential = this.deps.credentials.cachedForRef({
      environmentId: call.environmentId,
      connectionName,
      identifier,
    });
    if (!credential) return undefined;
    try {
      return { call, credential, target: targetOf(call, credential) };
    } catch {
      return undefined;
    }
  }

  /** Settles the credential and target of any call; problems (no account, bad path) are thrown. */
  async prepare(call: ProxyCall): Promise<PreparedCall> {
    const ref = {
      environmentId: call.environmentId,
      connectionName: routingHeader(call.headers, 'connection_name', 'x-connection-name'),
      identifier: routingHeader(call.headers, 'identifier', 'x-identifier'),
    };
    const { credentials } = this.deps;
    const credential = credentials.cachedForRef(ref) ?? (await credentials.forRef(ref));
    return { call, credential, target: targetOf(call, credential) };
  }

  /**
   * Sends the call with the body (null, whole or a stream); an upstream 401 refreshes the
   * credential and replays the call once when the body allows it. The caller owns the response body.
   */
  async exchange(prepared: PreparedCall, body: Buffer | Readable | null): Promise<UpstreamResponse> {
    const { call, target } = prepared;
    const metrics = this.deps.metrics;
    if (metrics && body !== null) metrics.proxyBytesIn(bodyLength(body, call.headers));
    // (Properties spelled out: a leading object spread costs more than the rest of this function.)
    const { response } = await sendAsEndUser(this.deps, prepared.credential, () => ({
      origin: target.origin,
      path: target.path,
      method: call.method,
      headers: upstreamHeaders(call.headers),
      body,
    }));
    return response;
  }
}

/**
 * The request body to forward: none, the whole body when small enough to replay after a refresh,
 * otherwise the stream itself. Validation happens before this reads anything. A buffered body must
 * arrive within `deadlineMs`, as Portico's own JSON bodies must (a streamed one is bounded by the
 * upstream idle timeout instead).
 */
export async function proxyBody(
  headers: IncomingHttpHeaders,
  raw: IncomingMessage,
  deadlineMs: number,
): Promise<Buffer | Readable | null> {
  if (!hasBody(headers)) return null;
  const announced = Number(headers['content-length']);
  if (headers['transfer-encoding'] === undefined && announced <= REPLAYABLE_BODY_BYTES) {
    // Copied as it arrives into one buffer of the announced size: no list of chunks to join, and
    // no second megabyte for the GC to collect.
    const whole = Buffer.allocUnsafe(announced);
    let received = 0;
    return new Promise((resolve, reject) => {
      const finish = (error?: unknown) => {
        clearTimeout(timer);
        raw.off('data', onData).off('end', finish).off('error', finish).off('close', onClose);
        if (error) reject(error);
        // Node's parser ends the body at Content-Length, so a complete body fills the buffer.
        else resolve(received === announced ? whole : whole.subarray(0, received));
      };
      const onData = (chunk: Buffer) => {
        received += chunk.copy(whole, received);
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
 * Bytes of a request body for the metrics: a streamed body is counted by its Content-Length (a
 * chunked upload without one counts 0: listening to the stream would race the upstream client).
 */
function bodyLength(body: Buffer | Readable, headers: IncomingHttpHeaders): number {
  if (Buffer.isBuffer(body)) return body.length;
  const length = Number(headers['content-length']);
  return Number.isFinite(length) ? length : 0;
}

export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

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
  const headers: string[] = [];
  for (const name in response.headers) {
    if (!NOT_FORWARDED_DOWN.has(name)) pushHeader(headers, name, response.headers[name]!);
  }
  headers.push('x-request-id', requestId);
  res.writeHead(response.statusCode, headers);
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

function targetOf(call: ProxyCall, credential: Credential): UpstreamTarget {
  const [rawPath = '/', rawQuery = ''] = splitOnce(call.target || '/', '?');
  return upstreamTarget(credential.provider, credential.endpoints.apiBaseUrl, rawPath, rawQuery);
}

/**
 * Header lists are flat name/value arrays, as both Node and undici accept them: cheaper to build per
 * request than objects whose keys change from one request to the next.
 */
function upstreamHeaders(incoming: IncomingHttpHeaders): string[] {
  const headers: string[] = [];
  const hopNames = connectionNamed(incoming.connection);
  for (const name in incoming) {
    const value = incoming[name];
    if (
      value !== undefined &&
      !NOT_FORWARDED_UP.has(name) &&
      !name.startsWith('x-forwarded-') &&
      !hopNames?.has(name)
    ) {
      pushHeader(headers, name, value);
    }
  }
  return headers;
}

/**
 * Headers the caller declared hop-by-hop in `Connection` (RFC 9110 §7.6.1): they were meant for
 * Portico, not for the provider. The usual `keep-alive` / `close` names nothing else.
 */
function connectionNamed(connection: string | undefined): Set<string> | undefined {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return undefined;
  return new Set(
    connection
      .toLowerCase()
      .split(',')
      .map((name) => name.trim()),
  );
}

function pushHeader(headers: string[], name: string, value: string | string[]): void {
  if (typeof value === 'string') headers.push(name, value);
  else for (const one of value) headers.push(name, one);
}

function routingValue(headers: IncomingHttpHeaders, name: string, alias: string): string | undefined {
  const value = headers[name] ?? headers[alias];
  return Array.isArray(value) ? value[0] : value;
}

function routingHeader(headers: IncomingHttpHeaders, name: string, alias: string): string {
  const text = routingValue(headers, name, alias);
  if (!text) {
    throw new Problem(
      'missing_header',
      `The "${name}" header (or "${alias}") is required: it names the ${name === 'identifier' ? 'end user whose account to use' : 'connection to use'}.`,
      {
        errors: [{ path: `/headers/${name}`, message: 'is required' }],
      },
    );
  }
  return text;
}

function splitOnce(value: string, separator: string): [string, string] {
  const index = value.indexOf(separator);
  return index === -1 ? [value, ''] : [value.slice(0, index), value.slice(index + 1)];
}
