import type { ProviderDefinition } from './types.js';

export const sharepoint: ProviderDefinition = {
  key: 'sharepoint',
  displayName: 'SharePoint (Microsoft Graph)',
  kind: 'Site library',
  oauth: {
    authorizeUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token',
    // Multi-tenant apps sign in at /common; single-tenant apps must name their tenant.
    tenant: { default: 'common' },
    tokenRequest: 'form_post',
    pkce: true,
    scopeSeparator: ' ',
    defaultScopes: ['User.Read', 'Sites.ReadWrite.All', 'Files.ReadWrite.All'],
    // Without offline_access Microsoft issues no refresh token.
    requiredScopes: ['offline_access'],
    extraAuthorizeParams: { response_mode: 'query' },
    refreshRotates: true,
    refreshMarginSeconds: 300,
    // The identity platform expires refresh tokens inactive for 90 days.
    refreshTokenIdleDays: 90,
    // The access token's extended lifetime (for outages of the identity platform), not an account fact.
    tokenResponseTokenFields: ['ext_expires_in'],
  },
  api: {
    baseUrl: 'https://graph.microsoft.com',
    defaultHeaders: {},
    // The specification lists GET /v1.0/me/sites ("list sites"), which Graph v1.0 does not have:
    // it is answered as the site search that lists every site the user can reach.
    pathRewrites: [{ from: '/v1.0/me/sites', to: '/v1.0/sites', exact: true, query: { search: '*' } }],
    // {error:{code, message, innerError}}
    describeError: (_status, body) => {
      const error = (body as { error?: { message?: unknown; code?: unknown } })?.error;
      return {
        ...(typeof error?.message === 'string' ? { message: error.message } : {}),
        rateLimited: error?.code === 'TooManyRequests' || error?.code === 'activityLimitReached',
      };
    },
  },
  emulator: 'microsoft',
};
