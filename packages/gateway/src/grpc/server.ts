import { randomBytes } from 'node:crypto';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { DescService } from '@bufbuild/protobuf';
import { Code, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { Logger } from 'pino';
import type { AccountService } from '../accounts/service.js';
import type { AccessTokenIssuer } from '../auth/access-tokens.js';
import type { ClientStatusCache } from '../auth/client-status.js';
import type { AuthorizationService } from '../authorization/service.js';
import type { ConnectionService as Connections } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import { requestLineWriter } from '../logging/logger.js';
import type { ToolEngine } from '../tools/engine.js';
import { authenticate, authorizeMethod, rememberPrincipal } from './authenticate.js';
import { connectedAccountMethods } from './connected-accounts.js';
import { connectionMethods } from './connections.js';
import { ConnectedAccountService, ConnectionService, ToolService } from './descriptors.js';
import { toConnectError } from './errors.js';
import { toolMethods } from './tools.js';

export interface GrpcDeps {
  tokens: AccessTokenIssuer;
  clients: ClientStatusCache;
  accounts: AccountService;
  authorization: AuthorizationService;
  connections: Connections;
  engine: ToolEngine;
  logger: Logger;
  /** Largest request message, bytes (PORTICO_BODY_LIMIT). */
  readMaxBytes: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const REQUEST_ID_PREFIX = `req_${randomBytes(8).toString('hex')}g`;
let calls = 0;

/** The services the official SDK calls, and what Portico serves of each. */
function services(deps: GrpcDeps): Array<[DescService, Record<string, unknown>]> {
  return [
    [ConnectedAccountService, connectedAccountMethods(deps)],
    [ToolService, toolMethods(deps)],
    [ConnectionService, connectionMethods(deps.connections)],
  ];
}

/** `Service/Method` paths Portico serves, for messages that list them. */
export function servedMethods(deps: GrpcDeps): string[] {
  return services(deps).flatMap(([service, impl]) =>
    service.methods.filter((m) => m.localName in impl).map((m) => `${service.typeName}/${m.name}`),
  );
}

/**
 * Scalekit's gRPC API over Portico's services (`@connectrpc/connect-node`, gRPC protocol only, for
 * HTTP/2 requests). Every call is authenticated with a gateway access token, answers Problems as
 * gRPC statuses (./errors.ts) and writes a request line. Methods of these services that Portico
 * does not serve, and unknown services, answer UNIMPLEMENTED naming the method and those served.
 */
export function grpcHandler(deps: GrpcDeps): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  const lines = requestLineWriter(deps.logger);
  const served = servedMethods(deps);
  const unimplemented = (path: string) =>
    `Portico does not serve ${path}. It serves: ${served.join(', ')}. See docs/interfaces/grpc.md ("Using existing Scalekit SDK code").`;

  const calls_: Interceptor = (next) => async (req) => {
    const startedAt = performance.now();
    const given = req.header.get('x-request-id');
    const requestId =
      given && REQUEST_ID.test(given) ? given : `${REQUEST_ID_PREFIX}${(++calls).toString(36)}`;
    let status = 'OK';
    try {
      const claims = await authenticate(deps.tokens, deps.clients, req.header.get('authorization'));
      authorizeMethod(deps.clients, claims, req.method.name);
      rememberPrincipal(req, claims, deps.clients.grantOf(claims.clientId));
      const res = await next(req);
      res.header.set('x-request-id', requestId);
      return res;
    } catch (error) {
      if (!(error instanceof Problem))
        deps.logger.error({ err: error, request_id: requestId }, 'gRPC call failed');
      const failure = toConnectError(error, requestId, req.method.name === 'ExecuteTool');
      failure.metadata.set('x-request-id', requestId);
      status = Code[failure.code] ?? String(failure.code);
      throw failure;
    } finally {
      if (lines.enabled()) {
        lines.write({
          request_id: requestId,
          method: 'POST',
          path: req.url.slice(req.url.indexOf('/', 8)),
          status: 200,
          grpc_status: status,
          duration_ms: Math.round((performance.now() - startedAt) * 100) / 100,
        });
      }
    }
  };

  const routes = (router: ConnectRouter) => {
    for (const [service, impl] of services(deps)) {
      const all: Record<string, unknown> = { ...impl };
      for (const method of service.methods) {
        all[method.localName] ??= async () => {
          throw new Problem('not_implemented', unimplemented(`${service.typeName}/${method.name}`));
        };
      }
      router.service(service, all as never);
    }
  };

  return connectNodeAdapter({
    routes,
    grpc: true,
    grpcWeb: false,
    connect: false,
    readMaxBytes: deps.readMaxBytes,
    interceptors: [calls_],
    // Another service or method: a gRPC status rather than an HTTP 404 a gRPC client reports poorly.
    fallback(req, res) {
      req.resume();
      res.writeHead(200, {
        'content-type': 'application/grpc+proto',
        'grpc-status': String(Code.Unimplemented),
        'grpc-message': encodeURIComponent(unimplemented((req.url ?? '/').slice(1))),
      });
      res.end();
    },
  }) as (req: Http2ServerRequest, res: Http2ServerResponse) => void;
}
