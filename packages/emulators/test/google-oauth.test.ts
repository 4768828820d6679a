import { createHash, randomBytes } from 'node:crypto';
import { OAuth2Client } from 'google-auth-library';
import { google } from 'googleapis';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { submitConsent } from '../src/index.js';
import { useEmulators } from './helpers/emulators.js';

const CLIENT = {
  clientId: '123456789012-emulated.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-emulated-secret',
  redirectUris: ['http://localhost:9876/oauth/callback'],
};
const CALENDAR = 'https://www.googleapis.com/auth/calendar';
const DRIVE_READONLY = 'https://www.googleapis.com/auth/drive.readonly';

describe('Google OAuth emulator, through google-auth-library', () => {
  const emu = useEmulators({ modules: ['google'] });
  let base: string;

  beforeAll(() => {
    base = emu.urls.google;
  });
  beforeEach(() => {
    emu.control.registerClient('google', CLIENT);
  });

  const client = () =>
    new OAuth2Client({
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.clientSecret,
      redirectUri: CLIENT.redirectUris[0],
      endpoints: {
        oauth2AuthBaseUrl: `${base}/o/oauth2/v2/auth`,
        oauth2TokenUrl: `${base}/token`,
        oauth2RevokeUrl: `${base}/revoke`,
        tokenInfoUrl: `${base}/tokeninfo`,
        oauth2FederatedSignonJwkCertsUrl: `${base}/oauth2/v3/certs`,
        oauth2FederatedSignonPemCertsUrl: `${base}/oauth2/v1/certs`,
      },
    });

  async function authorize(oauth: OAuth2Client, scope: string[], extra: Record<string, string> = {}) {
    const verifier = randomBytes(32).toString('base64url');
    const url = oauth.generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      scope,
      state: 'xyz',
      code_challenge_method: 'S256' as never,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      ...extra,
    });
    const location = new URL(
      await submitConsent(url, { decision: 'allow', userId: '110000000000000000002' }),
    );
    expect(location.searchParams.get('state')).toBe('xyz');
    const code = location.searchParams.get('code');
    expect(code).toMatch(/^4\//);
    return { code: code!, verifier };
  }

  it('runs the code flow with PKCE and calls Calendar with the token', async () => {
    const oauth = client();
    const { code, verifier } = await authorize(oauth, [CALENDAR, 'openid', 'email']);
    const { tokens } = await oauth.getToken({ code, codeVerifier: verifier });
    expect(tokens.access_token).toMatch(/^ya29\./);
    expect(tokens.refresh_token).toMatch(/^1\/\//);
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.scope?.split(' ').sort()).toEqual([CALENDAR, 'email', 'openid'].sort());
    expect(tokens.expiry_date).toBeGreaterThan(Date.now() + 3500_000);
    expect(tokens.expiry_date).toBeLessThanOrEqual(Date.now() + 3600_000);

    const ticket = await oauth.verifyIdToken({ idToken: tokens.id_token!, audience: CLIENT.clientId });
    expect(ticket.getPayload()).toMatchObject({
      sub: '110000000000000000002',
      email: 'grace.hopper@example.com',
    });

    oauth.setCredentials(tokens);
    const cal = google.calendar({ version: 'v3', auth: oauth as never });
    const list = await cal.calendarList.list({}, { rootUrl: `${base}/` });
    expect(list.data.items?.find((c) => c.primary)?.id).toBe('grace.hopper@example.com');

    const info = await oauth.getTokenInfo(tokens.access_token!);
    expect(info).toMatchObject({
      aud: CLIENT.clientId,
      sub: '110000000000000000002',
      email: 'grace.hopper@example.com',
    });
    expect(info.scopes).toContain(CALENDAR);
  });

  it('refreshes an expired access token automatically, keeping the refresh token', async () => {
    const oauth = client();
    const { code, verifier } = await authorize(oauth, [DRIVE_READONLY]);
    const { tokens } = await oauth.getToken({ code, codeVerifier: verifier });
    // An hour later: the client knows the token has expired and so does the emulator.
    oauth.setCredentials({ ...tokens, expiry_date: Date.now() - 1000 });
    const refreshed: Array<Record<string, unknown>> = [];
    oauth.on('tokens', (t) => refreshed.push(t as Record<string, unknown>));

    emu.control.expireAccessTokens('google');
    const old = await fetch(`${base}/drive/v3/files`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(old.status).toBe(401);

    const drive = google.drive({ version: 'v3', auth: oauth as never });
    const res = await drive.files.list({ pageSize: 1 }, { rootUrl: `${base}/` });
    expect(res.status).toBe(200);
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]!.access_token).not.toBe(tokens.access_token);
    expect(oauth.credentials.refresh_token).toBe(tokens.refresh_token);

    // Google refresh tokens do not rotate: the same one keeps working.
    const again = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: CLIENT.clientId,
        client_secret: CLIENT.clientSecret,
      }),
    });
    expect(again.status).toBe(200);
    const body = (await again.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3599, scope: DRIVE_READONLY });
    expect(body.refresh_token).toBeUndefined();
  });

  it('refreshes and retries when a stored token without expiry is refused with 401', async () => {
    const oauth = client();
    const { code, verifier } = await authorize(oauth, [DRIVE_READONLY]);
    const { tokens } = await oauth.getToken({ code, codeVerifier: verifier });
    oauth.setCredentials({ access_token: tokens.access_token, refresh_token: tokens.refresh_token });
    emu.control.expireAccessTokens('google');
    const drive = google.drive({ version: 'v3', auth: oauth as never });
    const res = await drive.files.list({ pageSize: 1 }, { rootUrl: `${base}/` });
    expect(res.status).toBe(200);
    expect(oauth.credentials.access_token).not.toBe(tokens.access_token);
  });

  it('revokes: the access token and the refresh token stop working', async () => {
    const oauth = client();
    const { code, verifier } = await authorize(oauth, [CALENDAR]);
    const { tokens } = await oauth.getToken({ code, codeVerifier: verifier });
    const revoked = await oauth.revokeToken(tokens.access_token!);
    expect(revoked.status).toBe(200);
    expect(revoked.data).toEqual({});

    const api = await fetch(`${base}/calendar/v3/users/me/calendarList`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(api.status).toBe(401);
    oauth.setCredentials({ refresh_token: tokens.refresh_token });
    const refresh = await oauth
      .refreshAccessToken()
      .catch((e: { response?: { status: number; data: unknown } }) => e.response);
    expect(refresh).toMatchObject({
      status: 400,
      data: { error: 'invalid_grant', error_description: 'Bad Request' },
    });

    const twice = await fetch(`${base}/revoke?token=${encodeURIComponent(tokens.access_token!)}`, {
      method: 'POST',
    });
    expect(twice.status).toBe(400);
    expect(await twice.json()).toEqual({
      error: 'invalid_token',
      error_description: 'Token expired or revoked',
    });
  });

  it('accepts the token to revoke in a form body', async () => {
    const issued = emu.control.issueToken('google', {
      userId: 'ada.lovelace@example.com',
      scopes: [CALENDAR],
    });
    const res = await fetch(`${base}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: issued.refresh_token ?? issued.access_token }),
    });
    expect(res.status).toBe(200);
    const unknown = await fetch(`${base}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'ya29.unknown' }),
    });
    expect(unknown.status).toBe(400);
  });

  it('authenticates the client with HTTP Basic too', async () => {
    const oauth = client();
    const { code, verifier } = await authorize(oauth, [CALENDAR]);
    const res = await fetch(`${base}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT.clientId}:${CLIENT.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: CLIENT.redirectUris[0]!,
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { access_token: string }).access_token).toMatch(/^ya29\./);
  });

  it('answers token errors in Google words', async () => {
    const post = (fields: Record<string, string>) =>
      fetch(`${base}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields),
      });
    const badCode = await post({
      grant_type: 'authorization_code',
      code: '4/not-a-code',
      redirect_uri: CLIENT.redirectUris[0]!,
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
    });
    expect(badCode.status).toBe(400);
    expect(await badCode.json()).toEqual({ error: 'invalid_grant', error_description: 'Bad Request' });

    const badClient = await post({
      grant_type: 'refresh_token',
      refresh_token: '1//x',
      client_id: 'nobody.apps.googleusercontent.com',
      client_secret: 'x',
    });
    expect(badClient.status).toBe(401);
    expect(await badClient.json()).toEqual({
      error: 'invalid_client',
      error_description: 'The OAuth client was not found.',
    });

    const wrongSecret = await post({
      grant_type: 'refresh_token',
      refresh_token: '1//x',
      client_id: CLIENT.clientId,
      client_secret: 'GOCSPX-wrong',
    });
    expect(wrongSecret.status).toBe(401);
    expect(await wrongSecret.json()).toEqual({ error: 'invalid_client', error_description: 'Unauthorized' });

    const badGrant = await post({
      grant_type: 'password',
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
    });
    expect(badGrant.status).toBe(400);
    expect(((await badGrant.json()) as { error: string }).error).toBe('unsupported_grant_type');
  });

  it('refuses unknown or missing scopes at the authorize step', async () => {
    const oauth = client();
    const unknown = oauth.generateAuthUrl({
      scope: ['https://www.googleapis.com/auth/gmail.send'],
      state: 's',
    });
    const location = new URL(await submitConsent(unknown, { decision: 'allow' }));
    expect(location.searchParams.get('error')).toBe('invalid_scope');
    expect(location.searchParams.get('error_description')).toContain('gmail.send');
    expect(location.searchParams.get('state')).toBe('s');
    expect(location.searchParams.get('code')).toBeNull();

    const none = oauth.generateAuthUrl({ state: 's' });
    const noScope = new URL(await submitConsent(none, { decision: 'allow' }));
    expect(noScope.searchParams.get('error')).toBe('invalid_request');
  });

  it('reports a denied consent as access_denied', async () => {
    const oauth = client();
    const url = oauth.generateAuthUrl({ scope: [CALENDAR], state: 'd' });
    const location = new URL(await submitConsent(url, { decision: 'deny' }));
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('d');
  });

  describe('refresh tokens follow access_type and prompt', () => {
    const GRACE = '110000000000000000002';
    /** Consents with the given extra authorize parameters and exchanges the code by hand. */
    async function exchange(extra: Record<string, string>) {
      const url = `${base}/o/oauth2/v2/auth?${new URLSearchParams({
        client_id: CLIENT.clientId,
        redirect_uri: CLIENT.redirectUris[0]!,
        response_type: 'code',
        scope: DRIVE_READONLY,
        state: 'r',
        ...extra,
      })}`;
      const code = new URL(await submitConsent(url, { decision: 'allow', userId: GRACE })).searchParams.get(
        'code',
      );
      const res = await fetch(`${base}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: code ?? '',
          redirect_uri: CLIENT.redirectUris[0]!,
          client_id: CLIENT.clientId,
          client_secret: CLIENT.clientSecret,
        }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { access_token: string; refresh_token?: string };
    }

    it('issues none for online access (the default)', async () => {
      expect((await exchange({})).refresh_token).toBeUndefined();
      expect((await exchange({ access_type: 'online', prompt: 'consent' })).refresh_token).toBeUndefined();
      const grants = [...emu.control.oauth('google').grants.values()];
      expect(grants.every((g) => g.refreshToken === undefined)).toBe(true);
    });

    it('issues one for offline access the first time, again only with prompt=consent or after revocation', async () => {
      const first = await exchange({ access_type: 'offline' });
      expect(first.refresh_token).toMatch(/^1\/\//);
      expect((await exchange({ access_type: 'offline' })).refresh_token).toBeUndefined();
      const forced = await exchange({ access_type: 'offline', prompt: 'select_account consent' });
      expect(forced.refresh_token).toMatch(/^1\/\//);
      expect(forced.refresh_token).not.toBe(first.refresh_token);

      // The first refresh token still works.
      const refresh = await fetch(`${base}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: first.refresh_token!,
          client_id: CLIENT.clientId,
          client_secret: CLIENT.clientSecret,
        }),
      });
      expect(refresh.status).toBe(200);

      emu.control.revokeGrants('google', { userId: GRACE });
      expect((await exchange({ access_type: 'offline' })).refresh_token).toMatch(/^1\/\//);
    });

    it('revokes the tokens issued from a code that is replayed', async () => {
      const oauth = client();
      const { code, verifier } = await authorize(oauth, [CALENDAR]);
      const { tokens } = await oauth.getToken({ code, codeVerifier: verifier });
      const replay = await oauth
        .getToken({ code, codeVerifier: verifier })
        .catch((e: { response?: { status: number; data: unknown } }) => e.response);
      expect(replay).toMatchObject({ status: 400, data: { error: 'invalid_grant' } });
      const api = await fetch(`${base}/calendar/v3/users/me/calendarList`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(api.status).toBe(401);
      oauth.setCredentials({ refresh_token: tokens.refresh_token });
      const refresh = await oauth
        .refreshAccessToken()
        .catch((e: { response?: { status: number; data: unknown } }) => e.response);
      expect(refresh).toMatchObject({ status: 400, data: { error: 'invalid_grant' } });
    });
  });
});
