import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Grant, grantOfPrincipal, hasScope } from '../../auth/access.js';
import { scopeForRoute } from '../../auth/scopes.js';
import { PROBLEM_CONTENT_TYPE } from '../../errors/problem.js';
import { FAMILY } from '../../metrics/metrics.js';
import { type ExecuteRequest, resultJson, type ToolEngine } from '../../tools/engine.js';
import { unsafeInput } from '../../validation/text-safety.js';
import { knownPrincipal } from '../authenticate.js';
import { answerErrorRaw } from '../errors.js';
import { type ProxyBodyLimits, proxyBody } from '../proxy/body.js';
import type { ServedEarlyDeps } from '../proxy/fast-path.js';
import { closeIfAnsweredEarly } from '../request-body.js';
import { callerOf, EXECUTE_PATH, holdBody } from './execute.js';

export interface FastToolCallDeps extends ServedEarlyDeps {
  engine: ToolEngine;
  /** The route's body schema, compiled by the route's own Ajv (at first use). */
  validate: (value: unknown) => boolean;
}

/** Bodies this long or shorter are read here; a longer one (a big tool input) takes the route. */
const FAST_BODY_MAX = 64 * 1024;
const SCOPE = scopeForRoute('POST', EXECUTE_PATH);
const JSON_TYPE = /^application\/json\s*(;|$)/i;
// Fastify's JSON parser refuses these keys (prototype poisoning): such a body takes the route.
const POISON = /__proto__|constructor/;
/** The route's problem content type, which Fastify gives a charset. */
const ROUTE_PROBLEM_TYPE = `${PROBLEM_CONTENT_TYPE}; charset=utf-8`;

const callable = (grant: Grant) =>
  grant.connectionNames === null && (grant.scopes === null || (SCOPE !== 'all' && hasScope(grant, SCOPE)));

/**
 * Tool calls served before Fastify's request pipeline, as the proxy's are (../proxy/fast-path.ts):
 * a JSON call from a gateway token and client seen before, with every scope it needs and no
 * connection limit, is read, validated with the route's schema and run through the same engine.
 * Anything else returns false untouched and takes the route; a body read here that the route
 * would refuse (not JSON, not the schema, unsafe text) is handed to the route whole, which parses,
 * validates and answers it as any other (./execute.ts heldBodyFirst). Agents make tool calls:
 * Fastify's pipeline around the engine measured about a tenth of a small call's CPU (bench:tools).
 */
export function fastToolCalls(
  deps: FastToolCallDeps,
): (
  req: IncomingMessage,
  res: ServerResponse,
  route: (req: IncomingMessage, res: ServerResponse) => void,
) => boolean {
  const { tokens, clients, engine, validate, metrics } = deps;
  const limits: ProxyBodyLimits = { ...deps.body, replayLimitBytes: FAST_BODY_MAX };
  return (req, res, route) => {
    if (req.url !== EXECUTE_PATH || req.method !== 'POST' || deps.closing()) return false;
    const { headers } = req;
    const length = Number(headers['content-length']);
    if (
      !(length > 0 && length <= FAST_BODY_MAX) ||
      headers['transfer-encoding'] !== undefined ||
      !JSON_TYPE.test(headers['content-type'] ?? '')
    )
      return false;
    const principal = knownPrincipal(tokens, clients, headers.authorization);
    if (!principal) return false;
    const grant = grantOfPrincipal(principal, clients);
    if (!callable(grant)) return false;

    const id = deps.requestId(req);
    const startedAt = performance.now();
    closeIfAnsweredEarly(req, res);
    proxyBody(headers, req, limits).then(
      (read) => {
        const body = Array.isArray(read) ? Buffer.concat(read) : (read as Buffer);
        const call = acceptedCall(body, validate);
        if (!call) {
          holdBody(req, body);
          route(req, res);
          return;
        }
        if (deps.logsRequests()) res.once('finish', () => deps.completed(id, req, res, startedAt));
        engine.execute(principal.environmentId, call, callerOf(principal, grant)).then(
          (result) => {
            const json = resultJson(result);
            res.writeHead(200, {
              'content-type': 'application/json; charset=utf-8',
              'content-length': Buffer.byteLength(json),
              'x-request-id': id,
            });
            res.end(json);
            metrics.request(FAMILY.tools, 200, performance.now() - startedAt);
          },
          (error: unknown) => answer(error),
        );
      },
      (error: unknown) => {
        // The rest of the body may still come: the connection cannot carry another request.
        res.setHeader('connection', 'close');
        answer(error);
      },
    );
    const answer = (error: unknown) => {
      answerErrorRaw(res, error, id, deps.logger.child({ request_id: id }), ROUTE_PROBLEM_TYPE);
      metrics.request(FAMILY.tools, res.statusCode, performance.now() - startedAt);
    };
    return true;
  };
}

/** The call, when the body is one the route would take as it is; otherwise undefined. */
function acceptedCall(body: Buffer, validate: (value: unknown) => boolean): ExecuteRequest | undefined {
  const text = body.toString('utf8');
  if (POISON.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!validate(value) || unsafeInput(value, '')) return undefined;
  return value as ExecuteRequest;
}
