import { pipeline, type Readable, Transform } from 'node:stream';
import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import { Problem } from '../errors/problem.js';

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
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = {
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  maxAttempts: 3,
  retryAfterCapMs: 10_000,
};

export interface UpstreamRequest {
  url: URL;
  method: string;
  headers: Record<string, string | string[]>;
  /** A Buffer/string can be replayed; a stream is sent once. */
  body?: Buffer | string | Readable | null;
  signal?: AbortSignal;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const RETRYABLE_STATUS = new Set([429, 503]);

export class UpstreamHttp {
  readonly agent: Agent;

  constructor(readonly options: UpstreamOptions = DEFAULT_UPSTREAM_OPTIONS) {
    this.agent = new Agent({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.firstByteTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      connections: 128,
      pipelining: 1,
    });
  }

  /** Sends the request, retrying where safe; the caller owns (and must consume) the response body. */
  async send(request: UpstreamRequest): Promise<Dispatcher.ResponseData> {
    const method = request.method.toUpperCase();
    const replayable =
      request.body === undefined ||
      request.body === null ||
      typeof request.body === 'string' ||
      Buffer.isBuffer(request.body);
    const retryable = IDEMPOTENT.has(method) && replayable;
    let attempt = 0;
    for (;;) {
      attempt++;
      const watchdog = replayable ? undefined : this.streamWatchdog(request.body as Readable, request.signal);
      try {
        const response = await this.agent.request({
          origin: request.url.origin,
          path: `${request.url.pathname}${request.url.search}`,
          method: method as Dispatcher.HttpMethod,
          headers: request.headers,
          body: watchdog ? watchdog.stream : (request.body ?? null),
          // A streamed upload may take longer than any first-byte timeout; the watchdog times it instead.
          ...(watchdog
            ? { headersTimeout: 0, signal: watchdog.signal }
            : request.signal
              ? { signal: request.signal }
              : {}),
        });
        watchdog?.done();
        if (retryable && attempt < this.options.maxAttempts && RETRYABLE_STATUS.has(response.statusCode)) {
          const wait = retryAfterMs(response.headers['retry-after']);
          if (wait !== undefined && wait <= this.options.retryAfterCapMs) {
            await response.body.dump();
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
            `The upload to ${request.url.host} ${watchdog.timedOut}; retry later.`,
          );
        }
        if (retryable && attempt < this.options.maxAttempts && isConnectionError(error)) {
          await sleep(jitter(100 * 2 ** attempt, attempt));
          continue;
        }
        throw toUpstreamProblem(error, request.url);
      }
    }
  }

  /**
   * Times a streamed upload: the idle timeout while the body flows, then the first-byte timeout once
   * it has been sent. Undici's own headers timeout would count the upload time against the provider.
   */
  private streamWatchdog(body: Readable, outer: AbortSignal | undefined) {
    const controller = new AbortController();
    const idle = `stalled for ${this.options.idleTimeoutMs} ms`;
    let timer: NodeJS.Timeout;
    const arm = (why: string, ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.timedOut = why;
        controller.abort(new Error(why));
      }, ms);
    };
    // Observes the chunks on their way to undici without changing the flow (backpressure included).
    const stream = new Transform({
      transform(chunk, _encoding, callback) {
        arm(idle, options.idleTimeoutMs);
        callback(null, chunk);
      },
      flush(callback) {
        arm(
          `was sent but the provider did not answer within ${options.firstByteTimeoutMs} ms`,
          options.firstByteTimeoutMs,
        );
        callback();
      },
    });
    const options = this.options;
    const state: { timedOut?: string; signal: AbortSignal; stream: Transform; done(): void } = {
      signal: controller.signal,
      stream,
      done: () => clearTimeout(timer),
    };
    arm(idle, options.idleTimeoutMs);
    pipeline(body, stream, () => {});
    outer?.addEventListener('abort', () => controller.abort(outer.reason), { once: true });
    return state;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
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
    error instanceof undiciErrors.ConnectTimeoutError ||
    error instanceof undiciErrors.SocketError ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'UND_ERR_SOCKET'
  );
}

/** Transport failures as problems: timeouts are 504 `upstream_timeout`, the rest 503. */
export function toUpstreamProblem(error: unknown, url: URL): Problem {
  if (error instanceof Problem) return error;
  const host = url.host;
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new Problem(
      'upstream_timeout',
      `The provider at ${host} did not answer in time (${(error as Error).message}); retry later.`,
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
