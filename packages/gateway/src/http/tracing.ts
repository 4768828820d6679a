import type { ServerResponse } from 'node:http';
import { type Context, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Tracing } from '../tracing/tracing.js';

/**
 * A server span per request (HTTP semantic conventions), continuing the caller's trace from its
 * `traceparent`. Registered only when tracing is on. The span starts once the route is known and
 * ends when the response closes, hijacked ones (the proxy) included; the handler runs inside its
 * context, so the spans of the work it does (tool call, refresh, provider requests) are its children.
 * Only the path is recorded: query strings carry OAuth codes and states.
 */
export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  const contexts = new WeakMap<FastifyRequest, Context>();
  app.addHook('onRequest', (req, reply, done) => {
    const route = req.routeOptions.url;
    const url = req.url;
    const query = url.indexOf('?');
    const { span, context } = tracing.startServer(
      route ? `${req.method} ${route}` : req.method,
      req.headers,
      {
        'http.request.method': req.method,
        'url.path': query === -1 ? url : url.slice(0, query),
        'url.scheme': req.protocol,
        'network.protocol.version': req.raw.httpVersion,
        ...(route ? { 'http.route': route } : {}),
        ...(req.ip ? { 'client.address': req.ip } : {}),
        ...(typeof req.headers['user-agent'] === 'string'
          ? { 'user_agent.original': req.headers['user-agent'] }
          : {}),
      },
    );
    contexts.set(req, context);
    reply.raw.once('close', () => ended(span, reply.raw));
    // The hooks before the handler (authentication) run outside the span's context: they call nothing traced.
    done();
  });
  // The last step before the handler: the handler, and every later hook, runs in the span's context.
  app.addHook('preHandler', (req, _reply, done) => {
    const context = contexts.get(req);
    if (context) tracing.with(context, done);
    else done();
  });
}

function ended(span: Span, res: ServerResponse): void {
  if (!res.writableFinished) {
    // The connection went before the answer did.
    span.setAttribute('error.type', 'aborted');
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  if (res.headersSent) span.setAttribute('http.response.status_code', res.statusCode);
  if (res.statusCode >= 500) {
    span.setAttribute('error.type', String(res.statusCode));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
