import type { ProviderDefinition, ProviderErrorDescription } from './types.js';

/** Google's OAuth facts, shared by the four Google APIs. */
export const googleOAuth: ProviderDefinition['oauth'] = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  // Revoking the refresh token ends the whole grant.
  revocation: { url: 'https://oauth2.googleapis.com/revoke', style: 'form', token: 'refresh' },
  tokenRequest: 'form_post',
  pkce: true,
  scopeSeparator: ' ',
  defaultScopes: [],
  requiredScopes: [],
  // offline + consent is what makes Google return a refresh token on every authorization.
  extraAuthorizeParams: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  refreshRotates: false,
  refreshMarginSeconds: 300,
  // Google expires refresh tokens unused for six months.
  refreshTokenIdleDays: 180,
};

const GOOGLE_RATE_LIMIT_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded']);

/**
 * Google's `{error:{code,message,errors:[{reason}]|status}}`; 403 with a rate-limit reason means 429;
 * FAILED_PRECONDITION is a write refused because its required revision is no longer the latest.
 */
export function describeGoogleError(_status: number, body: unknown): ProviderErrorDescription {
  const error = (
    body as { error?: { message?: unknown; errors?: Array<{ reason?: unknown }>; status?: unknown } }
  )?.error;
  if (!error || typeof error !== 'object') return {};
  const reasons = (error.errors ?? []).map((e) => e?.reason);
  return {
    ...(typeof error.message === 'string' ? { message: error.message } : {}),
    rateLimited:
      reasons.some((r) => typeof r === 'string' && GOOGLE_RATE_LIMIT_REASONS.has(r)) ||
      error.status === 'RESOURCE_EXHAUSTED',
    ...(error.status === 'FAILED_PRECONDITION' ? { conflict: true } : {}),
  };
}
