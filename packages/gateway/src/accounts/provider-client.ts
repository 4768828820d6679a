import type { Readable } from 'node:stream';
import { Problem } from '../errors/problem.js';
import { upstreamProblem } from '../upstream/errors.js';
import { readBody } from '../upstream/http.js';
import type { Credential } from './account-tokens.js';
import { type EndUserDeps, sendAsEndUser } from './as-end-user.js';

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path under the provider's API base, e.g. `/v1/pages/{id}` (already encoded). */
  path: string;
  query?: Record<string, string | number | boolean | string[] | undefined>;
  json?: unknown;
  headers?: Record<string, string>;
}

export interface ProviderResponse<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  data: T;
}

/**
 * What a tool sees of a provider: authenticated JSON requests. The credential is attached here,
 * refreshed once after a 401, and provider errors become problems — tools never see tokens.
 */
export class ProviderClient {
  /** Upstream calls made through this client (tests assert "no upstream request"). */
  calls = 0;
  /** The transport's retries (after a 429/503 or a reset) on top of the calls. */
  private retries = 0;
  /** The provider's last HTTP status. */
  lastStatus: number | null = null;
  /** Whether a 401 made this client refresh the token. */
  tokenRefreshed = false;

  constructor(
    private credential: Credential,
    private readonly deps: EndUserDeps,
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  /** Requests sent to the provider, replays and retries included (the execution record's attempts). */
  get attempts(): number {
    return this.calls + this.retries;
  }

  get provider() {
    return this.credential.provider;
  }

  /** The account the calls act for (a remote MCP server's session is kept per account). */
  get accountId() {
    return this.credential.accountId;
  }

  async request<T = unknown>(req: ProviderRequest): Promise<ProviderResponse<T>> {
    const exchange = await sendAsEndUser(this.deps, this.credential, (credential) =>
      this.upstreamRequest(credential, req),
    );
    if (exchange.credential !== this.credential) this.tokenRefreshed = true;
    this.credential = exchange.credential;
    const { response } = exchange;
    this.lastStatus = response.statusCode;
    this.retries += (response.attempts ?? 1) - 1;
    const text = (await readBody(response.body)).toString('utf8');
    let data: unknown = {};
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        if (response.statusCode < 400) {
          throw new Problem(
            'upstream_error',
            `${this.credential.provider.displayName} answered with a body that is not JSON.`,
            {
              upstream: { status: response.statusCode, body: text.slice(0, 2000) },
            },
          );
        }
        data = text;
      }
    }
    if (response.statusCode >= 400) {
      throw upstreamProblem(this.credential.provider, response.statusCode, data, response.headers);
    }
    return { status: response.statusCode, headers: response.headers, data: data as T };
  }

  /**
   * A POST whose answer the caller reads itself (a remote MCP server's JSON-RPC, answered as JSON or
   * as an event stream): the credential, the one refresh after a 401 and the governor as for
   * `request`, without its JSON-only headers and error mapping. `url` is absolute (the server's
   * endpoint); only the caller's headers go with the credential.
   */
  async exchange(req: {
    url: string;
    headers: Record<string, string>;
    body: string;
  }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
    const response = await this.sendTo('POST', req.url, req.headers, req.body);
    this.retries += (response.attempts ?? 1) - 1;
    const text = (await readBody(response.body)).toString('utf8');
    return { status: response.statusCode, headers: response.headers, text };
  }

  /**
   * A GET whose answer the caller reads as it arrives and ends itself (a remote MCP server's event
   * stream, resumed): the credential, the one refresh after a 401 and the governor as for
   * `exchange`. The body is a stream unless the server sent a short, whole one.
   */
  async openStream(req: { url: string; headers: Record<string, string> }): Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer | Readable;
  }> {
    const response = await this.sendTo('GET', req.url, req.headers);
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  /**
   * A request to a full URL (a remote MCP server's endpoint) as the end user: the caller's headers
   * without any Authorization of theirs, the credential and its one refresh after a 401 as always.
   */
  private async sendTo(
    method: 'GET' | 'POST',
    target: string,
    headers: Record<string, string>,
    body?: string,
  ) {
    const exchange = await sendAsEndUser(this.deps, this.credential, () => {
      this.calls++;
      const url = new URL(target);
      const named: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) named[name.toLowerCase()] = value;
      return {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers: headerList(named),
        ...(body === undefined ? {} : { body }),
      };
    });
    if (exchange.credential !== this.credential) this.tokenRefreshed = true;
    this.credential = exchange.credential;
    this.lastStatus = exchange.response.statusCode;
    return exchange.response;
  }

  /** The endpoints the current credential resolves to (a remote MCP server's URL among them). */
  get endpoints() {
    return this.credential.endpoints;
  }

  private upstreamRequest(credential: Credential, req: ProviderRequest) {
    this.calls++;
    const url = new URL(`${credential.endpoints.apiBaseUrl}${req.path}`);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, v);
      else url.searchParams.set(key, String(value));
    }
    // Later sources win: the tool's headers over the caller's version header; JSON is always asked for.
    const named: Record<string, string> = {};
    for (const source of [this.extraHeaders, req.headers ?? {}]) {
      for (const [name, value] of Object.entries(source)) named[name.toLowerCase()] = value;
    }
    named.accept = 'application/json';
    let body: string | null = null;
    if (req.json !== undefined) {
      named['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    }
    return {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers: headerList(named),
      body,
    };
  }
}

/**
 * Undici's flat list of header names and values, without any Authorization: the end user's token
 * is the only one a provider gets. (A loop: \`Object.entries().flat()\` and \`delete\` cost a tool
 * call about 1 % of its CPU.)
 */
function headerList(named: Record<string, string>): string[] {
  const list: string[] = [];
  for (const name in named) if (name !== 'authorization') list.push(name, named[name] as string);
  return list;
}
