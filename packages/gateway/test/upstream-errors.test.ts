import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { retryAfterMs, toUpstreamProblem } from '../src/upstream/http.js';

describe('transport failures as problems', () => {
  const origin = 'https://api.example.com';

  it('names the provider host and says whether to retry', () => {
    const timeout = toUpstreamProblem(new errors.HeadersTimeoutError(), origin);
    expect(timeout).toMatchObject({ code: 'upstream_timeout', status: 504 });
    expect(timeout.message).toContain('api.example.com');
    const refused = toUpstreamProblem(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      origin,
    );
    expect(refused).toMatchObject({ code: 'upstream_unavailable', status: 503 });
  });

  it('answers a request the HTTP client refuses to send with a 400, not an outage', () => {
    const problem = toUpstreamProblem(new errors.NotSupportedError('expect header not supported'), origin);
    expect(problem).toMatchObject({ code: 'invalid_input', status: 400 });
    expect(problem.message).toContain('expect header not supported');
  });

  it('reads Retry-After as seconds or as a date', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Sun, 22 Nov 2026 10:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});
