import type { FastifyReply } from 'fastify';
import { correlationId } from './errors.js';
import type { Portal } from './store.js';

/**
 * HubSpot's burst limit for public (OAuth) apps: 110 requests in any rolling 10 seconds per
 * installing account. Every CRM answer tells the app where it stands (X-HubSpot-RateLimit-*); a
 * request over the limit is answered 429 with a RATE_LIMIT body and no Retry-After, as HubSpot does.
 */
export const TEN_SECONDLY = { max: 110, intervalMs: 10_000 };

/** Counts the request against the portal's window; false (429 sent) when the window is full. */
export function withinRateLimit(portal: Portal, reply: FastifyReply, now: number): boolean {
  const calls = portal.recentCalls;
  const since = now - TEN_SECONDLY.intervalMs;
  while (calls.length > 0 && (calls[0] as number) <= since) calls.shift();
  const allowed = calls.length < TEN_SECONDLY.max;
  if (allowed) calls.push(now);
  reply
    .header('x-hubspot-ratelimit-interval-milliseconds', String(TEN_SECONDLY.intervalMs))
    .header('x-hubspot-ratelimit-max', String(TEN_SECONDLY.max))
    .header('x-hubspot-ratelimit-remaining', String(Math.max(0, TEN_SECONDLY.max - calls.length)));
  if (allowed) return true;
  portal.rateLimited += 1;
  reply
    .code(429)
    .header('content-type', 'application/json;charset=utf-8')
    .send({
      status: 'error',
      message: 'You have reached your ten_secondly_rolling limit.',
      errorType: 'RATE_LIMIT',
      correlationId: correlationId(),
      policyName: 'TEN_SECONDLY_ROLLING',
      groupName: `publicapi:oauth:${portal.hubId}`,
    });
  return false;
}
