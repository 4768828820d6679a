import type { IncomingMessage } from 'node:http';

const ORIGIN_BASE = Symbol('portico.proxyOriginBase');

/**
 * Requests that came in on the proxy origin (PORTICO_PROXY_PORT) carry the base their caller used,
 * so the provider's links are turned back to that origin rather than to `{public URL}/proxy`.
 */
export function markOriginBase(req: IncomingMessage, base: string): void {
  (req as IncomingMessage & { [ORIGIN_BASE]?: string })[ORIGIN_BASE] = base;
}

/** The base a proxy-origin request was marked with; undefined for the main port. */
export function originBase(req: IncomingMessage): string | undefined {
  return (req as IncomingMessage & { [ORIGIN_BASE]?: string })[ORIGIN_BASE];
}
