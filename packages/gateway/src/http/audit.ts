import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { actionForRoute, detailsOf, resourceIdOf } from '../audit/actions.js';
import type { AuditEntry, AuditService } from '../audit/service.js';
import type { Principal } from './authenticate.js';

/** Largest response read for the id of what a request created (ids are near the top of small bodies). */
const RESPONSE_READ_MAX = 64 * 1024;

/** Who acted, as the audit log names them: a dashboard admin by username, a client by its id. */
export function actorOf(principal: Principal): Pick<AuditEntry, 'actorType' | 'actorId' | 'credential'> {
  return principal.admin
    ? { actorType: 'admin', actorId: principal.username ?? principal.clientId, credential: 'session' }
    : { actorType: 'client', actorId: principal.clientId, credential: principal.clientId };
}

/** Where a request came from, for an audit entry. */
export function originOf(req: FastifyRequest): Pick<AuditEntry, 'ip' | 'userAgent' | 'requestId'> {
  const agent = req.headers['user-agent'];
  return { ip: req.ip, userAgent: typeof agent === 'string' ? agent : null, requestId: String(req.id) };
}

/**
 * The hooks that record every successful change made through /api/v1 in the audit log, in one place:
 * onSend keeps the id of what the response names (a created resource), onResponse records the
 * entry (buffered by the service, so no request waits for it).
 */
export function auditHooks(audit: AuditService) {
  const responseIds = new WeakMap<FastifyRequest, Record<string, unknown>>();
  const hooks = {
    onSend(
      req: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload?: unknown) => void,
    ): void {
      if (
        reply.statusCode < 300 &&
        typeof payload === 'string' &&
        payload.length <= RESPONSE_READ_MAX &&
        payload.startsWith('{') &&
        req.routeOptions.url !== undefined &&
        actionForRoute(req.method, req.routeOptions.url)
      ) {
        try {
          responseIds.set(req, JSON.parse(payload) as Record<string, unknown>);
        } catch {
          // Not JSON after all: the entry goes without the id.
        }
      }
      done(null, payload);
    },
    onResponse(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
      const route = req.routeOptions.url;
      const entry = route === undefined ? undefined : actionForRoute(req.method, route);
      const status = reply.statusCode;
      if (entry && req.principal && status >= 200 && status < 300) {
        const response = responseIds.get(req);
        audit.record({
          environmentId: req.principal.environmentId,
          ...actorOf(req.principal),
          ...originOf(req),
          action: entry.action,
          resourceType: entry.resourceType,
          resourceId: resourceIdOf(entry, req.params, response) ?? null,
          statusCode: status,
          details: detailsOf(entry, req.body),
        });
      } else if (entry?.refused && req.principal && status >= 400 && status < 500 && status !== 401) {
        // A decision the gateway refused (expired, decided already): who tried is worth keeping.
        audit.record({
          environmentId: req.principal.environmentId,
          ...actorOf(req.principal),
          ...originOf(req),
          action: entry.refused,
          resourceType: entry.resourceType,
          resourceId: resourceIdOf(entry, req.params, undefined) ?? null,
          statusCode: status,
        });
      }
      done();
    },
  };
  return {
    ...hooks,
    /**
     * An onRoute hook: only the routes that record something (changes) get the two hooks, so reads
     * and tool calls, most of the traffic, run neither.
     */
    onRoute(route: RouteOptions): void {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!methods.some((method) => actionForRoute(method, route.url) !== undefined)) return;
      const existing = <T>(hook: T | T[] | undefined): T[] =>
        hook === undefined ? [] : Array.isArray(hook) ? hook : [hook];
      route.onSend = [...existing(route.onSend), hooks.onSend] as RouteOptions['onSend'];
      route.onResponse = [...existing(route.onResponse), hooks.onResponse] as RouteOptions['onResponse'];
    },
  };
}
