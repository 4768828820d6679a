import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { PROBLEM_CONTENT_TYPE, Problem } from '../errors/problem.js';
import { PROXY_PREFIX } from '../proxy/path.js';
import { rawProblemResponse } from './errors.js';
import { type ConnectionLimits, serveAllProtocols } from './listener.js';
import { markOriginBase } from './proxy/caller-base.js';

export interface ProxyOriginOptions {
  host: string;
  port: number;
  /** The main port's certificate and key: this port then speaks TLS too. */
  tls?: { cert: string; key: string } | undefined;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  limits: ConnectionLimits;
  logger: { warn(fields: object, message: string): void };
}

export interface ProxyOrigin {
  /** The origin it serves, e.g. http://127.0.0.1:8081. */
  url: string;
  /** Stops accepting; idle connections close, requests in flight finish. */
  close(): Promise<void>;
  /** Ends every connection at once (the shutdown grace period is over). */
  closeAllConnections(): void;
}

const SLASH = 47;
let requestCount = 0;
const REQUEST_ID_PREFIX = `${randomBytes(4).toString('hex')}-po-`;
const newRequestId = () => `${REQUEST_ID_PREFIX}${(++requestCount).toString(36)}`;

/** The path and query of a request target, an absolute-form one included (the authority names nothing). */
function originForm(url: string): string {
  if (url.charCodeAt(0) === SLASH) return url;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  if (!scheme) return `/${url}`;
  const rest = url.slice(scheme[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * The proxy at the root of an origin of its own (PORTICO_PROXY_PORT): `GET /v1/users/me` here is
 * `GET /proxy/v1/users/me` on the main port, for SDKs (Google's) that resolve every method's
 * absolute path against the origin of their root URL and drop any `/proxy` prefix. Nothing is
 * duplicated: each request's target is prefixed with `/proxy` and handed to the main server's own
 * request handler (the proxy's fast path, then Fastify's `/proxy` scope), so authentication,
 * limits, metrics, request lines and error answers are the main port's. Connections get the main
 * port's deadlines and per-address bounds (./listener.ts); HTTP/2 here is refused (the proxy
 * speaks HTTP/1.1).
 */
export async function listenProxyOrigin(
  app: FastifyInstance,
  options: ProxyOriginOptions,
): Promise<ProxyOrigin> {
  const main = app.server;
  const [handle] = main.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  if (!handle) throw new Error('the main server has no request handler');
  const scheme = options.tls ? 'https' : 'http';
  // Known once listening; a request without a Host header (HTTP/1.0) is given links to it.
  let url = '';
  const server: Server = createServer(
    {
      joinDuplicateHeaders: true,
      headersTimeout: main.headersTimeout,
      connectionsCheckingInterval: Math.min(1000, options.headersTimeoutMs / 2),
    },
    (req, res) => {
      req.url = `${PROXY_PREFIX}${originForm(req.url ?? '/')}`;
      // The provider's links are turned back to this origin, as the caller named it.
      markOriginBase(req, req.headers.host ? `${scheme}://${req.headers.host}` : url);
      handle.call(main, req, res);
    },
  );
  server.keepAliveTimeout = main.keepAliveTimeout;
  server.requestTimeout = main.requestTimeout;
  server.setTimeout(main.timeout);
  if (main.maxRequestsPerSocket) server.maxRequestsPerSocket = main.maxRequestsPerSocket;
  serveAllProtocols(server, {
    http2: (req, res) => {
      req.resume();
      const body = new Problem(
        'not_implemented',
        'The proxy port speaks HTTP/1.1; send proxied requests over HTTP/1.1.',
      ).toBody(newRequestId());
      res.writeHead(501, { 'content-type': PROBLEM_CONTENT_TYPE });
      res.end(JSON.stringify(body));
    },
    tls: options.tls,
    headersTimeoutMs: options.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
    limits: options.limits,
    refusePlaintext: (socket: Socket) => {
      const problem = new Problem(
        'tls_required',
        'This port speaks TLS only (PORTICO_TLS_CERT is set): use an https:// URL.',
      );
      socket.end(rawProblemResponse(problem, newRequestId()));
      socket.once('error', () => {});
    },
    requestId: newRequestId,
    logger: options.logger,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  url = `${scheme}://${host}:${port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as Server & { closeHttp2Sessions?: () => void }).closeHttp2Sessions?.();
        server.closeIdleConnections();
      }),
    closeAllConnections: () => server.closeAllConnections(),
  };
}
