import { describeGoogleError, googleOAuth } from './google.js';
import type { ProviderDefinition } from './types.js';

export const googleSheets: ProviderDefinition = {
  key: 'google_sheets',
  displayName: 'Google Sheets',
  kind: 'Spreadsheets',
  toolPrefix: 'sheets',
  oauth: { ...googleOAuth, defaultScopes: ['https://www.googleapis.com/auth/spreadsheets'] },
  api: {
    baseUrl: 'https://sheets.googleapis.com',
    defaultHeaders: {},
    pathRewrites: [],
    describeError: describeGoogleError,
  },
  emulator: 'google',
};
