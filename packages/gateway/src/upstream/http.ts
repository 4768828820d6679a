import { Readable, Transform } from 'node:stream';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Agent, Dispatcher } from 'undici';
import { Problem } from '../errors/problem.js';
import type { Tracing } from '../tracing/tracing.js';
import { readAnswerAfterFailedWrite } from './early-answers.js';
import { guardedLookup } from './outbound-guard.js';
import { loadUndici, UNDICI_ERRORS } from './undici.js';

/**
 * The HTTP client to providers: one pooled keep-alive agent for all provider hosts, connect /
 * first-byte / idle timeouts, and retries only where they are safe (an idempotent method with a
 * replayable body, on a connection error or a 429/503 whose Retry-After is within the cap).
 */
export interface UpstreamOptions {
  connectTimeoutMs: number;
  /** Time to the response headers. */
  firstByteTimeoutMs: number;
  /** Longest silence while a body streams, either way. */
  idleTimeoutMs: number;
  maxAttempts: number;
  /** Longest Retry-After worth waiting for before giving the 429/503 back to the caller. */
  retryAfterCapMs: number;
  /**
   * Names that may resolve to private or loopback addresses (the sandbox's emulators, providers an
   * operator allowed): every other name is checked as the socket connects (upstream/outbound-guard.ts).
   * Absent: no check (tests and tools that build their own).
   */
  privateHostAllowed?: (hostname: string) => boolean;
}

/**
 * fetch for the gateway's own requests to a provider outside an end user's call (token exchange
 * and refresh, revocation, user-info): sent through the proxy's pooled agent, so the addresses a
 * name resolves to are checked as the socket connects, as for every proxied call (a name that
 * passed the URL check but resolves, or rebinds, to a private address is refused).
 */
export type OutboundFetch = (url: string, init: RequestInit) => Promise<Response>;

/** What went wrong with a fetch, with undici's cause (a refused address, a TLS fault) named. */
export function fetchFailure(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  const cause = (error as { cause?: unknown })?.cause;
  return cause instanceof Error && cause.message && cause.message !== message
    ? `${message}: ${cause.message}`
    : message;
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = {
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  maxAttempts: 3,
  retryAfterCapMs: 10_000,
};

export interface UpstreamRequest {
  /** Scheme, host and port, e.g. `https://api.notion.com`. */
  origin: string;
  /** The request target: path and query, already encoded. */
  path: string;
  method: string;
  /** An object, or a flat name/value list. */
  headers: Record<string, string | string[]> | string[];
  body?: RequestBody;
}

/**
 * A request body: a Buffer or string; the chunks a body arrived in, in order (held as they came,
 * not joined: joining would allocate the body a second time); or a stream, which is sent once.
 * All but the stream can be sent again.
 */
export type RequestBody = Buffer | string | readonly Buffer[] | Readable | null | undefined;

export function isReplayable(
  body: RequestBody,
): body is Buffer | string | readonly Buffer[] | null | undefined {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    Buffer.isBuffer(body) ||
    Array.isArray(body)
  );
}

export interface UpstreamResponse {
  statusCode: number;
  /** Lower-case names; repeated headers (Set-Cookie) as arrays. */
  headers: Record<string, string | string[]>;
  /**
   * The whole body when the provider announced a small length (the common JSON answer, collected
   * without a stream); otherwise a stream, which the caller must consume or destroy.
   */
  body: Buffer | Readable;
  /** How many times the request was sent, when more than once (retries after 429/503 or a reset). */
  attempts?: number;
}

/** Bodies announced by Content-Length up to this size arrive whole. */
export const WHOLE_BODY_BYTES = 64 * 1024;

interface Attempt extends UpstreamRequest {
  body: Exclude<RequestBody, undefined>;
  headersTimeout?: number;
  /** Lets a watchdog abort the attempt. */
  onController?: (abort: (reason: Error) => void) => void;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const RETRYABLE_STATUS = new Set([429, 503]);

export class UpstreamHttp {
  private agent: Agent | undefined;
  private agentLoading: Promise<Agent> | undefined;

  constructor(
    readonly options: UpstreamOptions = DEFAULT_UPSTREAM_OPTIONS,
    /** Set only when tracing is on: each request is then a client span whose traceparent the provider gets. */
    private readonly tracing?: Tracing | undefined,
  ) {}

  /** The pooled agent, made at the first request (see ./undici.ts). */
  private loadAgent(): Promise<Agent> {
    this.agentLoading ??= this.makeAgent(128).then((agent) => {
      this.agent = agent;
      return agent;
    });
    return this.agentLoading;
  }

  private oauthAgentLoading: Promise<Agent> | undefined;

  /**
   * A pool of its own, guarded the same way, for token, revocation and user-info requests: a
   * token endpoint that hangs holds only these sockets, never the ones API calls wait for, and
   * with no bound per origin (as global fetch has none), so one provider's hanging refreshes do
   * not queue another's on a shared host.
   */
  private loadOAuthAgent(): Promise<Agent> {
    this.oauthAgentLoading ??= this.makeAgent(undefined);
    return this.oauthAgentLoading;
  }

  private makeAgent(connections: number | undefined): Promise<Agent> {
    const options = this.options;
    return loadUndici().then(({ Agent, buildConnector }) => {
      const connect = buildConnector({
        timeout: options.connectTimeoutMs,
        ...(options.privateHostAllowed ? { lookup: guardedLookup(options.privateHostAllowed) as never } : {}),
      });
      return new Agent({
        // Every socket reads a provider's early answer even when the rest of an upload fails to go out.
        connect: (target, callback) =>
          connect(target, (...args) => {
            if (args[1]) readAnswerAfterFailedWrite(args[1]);
            callback(...args);
          }),
        headersTimeout: options.firstByteTimeoutMs,
        bodyTimeout: options.idleTimeoutMs,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 120_000,
        ...(connections ? { connections } : {}),
        pipelining: 1,
      });
    });
  }

  /** fetch through the pooled agent (see OutboundFetch); redirects are answered, not followed. */
  readonly fetch: OutboundFetch = async (url, init) => {
    const [{ fetch }, agent] = await Promise.all([loadUndici(), this.loadOAuthAgent()]);
    return fetch(url, { redirect: 'manual', ...init, dispatcher: agent } as never) as unknown as Response;
  };

  /** Loads the HTTP client in the background (the gateway calls this once it listens). */
  warm(): void {
    // A module that fails to load fails each request too, which is where it is reported.
    this.loadAgent().catch(() => {});
  }

  /** Sends the request, retrying where safe; the caller owns (and must consume) the response body. */
  send(request: UpstreamRequest): Promise<UpstreamResponse> {
    return this.tracing ? clientSpan(this.tracing, request, (r) => this.transmit(r)) : this.transmit(request);
  }

  private async transmit(request: UpstreamRequest): Promise<UpstreamResponse> {
    const method = request.method.toUpperCase();
    const replayable = isReplayable(request.body);
    const retryable = IDEMPOTENT.has(method) && replayable;
    // No await once loaded: a warm request pays nothing for the lazy load.
    const agent = this.agent ?? (await this.loadAgent());
    let attempt = 0;
    for (;;) {
      attempt++;
      const watchdog = replayable ? undefined : this.streamWatchdog(request.body as Readable);
      try {
        const response = await this.attempt(agent, {
          origin: request.origin,
          path: request.path,
          method,
          headers: request.headers,
          body: watchdog ? watchdog.stream : (request.body ?? null),
          // A streamed upload may take longer than any first-byte timeout; the watchdog times it instead.
          ...(watchdog ? { headersTimeout: 0, onController: watchdog.attach } : {}),
        });
        watchdog?.done();
        // Set only on a retry: the common answer keeps its shape.
        if (attempt > 1) response.attempts = attempt;
        if (retryable && attempt < this.options.maxAttempts && RETRYABLE_STATUS.has(response.statusCode)) {
          const wait = retryAfterMs(response.headers['retry-after']);
          if (wait !== undefined && wait <= this.options.retryAfterCapMs) {
            discard(response.body);
            await sleep(jitter(wait, attempt));
            continue;
          }
        }
        return response;
      } catch (error) {
        watchdog?.done();
        if (watchdog?.timedOut) {
          throw new Problem(
            'upstream_timeout',
            `The upload to ${hostOf(request.origin)} ${watchdog.timedOut}; retry later.`,
          );
        }
        if (retryable && attempt < this.options.maxAttempts && isConnectionError(error)) {
          await sleep(jitter(100 * 2 ** attempt, attempt));
          continue;
        }
        throw toUpstreamProblem(error, request.origin);
      }
    }
  }

  /**
   * One request on the pooled agent, through undici's dispatcher interface: a small answer is
   * collected into one Buffer, a large or unannounced one flows through a stream with backpressure
   * (a paused consumer pauses the socket; a destroyed one aborts the upstream request).
   */
  private attempt(agent: Agent, attempt: Attempt): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      let statusCode = 0;
      let headers: Record<string, string | string[]> = {};
      const chunks: Buffer[] = [];
      let stream: Readable | undefined;
      let ended = false;
      agent.dispatch(
        {
          origin: attempt.origin,
          path: attempt.path,
          method: attempt.method as Dispatcher.HttpMethod,
          headers: attempt.headers,
          // A list of chunks goes as an iterable: undici writes each as it comes, with the length announced.
          body: attempt.body as Dispatcher.DispatchOptions['body'],
          ...(attempt.headersTimeout === undefined ? {} : { headersTimeout: attempt.headersTimeout }),
        },
        {
          onRequestStart(controller) {
            attempt.onController?.((reason) => controller.abort(reason));
          },
          onResponseStart(controller, status, responseHeaders) {
            statusCode = status;
            headers = responseHeaders as Record<string, string | string[]>;
            const length = headers['content-length'];
            if (length !== undefined && Number(length) <= WHOLE_BODY_BYTES) return;
            stream = new Readable({
              read: () => controller.resume(),
              destroy: (error, callback) => {
                if (!ended) controller.abort(error ?? new Error('The response body was discarded.'));
                callback(error);
              },
            });
            resolve({ statusCode, headers, body: stream });
          },
          onResponseData(controller, chunk) {
            if (!stream) chunks.push(chunk);
            else if (!stream.push(chunk)) controller.pause();
          },
          onResponseEnd() {
            ended = true;
            if (stream) stream.push(null);
            else
              resolve({
                statusCode,
                headers,
                body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
              });
          },
          onResponseError(_controller, error) {
            ended = true;
            if (stream) stream.destroy(error);
            else reject(error);
          },
        },
      );
    });
  }

  /**
   * Times a streamed upload: the idle timeout while the body flows, then the first-byte timeout once
   * it has been sent. Undici's own headers timeout would count the upload time against the provider.
   */
  private streamWatchdog(body: Readable) {
    const options = this.options;
    let why = `stalled for ${options.idleTimeoutMs} ms`;
    let abort: ((reason: Error) => void) | undefined;
    const fire = () => {
      state.timedOut = why;
      const reason = new Error(why);
      // Ends the upload whether or not undici has started sending it yet.
      if (abort) abort(reason);
      else stream.destroy(reason);
    };
    // One timer while the body flows, pushed back per chunk (refresh() allocates nothing).
    let timer = setTimeout(fire, options.idleTimeoutMs);
    // Observes the chunks on their way to undici without changing the flow (backpressure included).
    const stream = new Transform({
      transform(chunk, _encoding, callback) {
        timer.refresh();
        callback(null, chunk);
      },
      flush(callback) {
        clearTimeout(timer);
        why = `was sent but the provider did not answer within ${options.firstByteTimeoutMs} ms`;
        timer = setTimeout(fire, options.firstByteTimeoutMs);
        callback();
      },
    });
    const state: {
      timedOut?: string;
      stream: Transform;
      attach(abortAttempt: (reason: Error) => void): void;
      done(): void;
    } = {
      stream,
      attach: (abortAttempt) => {
        abort = abortAttempt;
      },
      done: () => clearTimeout(timer),
    };
    // pipe() rather than pipeline(): no AbortController per upload. A source that breaks off ends
    // the upload; an upload that ends early leaves the source to its owner, which still answers
    // the caller on that connection (a 504, say) before closing it.
    body.pipe(stream);
    // Its failure reaches the caller through the request undici sends from it, or through the
    // source's owner; when undici is not reading it (not yet, or no longer), nothing else listens,
    // and an 'error' without a listener would end the process.
    stream.on('error', () => {});
    body.once('error', (error) => stream.destroy(error));
    body.once('close', () => {
      if (!body.readableEnded) stream.destroy(new Error('the request body ended early'));
    });
    stream.once('close', () => body.unpipe(stream));
    return state;
  }

  async close(): Promise<void> {
    const agent = this.agent ?? (await this.agentLoading?.catch(() => undefined));
    await agent?.close();
  }
}

/**
 * The request as an HTTP client span (semantic conventions: `{method}`, the method, server, URL
 * without its query, which may carry a credential, the status and any resends), whose context goes
 * to the provider as `traceparent`.
 */
async function clientSpan(
  tracing: Tracing,
  request: UpstreamRequest,
  transmit: (request: UpstreamRequest) => Promise<UpstreamResponse>,
): Promise<UpstreamResponse> {
  const method = request.method.toUpperCase();
  const url = new URL(request.origin);
  const query = request.path.indexOf('?');
  return tracing.inSpan(
    method,
    SpanKind.CLIENT,
    {
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      'url.full': `${request.origin}${query === -1 ? request.path : request.path.slice(0, query)}`,
    },
    async (span) => {
      tracing.inject(tracing.active(), request.headers);
      const response = await transmit(request);
      span.setAttribute('http.response.status_code', response.statusCode);
      if (response.attempts) span.setAttribute('http.request.resend_count', response.attempts - 1);
      if (response.statusCode >= 400) {
        span.setAttribute('error.type', String(response.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return response;
    },
  );
}

function hostOf(origin: string): string {
  return origin.slice(origin.indexOf('//') + 2);
}

/** Lets go of a response not worth reading (a stream is aborted rather than drained). */
export function discard(body: UpstreamResponse['body']): void {
  if (!Buffer.isBuffer(body)) body.destroy();
}

/** The whole body, however it arrived. */
export async function readBody(body: UpstreamResponse['body']): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Retry-After in ms (delta-seconds or HTTP-date); undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function jitter(baseMs: number, attempt: number): number {
  // Full jitter above the floor the provider asked for, growing with the attempt.
  return baseMs + Math.random() * Math.min(1000, 100 * attempt);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return (
    code === UNDICI_ERRORS.connectTimeout ||
    code === UNDICI_ERRORS.socket ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN'
  );
}

/** Transport failures as problems: timeouts are 504 `upstream_timeout`, the rest 503. */
export function toUpstreamProblem(error: unknown, origin: string): Problem {
  if (error instanceof Problem) return error;
  const host = hostOf(origin);
  const code = (error as { code?: string })?.code;
  if (
    code === UNDICI_ERRORS.headersTimeout ||
    code === UNDICI_ERRORS.bodyTimeout ||
    code === UNDICI_ERRORS.connectTimeout
  ) {
    return new Problem(
      'upstream_timeout',
      `The provider at ${host} did not answer in time (${(error as Error).message}); retry later.`,
    );
  }
  // Refused before anything was sent: a request the HTTP client will not put on the wire.
  if (code === UNDICI_ERRORS.invalidArgument || code === UNDICI_ERRORS.notSupported) {
    return new Problem(
      'invalid_input',
      `The request cannot be sent to ${host} (${(error as Error).message}); remove or correct what it names.`,
    );
  }
  if ((error as Error)?.name === 'AbortError') {
    return new Problem('upstream_timeout', `The request to ${host} was aborted before it completed.`);
  }
  return new Problem(
    'upstream_unavailable',
    `The provider at ${host} could not be reached (${(error as Error)?.message ?? 'connection error'}); retry later.`,
  );
}
