import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Problem } from '../errors/problem.js';
import type { OriginPolicy } from '../mcp/origins.js';
import { sendProblem } from './errors.js';

/** Headers a browser MCP client sends, and the ones it must be able to read back. */
const REQUEST_HEADERS =
  'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, identifier';
const EXPOSED_HEADERS = 'www-authenticate, mcp-session-id, mcp-protocol-version, x-request-id';

/**
 * CORS for the MCP endpoint and its OAuth documents, answered only to allowed origins. With
 * `refuseForeign` (the MCP endpoint itself) a request from any other origin is refused with 403, as
 * the Streamable HTTP transport requires against DNS rebinding; the OAuth documents are public, so
 * a foreign origin only goes without CORS headers there. Requests without `Origin` are not browsers
 * acting across sites and pass.
 */
export function browserAccess(
  policy: OriginPolicy,
  options: { refuseForeign: boolean },
): onRequestHookHandler {
  return (req: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const origin = req.headers.origin;
    if (origin === undefined) return done();
    if (!policy.allows(origin)) {
      if (!options.refuseForeign) return done();
      sendProblem(
        reply,
        new Problem(
          'origin_not_allowed',
          `Requests from the origin ${JSON.stringify(origin.slice(0, 200))} are not allowed here; the operator lists the browser origins that may use this MCP server in PORTICO_MCP_ALLOWED_ORIGINS.`,
        ),
      );
      return;
    }
    reply.headers({
      'access-control-allow-origin': origin,
      'access-control-expose-headers': EXPOSED_HEADERS,
      vary: 'Origin',
    });
    if (req.method === 'OPTIONS') {
      reply
        .code(204)
        .headers({
          'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
          'access-control-allow-headers': REQUEST_HEADERS,
          'access-control-max-age': '600',
        })
        .send();
      return;
    }
    done();
  };
}

/** The CORS preflight routes for these paths (answered by {@link browserAccess}; hidden from the OpenAPI). */
export function preflightRoutes(app: FastifyInstance, paths: readonly string[]): void {
  for (const path of paths) {
    app.options(path, { schema: { hide: true } }, async (_req, reply) => reply.code(204).send());
  }
}
