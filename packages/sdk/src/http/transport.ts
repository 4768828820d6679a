import type { GatewayTokenSource } from '../auth/gateway-token.js';
import { PorticoConnectionError, PorticoError, type ProblemBody, problemError } from '../errors/errors.js';

/** What a request body may be: bytes, text, a Blob, a stream, a form. */
export type BodyInput =
  | string
  | Uint8Array
  | ArrayBuffer
  | Blob
  | ReadableStream<Uint8Array>
  | URLSearchParams
  | FormData;

export type QueryParams = Record<string, string | number | boolean | null | undefined | readonly string[]>;

export interface SendOptions {
  method: string;
  /** Path on the gateway, starting with `/`. */
  path: string;
  query?: QueryParams | undefined;
  headers?: Headers | Record<string, string> | undefined;
  json?: unknown;
  body?: BodyInput | undefined;
  signal?: AbortSignal | undefined;
  /**
   * The proxy: only the gateway's own problems are errors; every other answer, the provider's
   * errors and redirects included, is returned as it is.
   */
  passThrough?: boolean;
}

export interface RetryPolicy {
  /** Retries after the first attempt, for problems the gateway marks retryable. */
  maxRetries: number;
  /** Longest wait before a retry; a longer `Retry-After` is given back to the caller as the error. */
  maxRetryDelayMs: number;
}

const PROBLEM_TYPE_PREFIX = 'https://portico.dev/problems/';
const FIRST_BACKOFF_MS = 250;

/** Sends API calls: bearer token, renewal after a 401, bounded retries of retryable problems. */
export class Transport {
  constructor(
    private readonly envUrl: string,
    private readonly tokens: GatewayTokenSource,
    private readonly fetchImpl: typeof fetch,
    private readonly retry: RetryPolicy,
  ) {}

  async send(options: SendOptions): Promise<Response> {
    const url = this.url(options.path, options.query);
    // A stream can be sent once: no replay after a 401, no retry.
    const replayable = !(options.body instanceof ReadableStream);
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      let error: PorticoError;
      try {
        const token = await this.tokens.current();
        const res = await this.fetchOnce(url, options, token);
        if (res.ok) return res;
        const problem = await readProblem(res, options.passThrough === true);
        if (problem instanceof Response) return problem;
        if (res.status === 401 && problem.code === 'unauthenticated' && !renewed && replayable) {
          // The token expired or was refused early: one renewal, then the same call again.
          renewed = true;
          await this.tokens.renew(token);
          attempt--;
          continue;
        }
        error = problemError(res.status, problem, res.headers.get('retry-after'));
      } catch (caught) {
        if (!(caught instanceof PorticoError)) throw caught;
        error = caught;
      }
      const delay = replayable ? this.retryDelay(error, attempt) : undefined;
      if (delay === undefined) throw error;
      await sleep(delay, options.signal);
    }
  }

  /** Sends and parses a JSON answer (`undefined` for 204). */
  async json<T>(options: SendOptions): Promise<T> {
    const res = await this.send(options);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  private retryDelay(error: PorticoError, attempt: number): number | undefined {
    if (!error.retryable || attempt >= this.retry.maxRetries) return undefined;
    // Exponential backoff with jitter, so clients that failed together do not retry together.
    const backoff = FIRST_BACKOFF_MS * 2 ** attempt * (0.5 + Math.random() / 2);
    const wait = error.retryAfterMs ?? backoff;
    return wait > this.retry.maxRetryDelayMs ? undefined : wait;
  }

  private url(path: string, query: QueryParams | undefined): string {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const item of value) search.append(key, item);
      else search.append(key, String(value));
    }
    const qs = search.toString();
    return `${this.envUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  private async fetchOnce(url: string, options: SendOptions, token: string): Promise<Response> {
    const headers = new Headers(options.headers);
    headers.set('authorization', `Bearer ${token}`);
    // Every BodyInput is a fetch body; TypeScript's DOM types only doubt Uint8Array over a SharedArrayBuffer.
    let body = options.body as RequestInit['body'];
    if (options.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(options.json);
    }
    if (!headers.has('accept') && !options.passThrough) headers.set('accept', 'application/json');
    const init: RequestInit & { duplex?: 'half' } = {
      method: options.method,
      headers,
      body: body ?? null,
      // A streamed upload must say so (fetch's half-duplex mode); the proxy never follows redirects.
      ...(body instanceof ReadableStream ? { duplex: 'half' as const } : {}),
      ...(options.passThrough ? { redirect: 'manual' as const } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    try {
      return await this.fetchImpl(url, init);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new PorticoConnectionError(
        `Could not reach the Portico gateway at ${this.envUrl}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
}

/**
 * The problem in an error answer. Through the proxy, an answer that is not one of the gateway's own
 * problems belongs to the provider and is given back as a Response (its body, if read, re-wrapped).
 */
async function readProblem(res: Response, passThrough: boolean): Promise<ProblemBody | Response> {
  const type = res.headers.get('content-type') ?? '';
  const isProblem = type.startsWith('application/problem+json');
  if (passThrough && !isProblem) return res;
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const problem = body !== null && typeof body === 'object' ? (body as ProblemBody) : undefined;
  if (passThrough && !problem?.type?.startsWith(PROBLEM_TYPE_PREFIX)) {
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  }
  return problem ?? { detail: `The gateway answered ${res.status} without a problem body.` };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
