import { maxHeaderSize, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, Problem } from '../errors/problem.js';
import { loggedPath } from '../logging/logger.js';
import { malformedEscape, PROXY_PREFIX } from '../proxy/path.js';
import { summarize, toFieldErrors } from '../validation/validator.js';

/** The headers a Problem answers with, besides its content type. */
function problemHeaders(problem: Problem): Record<string, string> {
  const headers: Record<string, string> = { ...problem.options.headers };
  if (problem.options.retryAfterMs !== undefined && headers['retry-after'] === undefined) {
    headers['retry-after'] = String(Math.ceil(problem.options.retryAfterMs / 1000));
  }
  return headers;
}

/** Sends a Problem as `application/problem+json`, with its headers. */
export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  const requestId = String(reply.request.id);
  return (
    reply
      // Also set by the onRequest hook, which errors raised while routing never reach.
      .headers({ ...problemHeaders(problem), 'x-request-id': requestId })
      .code(problem.status)
      .type(PROBLEM_CONTENT_TYPE)
      .send(problem.toBody(requestId))
  );
}

/**
 * An error answered on the bare Node response, where Fastify's pipeline is not in charge (the
 * proxy's fast path, a hijacked reply). Once the answer has started, all that is left is to cut it.
 */
export function answerErrorRaw(
  res: ServerResponse,
  error: unknown,
  requestId: string,
  log: FastifyBaseLogger,
  /** As the route it stands in for would answer (Fastify adds the charset to text types). */
  contentType: string = PROBLEM_CONTENT_TYPE,
): void {
  const problem = error instanceof Problem ? error : internalProblem(requestId);
  logProblem(log, problem, error, { res, method: res.req?.method ?? '', url: res.req?.url ?? '' });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(problem.toBody(requestId));
  res.writeHead(problem.status, {
    ...problemHeaders(problem),
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  res.end(body);
}

/** Responses whose failure was logged as it was answered: their request line is not written again. */
const failed = new WeakSet<ServerResponse>();

/** Whether this response's failure has its line already (the request line would repeat it). */
export const loggedAsFailed = (res: ServerResponse): boolean => failed.has(res);

/**
 * A failed request's one line: the request line's fields (as ../logging/logger.ts writes them) and
 * the problem's code; an unexpected error with its stack, a caller's mistake at info.
 */
function logProblem(
  log: FastifyBaseLogger,
  problem: Problem,
  error: unknown,
  request: { res: ServerResponse; method: string; url: string; durationMs?: number },
): void {
  failed.add(request.res);
  const line = {
    method: request.method,
    path: loggedPath(request.url),
    status: problem.status,
    code: problem.code,
    ...(request.durationMs === undefined ? {} : { duration_ms: Math.round(request.durationMs * 100) / 100 }),
  };
  if (problem.status >= 500 && problem.code === 'internal_error') {
    log.error({ ...line, err: error }, 'unhandled error');
  } else if (problem.code === 'service_unavailable') {
    log.warn({ ...line, err: problem.cause }, 'request failed');
  } else {
    log.info(line, 'request failed');
  }
}

/** Maps whatever was thrown to a Problem; unknown errors become an opaque 500. */
export function toProblem(error: unknown, req: FastifyRequest): Problem {
  if (error instanceof Problem) return error;
  const e = error as FastifyError & { validationContext?: string };
  if (e.validation) {
    const where =
      e.validationContext === 'querystring'
        ? 'The query string'
        : e.validationContext === 'params'
          ? 'The URL'
          : 'The request body';
    const errors = toFieldErrors(e.validation as never);
    return new Problem('invalid_input', summarize(errors, where), { errors });
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new Problem(
        'invalid_json',
        `The body is not valid JSON (${e.message}); send a JSON object with Content-Type: application/json.`,
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new Problem(
        'payload_too_large',
        `The body is larger than the ${req.routeOptions.bodyLimit ?? 'allowed'} bytes this route accepts; send a smaller body.`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new Problem(
        'unsupported_media_type',
        `Content-Type "${req.headers['content-type'] ?? ''}" is not accepted here; send application/json.`,
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new Problem('invalid_input', 'Content-Length does not match the body that was sent.');
    case 'FST_ERR_BAD_URL':
      if (req.url.startsWith(`${PROXY_PREFIX}/`)) return malformedEscape();
      return new Problem(
        'invalid_input',
        'The URL has a malformed percent-escape ("%" must be followed by two hex digits).',
      );
  }
  if (e instanceof SyntaxError && (e as { statusCode?: number }).statusCode === 400) {
    return new Problem('invalid_json', `The body is not valid JSON (${e.message}); send a JSON object.`);
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new Problem('invalid_input', `The request could not be read: ${e.message}.`, {
      status: e.statusCode,
    });
  }
  return internalProblem(String(req.id));
}

/** What an error nobody anticipated becomes: opaque to the caller, logged in full. */
function internalProblem(requestId: string): Problem {
  return new Problem(
    'internal_error',
    `An unexpected error occurred; retry, and report request id ${requestId} if it persists.`,
  );
}

/** Answers an error as a problem, logged as such (the error handler, and Fastify's router errors). */
export function answerError(error: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const problem = toProblem(error, req);
  logProblem(req.log, problem, error, {
    res: reply.raw,
    method: req.method,
    url: req.url,
    durationMs: reply.elapsedTime,
  });
  // Fastify closes the connection after refusing a body that is too large while it is still
  // arriving; closing with unread bytes resets the connection, and a client still sending sees the
  // reset instead of the 413 (a race it lost on most runs of the hostile-input sweep). Node reads
  // and drops the rest instead, as nginx's lingering close does; the body deadline bounds how long.
  if (problem.code === 'payload_too_large' && !req.raw.complete) reply.removeHeader('connection');
  return sendProblem(reply, problem);
}

/** Every error and every unknown route answers in problem+json. */
export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler(answerError);
  app.setNotFoundHandler((req, reply) =>
    sendProblem(
      reply,
      new Problem(
        'not_found',
        `No route ${req.method} ${req.url.split('?')[0]}; the API lives under /api/v1 (its reference is at /docs), the dashboard at /dashboard.`,
      ),
    ),
  );
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses before any route sees them
 * (oversized headers, a malformed request line or header, a request that never finished arriving)
 * are still answered as problems, on a connection that is then closed.
 */
export function clientErrorHandler(requestId: () => string) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    let problem: Problem;
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      problem = new Problem(
        'headers_too_large',
        `The request line and headers exceed ${maxHeaderSize} bytes; send less (a long query string or cookie is the usual cause).`,
      );
    } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      problem = new Problem('request_timeout', 'The request did not arrive in time; send it again.');
    } else {
      problem = new Problem(
        'malformed_request',
        `The HTTP request could not be parsed (${error.code ?? 'parse error'}); check the request line and header syntax.`,
      );
    }
    if (socket.writable) socket.write(rawProblemResponse(problem, requestId()));
    lingeringClose(socket);
  };
}

/**
 * A whole HTTP/1.1 answer carrying a problem, with `Connection: close`, for a socket no request
 * object stands for (a request the parser refused, a connection refused before its request).
 */
export function rawProblemResponse(problem: Problem, requestId: string): string {
  const body = JSON.stringify(problem.toBody(requestId));
  const headers = Object.entries(problemHeaders(problem))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `${headers}Connection: close\r\n\r\n${body}`
  );
}

const lingering = new WeakSet<Socket>();

/** How long a closing connection keeps reading what the client still sends (nginx: 5 s). */
const LINGER_MS = 2000;

/**
 * Closes after an answer as nginx's lingering close does: Portico's side ends at once, and what the
 * client is still sending (the rest of a megabyte-long request line) is read and dropped until the
 * client closes too, for LINGER_MS at most. Destroying the socket with unread bytes would reset the
 * connection, and a client still sending would see the reset instead of the answer.
 */
export function lingeringClose(socket: Socket): void {
  // Pipelined requests already read can each end early on the same socket: one linger is enough,
  // and listeners added per request would pile up on it.
  if (socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.on('data', () => {});
  socket.end();
  socket.resume();
}
