import type { ProviderDefinition } from './types.js';

export const notion: ProviderDefinition = {
  key: 'notion',
  displayName: 'Notion',
  kind: 'Workspace pages',
  toolPrefix: 'notes',
  oauth: {
    authorizeUrl: 'https://api.notion.com/v1/oauth/authorize',
    tokenUrl: 'https://api.notion.com/v1/oauth/token',
    revocation: { url: 'https://api.notion.com/v1/oauth/revoke', style: 'basic_json', token: 'access' },
    tokenRequest: 'basic_json',
    pkce: false,
    scopeSeparator: ' ',
    defaultScopes: [],
    requiredScopes: [],
    extraAuthorizeParams: { owner: 'user' },
    refreshRotates: true,
    refreshMarginSeconds: 300,
  },
  api: {
    baseUrl: 'https://api.notion.com',
    defaultHeaders: { 'notion-version': '2022-06-28' },
    versionHeader: 'notion-version',
    pathRewrites: [],
    // {object:"error", status, code, message, request_id}
    describeError: (_status, body) => {
      const b = body as { message?: unknown; code?: unknown };
      return {
        ...(typeof b?.message === 'string' ? { message: b.message } : {}),
        rateLimited: b?.code === 'rate_limited',
      };
    },
  },
  emulator: 'notion',
};
