import { describeGoogleError, googleOAuth } from './google.js';
import type { ProviderDefinition } from './types.js';

export const googleDocs: ProviderDefinition = {
  key: 'google_docs',
  displayName: 'Google Docs',
  kind: 'Word processing',
  toolPrefix: 'docs',
  oauth: { ...googleOAuth, defaultScopes: ['https://www.googleapis.com/auth/documents'] },
  api: {
    baseUrl: 'https://docs.googleapis.com',
    defaultHeaders: {},
    // The specification's proxy paths say /docs/v1/documents; the Docs API serves /v1/documents.
    pathRewrites: [{ from: '/docs/v1/', to: '/v1/' }],
    describeError: describeGoogleError,
  },
  emulator: 'google',
};
