import { describeGoogleError, googleOAuth } from './google.js';
import type { ProviderDefinition } from './types.js';

export const googleCalendar: ProviderDefinition = {
  key: 'google_calendar',
  displayName: 'Google Calendar',
  kind: 'Calendar',
  toolPrefix: 'calendar',
  oauth: { ...googleOAuth, defaultScopes: ['https://www.googleapis.com/auth/calendar'] },
  api: {
    baseUrl: 'https://www.googleapis.com',
    defaultHeaders: {},
    pathRewrites: [],
    describeError: describeGoogleError,
  },
  emulator: 'google',
};
