import { describe, expect, it } from 'vitest';
import { classifyTokenError } from '../src/oauth/client.js';
import { getProvider } from '../src/providers/catalog.js';

// What each provider's token endpoint answers, and what it means for the account: only a refused
// grant makes the user authorize again; the connection's own configuration is the operator's to fix.
describe('token endpoint errors by cause', () => {
  it.each([
    [
      'Microsoft, application not found (AADSTS700016)',
      'sharepoint',
      400,
      {
        error: 'unauthorized_client',
        error_description: "AADSTS700016: Application with identifier 'x' was not found in the directory.",
      },
      'invalid_client',
    ],
    [
      'Microsoft, wrong secret (AADSTS7000215)',
      'sharepoint',
      401,
      { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' },
      'invalid_client',
    ],
    [
      'Microsoft, revoked grant (AADSTS50173)',
      'sharepoint',
      400,
      { error: 'invalid_grant', error_description: 'AADSTS50173: The provided grant has expired.' },
      'invalid_grant',
    ],
    [
      'HubSpot, unknown client',
      'hubspot',
      400,
      { status: 'BAD_CLIENT_ID', message: 'missing or unknown client id' },
      'invalid_client',
    ],
    [
      'HubSpot, bad refresh token',
      'hubspot',
      400,
      { status: 'BAD_REFRESH_TOKEN', message: 'missing or invalid refresh token' },
      'invalid_grant',
    ],
    [
      'Google, scope the client may not ask for',
      'google_drive',
      400,
      { error: 'invalid_scope' },
      'invalid_client',
    ],
    ['Google, throttled', 'google_drive', 429, { error: 'rate_limit_exceeded' }, 'transient'],
    ['Notion, server error', 'notion', 503, {}, 'transient'],
  ] as const)('%s', (_case, provider, status, body, kind) => {
    expect(classifyTokenError(status, body, getProvider(provider)).kind).toBe(kind);
  });

  it('knows HubSpot’s codes only for HubSpot', () => {
    expect(classifyTokenError(400, { status: 'BAD_REFRESH_TOKEN' }, getProvider('notion')).kind).toBe(
      'invalid_response',
    );
  });
});
