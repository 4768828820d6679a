import { describeGoogleError, googleOAuth } from './google.js';
import type { ProviderDefinition } from './types.js';

export const googleDrive: ProviderDefinition = {
  key: 'google_drive',
  displayName: 'Google Drive',
  kind: 'File storage',
  toolPrefix: 'drive',
  // The drive_ tools only read; drive.file adds creating (and changing) the files this app writes,
  // e.g. uploads through the proxy. Full `drive` is for connections that must change any file.
  oauth: {
    ...googleOAuth,
    defaultScopes: [
      'https://www.googleapis.com/auth/drive.readonly',
      'https://www.googleapis.com/auth/drive.file',
    ],
  },
  // Uploads live on the same host under /upload/drive/v3/files.
  api: {
    baseUrl: 'https://www.googleapis.com',
    defaultHeaders: {},
    pathRewrites: [],
    describeError: describeGoogleError,
  },
  emulator: 'google',
};
