import { type ErrorCode, Problem } from '../errors/problem.js';
import type { ProviderDefinition } from '../providers/catalog.js';
import { retryAfterMs } from './http.js';

/**
 * A provider's error answer as a problem: a stable code by status (Google's 403 rate limits count as
 * 429), the provider's own message in `detail`, its body under `upstream`.
 */
export function upstreamProblem(
  provider: ProviderDefinition,
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): Problem {
  const described = provider.api.describeError(status, body);
  const rateLimited = status === 429 || described.rateLimited === true;
  const code: ErrorCode = rateLimited
    ? 'upstream_rate_limited'
    : status === 400 || status === 422
      ? 'upstream_validation'
      : status === 401
        ? 'upstream_unauthorized'
        : status === 403
          ? 'upstream_forbidden'
          : status === 404 || status === 410
            ? 'upstream_not_found'
            : status === 409 || status === 412
              ? 'upstream_conflict'
              : 'upstream_error';
  const message = described.message ?? `HTTP ${status}`;
  const wait = rateLimited ? (retryAfterMs(headers['retry-after']) ?? 1000) : undefined;
  const detail = rateLimited
    ? `${provider.displayName} is rate limiting these requests: ${message}. Wait ${Math.ceil((wait ?? 1000) / 1000)} s (retry_after_ms) and retry.`
    : `${provider.displayName} answered ${status}: ${message}`;
  return new Problem(code, detail, {
    retryable: rateLimited || status >= 500,
    ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    upstream: { status, body },
  });
}
