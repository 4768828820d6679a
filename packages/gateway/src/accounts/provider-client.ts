import { Problem } from '../errors/problem.js';
import { upstreamProblem } from '../upstream/errors.js';
import { readBody, type UpstreamHttp } from '../upstream/http.js';
import type { Credential, CredentialManager } from './credentials.js';

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

  constructor(
    private credential: Credential,
    private readonly credentials: CredentialManager,
    private readonly http: UpstreamHttp,
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  get provider() {
    return this.credential.provider;
  }

  async request<T = unknown>(req: ProviderRequest): Promise<ProviderResponse<T>> {
    let response = await this.send(req);
    if (response.status === 401) {
      this.credential = await this.credentials.afterUnauthorized(this.credential);
      response = await this.send(req);
    }
    if (response.status >= 400) {
      throw upstreamProblem(this.credential.provider, response.status, response.data, response.headers);
    }
    return response as ProviderResponse<T>;
  }

  private async send(req: ProviderRequest): Promise<ProviderResponse<unknown>> {
    this.calls++;
    const url = new URL(`${this.credential.endpoints.apiBaseUrl}${req.path}`);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, v);
      else url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = {
      ...this.credential.provider.api.defaultHeaders,
      ...this.extraHeaders,
      ...req.headers,
      accept: 'application/json',
      authorization: `Bearer ${this.credential.accessToken}`,
    };
    let body: string | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    }
    const response = await this.http.send({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers,
      body: body ?? null,
    });
    const text = (await readBody(response.body)).toString('utf8');
    let data: unknown = text;
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
      }
    } else {
      data = {};
    }
    return { status: response.statusCode, headers: response.headers, data };
  }
}
