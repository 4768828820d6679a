import { describeGoogleError, googleOAuth } from './google.js';
import type { ProviderDefinition } from './types.js';

export const googleDrive: ProviderDefinition = {
  key: 'google_drive',
  displayName: 'Google Drive',
  kind: 'File storage',
  toolPrefix: 'drive',
  oauth: { ...googleOAuth, defaultScopes: ['https://www.googleapis.com/auth/drive'] },
  // Uploads live on the same host under /upload/drive/v3/files.
  api: {
    baseUrl: 'https://www.googleapis.com',
    defaultHeaders: {},
    pathRewrites: [],
    describeError: describeGoogleError,
  },
  emulator: 'google',
};
