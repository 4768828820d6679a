import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { hasScope, reachesConnection } from '../../auth/access.js';
import type { AccessTokenIssuer } from '../../auth/access-tokens.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import type { ProxyTokenService } from '../../auth/proxy-tokens.js';
import { FAMILY, type GatewayMetrics } from '../../metrics/metrics.js';
import { PROXY_PREFIX } from '../../proxy/path.js';
import { hasBody, PROXY_METHODS, type ProxyService, proxyCall, routingValue } from '../../proxy/service.js';
import type { UpstreamResponse } from '../../upstream/http.js';
import { knownPrincipal, knownProxyPrincipal } from '../authenticate.js';
import { answerErrorRaw } from '../errors.js';
import { closeIfAnsweredEarly } from '../request-body.js';
import { type ProxyBodyLimits, proxyBody } from './body.js';
import { originBase } from './caller-base.js';
import { relay } from './relay.js';

/** What a request served before Fastify needs, on the proxy's path and the tool calls' alike. */
export interface ServedEarlyDeps {
  tokens: AccessTokenIssuer;
  clients: ClientStatusCache;
  logger: FastifyBaseLogger;
  requestId(req: IncomingMessage): string;
  /** Called when a served request has been answered (the request line). */
  completed(requestId: string, req: IncomingMessage, res: ServerResponse, startedAt: number): void;
  /** Whether request lines are written at all (a listener per request costs when they are not). */
  logsRequests(): boolean;
  closing(): boolean;
  metrics: GatewayMetrics;
  body: ProxyBodyLimits;
}

export interface FastProxyDeps extends ServedEarlyDeps {
  /** Proxy tokens, which name the connection and end user themselves. */
  proxyTokens?: ProxyTokenService;
  proxy: ProxyService;
}

const METHODS = new Set(PROXY_METHODS);
const PREFIX = `${PROXY_PREFIX}/`;

/**
 * The proxy's hot path, served before Fastify's request pipeline: a request from a gateway token and
 * client seen before, for an account whose credential is cached, goes straight to the provider, its
 * body read as the route reads it (./body.ts). Everything else (first use of a token or account, a
 * path or header to complain about, a closing server) returns false untouched and takes the
 * Fastify route, which makes the same checks in full and reports what fails (./route.ts). Both
 * answer through the same ProxyService calls.
 * Fastify's per-request pipeline (request and reply objects, router, hooks, promise plumbing)
 * measured at 12-16 % of a small proxied request's CPU, so the common request skips it.
 */
export function fastProxy(deps: FastProxyDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { tokens, clients, proxy } = deps;
  return (req, res) => {
    const url = req.url as string;
    const method = req.method as string;
    if (!url.startsWith(PREFIX) || !METHODS.has(method) || deps.closing()) return false;
    const principal =
      knownPrincipal(tokens, clients, req.headers.authorization) ??
      (deps.proxyTokens && knownProxyPrincipal(deps.proxyTokens, req.headers));
    if (!principal) return false;
    // A client limited in scopes or connections takes the full path, which says what it lacks.
    const grant = clients.grantOf(principal.clientId);
    if (grant.scopes !== null || grant.connectionNames !== null) {
      if (!hasScope(grant, 'proxy')) return false;
      if (!reachesConnection(grant, routingValue(req.headers, 'connection_name', 'x-connection-name')))
        return false;
    }
    const prepared = proxy.preparedNow(
      proxyCall(method, url, req.headers, principal.environmentId, originBase(req)),
    );
    if (!prepared) return false;

    const id = deps.requestId(req);
    const startedAt = performance.now();
    if (deps.logsRequests()) res.once('finish', () => deps.completed(id, req, res, startedAt));
    // Counted into preallocated slots (metrics/slots.ts), timed to the relayed response headers.
    const { metrics } = deps;
    let exchanged: Promise<UpstreamResponse>;
    if (hasBody(req.headers)) {
      closeIfAnsweredEarly(req, res);
      exchanged = proxyBody(req.headers, req, deps.body).then((body) => proxy.exchange(prepared, body));
    } else {
      exchanged = proxy.exchange(prepared, null);
    }
    exchanged
      .then((response) => {
        metrics.request(FAMILY.proxy, response.statusCode, performance.now() - startedAt);
        relay(res, response, id, deps.logger, metrics);
      })
      .catch((error: unknown) => {
        answerErrorRaw(res, error, id, deps.logger.child({ request_id: id }));
        metrics.request(FAMILY.proxy, res.statusCode, performance.now() - startedAt);
      });
    return true;
  };
}
