import type { ProviderDefinition } from './types.js';

export const hubspot: ProviderDefinition = {
  key: 'hubspot',
  displayName: 'HubSpot',
  kind: 'CRM',
  toolPrefix: 'crm',
  oauth: {
    authorizeUrl: 'https://app.hubspot.com/oauth/authorize',
    tokenUrl: 'https://api.hubapi.com/oauth/v1/token',
    revocation: {
      url: 'https://api.hubapi.com/oauth/v1/refresh-tokens/{token}',
      style: 'delete',
      token: 'refresh',
    },
    tokenRequest: 'form_post',
    pkce: false,
    scopeSeparator: ' ',
    defaultScopes: [
      'oauth',
      'crm.objects.contacts.read',
      'crm.objects.contacts.write',
      'crm.objects.companies.read',
      'crm.objects.companies.write',
      'crm.objects.deals.read',
      'crm.objects.deals.write',
      'crm.objects.owners.read',
    ],
    requiredScopes: [],
    extraAuthorizeParams: {},
    refreshRotates: false,
    // Access tokens live 30 minutes; refresh with a comfortable margin.
    refreshMarginSeconds: 300,
    // HubSpot's token errors are {status: "BAD_…", message}.
    tokenErrorField: 'status',
    tokenErrorKinds: {
      BAD_REFRESH_TOKEN: 'invalid_grant',
      BAD_AUTH_CODE: 'invalid_grant',
      BAD_CLIENT_ID: 'invalid_client',
      BAD_CLIENT_SECRET: 'invalid_client',
      BAD_REDIRECT_URI: 'invalid_client',
    },
  },
  api: {
    baseUrl: 'https://api.hubapi.com',
    defaultHeaders: {},
    pathRewrites: [],
    // {status:"error", message, correlationId, category}
    describeError: (_status, body) => {
      const b = body as { message?: unknown; errorType?: unknown; category?: unknown };
      return {
        ...(typeof b?.message === 'string' ? { message: b.message } : {}),
        rateLimited: b?.errorType === 'RATE_LIMIT' || b?.category === 'RATE_LIMITS',
      };
    },
  },
  emulator: 'hubspot',
};
