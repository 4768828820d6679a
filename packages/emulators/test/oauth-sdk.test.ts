import { Client as NotionClient } from '@notionhq/client';
import { CodeChallengeMethod, OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulators, startEmulators, submitConsent } from '../src/index.js';

const REDIRECT = 'http://localhost:7777/oauth/callback';
const CLIENT_ID = 'sdk-client';
const CLIENT_SECRET = 'sdk-secret';

/** The official OAuth clients drive the generic server exactly as they drive the real providers. */
describe('OAuth with the official SDK clients', () => {
  let emu: RunningEmulators;
  beforeAll(async () => {
    emu = await startEmulators({ modules: ['google', 'notion'] });
    for (const key of ['google', 'notion'] as const) {
      emu.control.registerClient(key, {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [REDIRECT],
      });
    }
  });
  afterAll(() => emu.close());

  it('google-auth-library: PKCE code flow, refresh after expiry, invalid_grant after revocation', async () => {
    const base = emu.urls.google;
    const oauth = new OAuth2Client({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: REDIRECT,
      endpoints: { oauth2AuthBaseUrl: `${base}/o/oauth2/v2/auth`, oauth2TokenUrl: `${base}/token` },
    });
    const { codeVerifier, codeChallenge } = await oauth.generateCodeVerifierAsync();
    const authUrl = oauth.generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      scope: ['https://www.googleapis.com/auth/drive'],
      state: 'g-state',
      code_challenge: codeChallenge,
      code_challenge_method: CodeChallengeMethod.S256,
    });
    expect(authUrl.startsWith(`${base}/o/oauth2/v2/auth?`)).toBe(true);
    const location = new URL(
      await submitConsent(authUrl, { decision: 'allow', userId: 'grace.hopper@example.com' }),
    );
    expect(location.searchParams.get('state')).toBe('g-state');

    const { tokens } = await oauth.getToken({ code: location.searchParams.get('code')!, codeVerifier });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.expiry_date).toBeGreaterThan(Date.now() + 3500_000);
    oauth.setCredentials(tokens);

    // Expired at the server: the library refreshes with its (static) refresh token.
    emu.control.expireAccessTokens('google');
    const refreshed = await oauth.refreshAccessToken();
    expect(refreshed.credentials.access_token).not.toBe(tokens.access_token);
    expect(refreshed.credentials.refresh_token).toBe(tokens.refresh_token);
    expect(emu.control.counters().token_grants.google).toMatchObject({
      authorization_code: 1,
      refresh_token: 1,
    });

    emu.control.revokeGrants('google');
    await expect(oauth.refreshAccessToken()).rejects.toThrow(/invalid_grant/);
  });

  it('@notionhq/client: code exchange with Basic auth, rotating refresh tokens', async () => {
    const base = emu.urls.notion;
    const authUrl = `${base}/v1/oauth/authorize?${new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      response_type: 'code',
      owner: 'user',
      state: 'n-state',
    })}`;
    const location = new URL(await submitConsent(authUrl, { decision: 'allow' }));
    const notion = new NotionClient({ baseUrl: base });
    const tokens = await notion.oauth.token({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    expect(tokens.access_token).toBeTruthy();
    const refreshToken = (tokens as { refresh_token?: string }).refresh_token;
    expect(refreshToken).toBeTruthy();

    // @notionhq/client 4.0.1 sends only grant_type, code, redirect_uri and external_account, so
    // refreshing goes over plain HTTP the way Notion documents it: Basic auth and a JSON body.
    const refresh = (token: string) =>
      fetch(`${base}/v1/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: token }),
      });
    const rotatedRes = await refresh(refreshToken!);
    expect(rotatedRes.status).toBe(200);
    const rotated = (await rotatedRes.json()) as { access_token: string; refresh_token: string };
    expect(rotated.refresh_token).toBeTruthy();
    expect(rotated.refresh_token).not.toBe(refreshToken);
    expect((await refresh(refreshToken!)).status).toBe(400);

    const me = await new NotionClient({ auth: rotated.access_token, baseUrl: base }).users.me({});
    expect(me.object).toBe('user');
  });
});
