import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { EmulatorHost, ModuleRuntime } from './host.js';

/**
 * Runs first for every request inside an emulator prefix: counts it and applies an injected
 * fault before authentication or the route get a chance to answer.
 */
export function requestHook(host: EmulatorHost, runtime: ModuleRuntime): onRequestAsyncHookHandler {
  return async function countAndInjectFaults(req: FastifyRequest, reply: FastifyReply) {
    const routeKey = req.is404
      ? undefined
      : `${req.method} ${host.pathWithinRoot(req.routeOptions.url ?? '')}`;
    if (routeKey) host.counters.countRequest(routeKey);
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
    const fault = host.faults.take(runtime.module.key, req.method, host.pathWithinRoot(req.url), query);
    if (!fault) return;
    if (routeKey) host.counters.countFault(routeKey);
    if (fault.latencyMs) await sleep(fault.latencyMs);
    if (fault.drop) {
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    if (fault.status === undefined) return;
    reply.code(fault.status);
    if (fault.headers) reply.headers(fault.headers);
    if (fault.body === undefined) return reply.send();
    if (typeof fault.body === 'string' || Buffer.isBuffer(fault.body)) return reply.send(fault.body);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(fault.body));
  };
}
