import type { AccountTokens, Credential, NewAccountRefusal } from '../accounts/account-tokens.js';
import { sendAsEndUser } from '../accounts/as-end-user.js';
import { Problem } from '../errors/problem.js';
import type { RateGovernor } from '../governor/governor.js';
import type { GatewayMetrics } from '../metrics/metrics.js';
import type { RequestBody, UpstreamHttp, UpstreamResponse } from '../upstream/http.js';
import { type LinkBases, rewriteLinks, upstreamBases } from './links.js';
import { PROXY_PREFIX, type UpstreamTarget, upstreamTarget } from './path.js';

/** Request headers as any HTTP server parses them (Node's CallHeaders fits). */
export type CallHeaders = Record<string, string | string[] | undefined>;

export const PROXY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

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

export interface ProxyDeps {
  accountTokens: AccountTokens;
  http: UpstreamHttp;
  metrics?: GatewayMetrics;
  governor?: RateGovernor;
  /** Where callers reach the proxy (`{public URL}/proxy`): the provider's links are turned back to it. */
  proxyBase: string;
}

/** One proxied request, as the caller sent it (independent of the HTTP framework that received it). */
export interface ProxyCall {
  environmentId: string;
  method: string;
  /** The request target after `/proxy`: path and query as sent. */
  target: string;
  headers: CallHeaders;
  /** Where this caller reaches the proxy, when not at the public URL (the proxy origin). */
  linkBase: string | undefined;
}

/** The proxied call a request to `/proxy/…` makes, once its principal is known. */
export function proxyCall(
  method: string,
  url: string,
  headers: CallHeaders,
  environmentId: string,
  linkBase?: string,
): ProxyCall {
  return { environmentId, method, target: url.slice(PROXY_PREFIX.length), headers, linkBase };
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
  private readonly bases = new WeakMap<object, Map<string, LinkBases>>();

  constructor(private readonly deps: ProxyDeps) {}

  /**
   * The call prepared without waiting on anything (credential cached, path valid), or undefined
   * when it needs the full path: a lookup, a refresh or a problem to report.
   */
  preparedNow(call: ProxyCall): PreparedCall | undefined {
    const connectionName = routingValue(call.headers, 'connection_name', 'x-connection-name');
    const identifier = routingValue(call.headers, 'identifier', 'x-identifier');
    if (!connectionName || !identifier) return undefined;
    const credential = this.deps.accountTokens.cachedForRef({
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

  /**
   * Settles the credential and target of any call; problems (no account, bad path) are thrown.
   * `refuseNew`: the caller may not create an end user's account (auth/access.ts).
   */
  async prepare(call: ProxyCall, refuseNew?: NewAccountRefusal): Promise<PreparedCall> {
    const ref = {
      environmentId: call.environmentId,
      connectionName: routingHeader(call.headers, 'connection_name', 'x-connection-name'),
      identifier: routingHeader(call.headers, 'identifier', 'x-identifier'),
    };
    const { accountTokens } = this.deps;
    const credential = accountTokens.cachedForRef(ref) ?? (await accountTokens.forRef(ref, refuseNew));
    return { call, credential, target: targetOf(call, credential) };
  }

  /**
   * Sends the call with the body (null, whole or a stream); an upstream 401 refreshes the
   * credential and replays the call once when the body allows it. The caller owns the response body.
   */
  async exchange(prepared: PreparedCall, body: RequestBody): Promise<UpstreamResponse> {
    const { call, target } = prepared;
    const metrics = this.deps.metrics;
    if (metrics && body != null) metrics.proxyBytesIn(bodyLength(body, call.headers));
    // (Properties spelled out: a leading object spread costs more than the rest of this function.)
    const { response } = await sendAsEndUser(this.deps, prepared.credential, () => ({
      origin: target.origin,
      path: target.path,
      method: call.method,
      headers: upstreamHeaders(call.headers),
      body,
    }));
    return rewriteLinks(response, this.linkBases(prepared));
  }

  /** The provider's API bases and the caller's proxy base, kept per credential's endpoints. */
  private linkBases(prepared: PreparedCall): LinkBases {
    const endpoints = prepared.credential.endpoints;
    const caller = prepared.call.linkBase ?? this.deps.proxyBase;
    let byCaller = this.bases.get(endpoints);
    if (!byCaller) {
      byCaller = new Map();
      this.bases.set(endpoints, byCaller);
    }
    let bases = byCaller.get(caller);
    if (!bases) {
      bases = { upstream: upstreamBases([endpoints.apiBaseUrl, endpoints.apiLinkBaseUrl]), caller };
      if (byCaller.size > 100) byCaller.clear();
      byCaller.set(caller, bases);
    }
    return bases;
  }
}

/**
 * Bytes of a request body for the metrics: a streamed body is counted by its Content-Length (a
 * chunked upload without one counts 0: listening to the stream would race the upstream client).
 */
function bodyLength(body: Exclude<RequestBody, null | undefined>, headers: CallHeaders): number {
  if (Buffer.isBuffer(body) || typeof body === 'string') return Buffer.byteLength(body);
  if (Array.isArray(body)) return body.reduce((sum: number, chunk: Buffer) => sum + chunk.length, 0);
  const length = Number(headers['content-length']);
  return Number.isFinite(length) ? length : 0;
}

export function hasBody(headers: CallHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The provider's response headers as the caller gets them, a flat name/value list: hop-by-hop
 * headers, cookies and the provider's request id dropped, Portico's request id added.
 */
export function callerHeaders(upstream: UpstreamResponse['headers'], requestId: string): string[] {
  const headers: string[] = [];
  for (const name in upstream) {
    if (!NOT_FORWARDED_DOWN.has(name)) pushHeader(headers, name, upstream[name]!);
  }
  headers.push('x-request-id', requestId);
  return headers;
}

function targetOf(call: ProxyCall, credential: Credential): UpstreamTarget {
  const [rawPath = '/', rawQuery = ''] = splitOnce(call.target || '/', '?');
  return upstreamTarget(credential.provider, credential.endpoints.apiBaseUrl, rawPath, rawQuery);
}

/**
 * Header lists are flat name/value arrays, as both Node and undici accept them: cheaper to build per
 * request than objects whose keys change from one request to the next.
 */
function upstreamHeaders(incoming: CallHeaders): string[] {
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
function connectionNamed(connection: string | string[] | undefined): Set<string> | undefined {
  if (Array.isArray(connection)) connection = connection.join(',');
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

export function routingValue(headers: CallHeaders, name: string, alias: string): string | undefined {
  const value = headers[name] ?? headers[alias];
  return Array.isArray(value) ? value[0] : value;
}

function routingHeader(headers: CallHeaders, name: string, alias: string): string {
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
