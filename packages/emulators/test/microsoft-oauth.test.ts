import { createHash, randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { submitConsent } from '../src/index.js';
import { useEmulators } from './helpers/emulators.js';

const CLIENT_ID = '6731de76-14a6-49ae-97bc-6eba6914391e';
const CLIENT_SECRET = 'emulated~secret.value';
const REDIRECT_URI = 'http://localhost:8080/sso/v1/oauth/conn_ms/callback';
const GRACE_EMAIL = 'grace.hopper@fabrikam.com';
const FULL_SCOPE =
  'offline_access https://graph.microsoft.com/Sites.ReadWrite.All Files.ReadWrite.All User.Read openid profile';

const emu = useEmulators({ modules: ['microsoft'] });

interface TokenBody {
  token_type: string;
  scope: string;
  expires_in: number;
  ext_expires_in: number;
  access_token: string;
  refresh_token?: string;
  id_token?: string;
}

interface AadError {
  error: string;
  error_description: string;
  error_codes: number[];
  timestamp: string;
  trace_id: string;
  correlation_id: string;
  error_uri: string;
}

beforeEach(() => {
  emu.control.registerClient('microsoft', {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [REDIRECT_URI],
  });
});

function authorizeUrl(params: Record<string, string>, tenant = 'common'): string {
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    response_mode: 'query',
    state: 'st-123',
    ...params,
  });
  return `${emu.urls.microsoft}/${tenant}/oauth2/v2.0/authorize?${query}`;
}

async function token(
  params: Record<string, string>,
  opts: { tenant?: string; basic?: boolean } = {},
): Promise<{ status: number; body: TokenBody & AadError }> {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (opts.basic) {
    headers.authorization = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
  } else {
    form.set('client_id', CLIENT_ID);
    form.set('client_secret', CLIENT_SECRET);
  }
  const res = await fetch(`${emu.urls.microsoft}/${opts.tenant ?? 'common'}/oauth2/v2.0/token`, {
    method: 'POST',
    headers,
    body: form,
  });
  return { status: res.status, body: (await res.json()) as TokenBody & AadError };
}

/** Runs the browser flow with PKCE and exchanges the code. */
async function signIn(scope: string, tenant = 'common'): Promise<TokenBody> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const location = new URL(
    await submitConsent(
      authorizeUrl(
        { scope, code_challenge: challenge, code_challenge_method: 'S256', login_hint: GRACE_EMAIL },
        tenant,
      ),
      { decision: 'allow' },
    ),
  );
  expect(location.searchParams.get('state')).toBe('st-123');
  const code = location.searchParams.get('code')!;
  expect(code).toBeTruthy();
  const { status, body } = await token(
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier, scope },
    { tenant },
  );
  expect(status).toBe(200);
  return body;
}

function decodeJwtPayload(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

function graph(path: string, accessToken: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${emu.urls.microsoft}/v1.0${path}`, {
    ...init,
    headers: { authorization: `Bearer ${accessToken}`, ...(init.headers as Record<string, string>) },
  });
}

function expectAadError(body: AadError, error: string, code: number): void {
  expect(body.error).toBe(error);
  expect(body.error_codes).toEqual([code]);
  expect(body.error_description).toMatch(
    new RegExp(
      `^AADSTS${code}: .+\\r\\nTrace ID: [0-9a-f-]{36}\\r\\nCorrelation ID: [0-9a-f-]{36}\\r\\nTimestamp: \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ$`,
    ),
  );
  expect(body.trace_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(body.correlation_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
  expect(body.error_uri).toBe(`https://login.microsoftonline.com/error?code=${code}`);
}

describe('Microsoft identity platform v2.0 emulator', () => {
  it('exchanges a code for Bearer, refresh and id tokens shaped like the identity platform', async () => {
    const body = await signIn(FULL_SCOPE);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3599);
    expect(body.ext_expires_in).toBe(3599);
    // Short-form Graph scopes, the OIDC scopes asked for, never offline_access.
    expect(body.scope).toBe('Sites.ReadWrite.All Files.ReadWrite.All User.Read profile openid');
    expect(body.access_token).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(body.refresh_token).toBeTruthy();
    const idClaims = decodeJwtPayload(body.id_token!);
    expect(idClaims).toMatchObject({
      aud: CLIENT_ID,
      ver: '2.0',
      preferred_username: GRACE_EMAIL,
      name: 'Grace Hopper',
    });
    expect(idClaims.iss).toBe(`https://login.microsoftonline.com/${idClaims.tid}/v2.0`);

    const me = await graph('/me', body.access_token);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { mail: string }).mail).toBe(GRACE_EMAIL);
  });

  it('accepts any tenant segment', async () => {
    const body = await signIn('offline_access Sites.Read.All', '72f988bf-86f1-41af-91ab-2d7cd011db47');
    expect(body.scope).toBe('Sites.Read.All');
    expect((await graph('/sites/root', body.access_token)).status).toBe(200);
  });

  it('expands https://graph.microsoft.com/.default to the app permissions', async () => {
    const body = await signIn('https://graph.microsoft.com/.default offline_access');
    expect(body.scope).toBe('User.Read Sites.ReadWrite.All Files.ReadWrite.All');
    expect((await graph('/sites/root/drive/root/children', body.access_token)).status).toBe(200);
  });

  it('issues no refresh token without offline_access', async () => {
    const body = await signIn('https://graph.microsoft.com/Sites.ReadWrite.All User.Read');
    expect(body.access_token).toBeTruthy();
    expect(body.refresh_token).toBeUndefined();
    expect(body.id_token).toBeUndefined();
  });

  it('rotates the refresh token on every use and kills the old one', async () => {
    const first = await signIn(FULL_SCOPE);
    const second = await token(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token! },
      { basic: true },
    );
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).toBeTruthy();
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.access_token).not.toBe(first.access_token);
    expect((await graph('/me', second.body.access_token)).status).toBe(200);

    const replay = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
    expect(replay.status).toBe(400);
    expectAadError(replay.body, 'invalid_grant', 70000);

    const third = await token({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token! });
    expect(third.status).toBe(200);
  });

  it('answers a wrong client secret with invalid_client 401 AADSTS7000215', async () => {
    const res = await fetch(`${emu.urls.microsoft}/common/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'whatever',
        client_id: CLIENT_ID,
        client_secret: 'wrong',
      }),
    });
    expect(res.status).toBe(401);
    expectAadError((await res.json()) as AadError, 'invalid_client', 7000215);
  });

  it('refuses a reused code, a wrong PKCE verifier and an unknown grant type', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const location = new URL(
      await submitConsent(
        authorizeUrl({ scope: FULL_SCOPE, code_challenge: challenge, code_challenge_method: 'S256' }),
        { decision: 'allow' },
      ),
    );
    const code = location.searchParams.get('code')!;
    const wrongVerifier = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: randomBytes(32).toString('base64url'),
    });
    expect(wrongVerifier.status).toBe(400);
    expectAadError(wrongVerifier.body, 'invalid_grant', 501481);

    const ok = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    expect(ok.status).toBe(200);
    const reused = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    expectAadError(reused.body, 'invalid_grant', 54005);

    const password = await token({ grant_type: 'password', username: 'x', password: 'y' });
    expect(password.status).toBe(400);
    expectAadError(password.body, 'unsupported_grant_type', 70003);
    expect(password.body.error_description).toContain("unsupported grant type 'password'");
  });

  it('redirects an invalid response_mode back with invalid_request', async () => {
    const location = new URL(
      await submitConsent(authorizeUrl({ scope: FULL_SCOPE, response_mode: 'fragment' }), {
        decision: 'allow',
      }),
    );
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toContain('response_mode');
    expect(location.searchParams.get('state')).toBe('st-123');
  });

  it('revokeSignInSessions ends the grant: refresh fails and the access token is refused', async () => {
    const body = await signIn(FULL_SCOPE);
    const revoke = await graph('/me/revokeSignInSessions', body.access_token, { method: 'POST' });
    expect(revoke.status).toBe(200);
    expect(await revoke.json()).toMatchObject({ value: true });

    const refresh = await token({ grant_type: 'refresh_token', refresh_token: body.refresh_token! });
    expect(refresh.status).toBe(400);
    expectAadError(refresh.body, 'invalid_grant', 50173);

    const me = await graph('/me', body.access_token);
    expect(me.status).toBe(401);
    expect(((await me.json()) as { error: { code: string } }).error.code).toBe('InvalidAuthenticationToken');
  });

  it("revokeSignInSessions revokes all of the user's sessions, with every app, and no one else's", async () => {
    const first = await signIn(FULL_SCOPE);
    const second = await signIn(FULL_SCOPE);
    const otherApp = emu.control.issueToken('microsoft', {
      userId: GRACE_EMAIL,
      clientId: 'another-app',
      scopes: ['offline_access', 'User.Read'],
    });
    const ada = emu.control.issueToken('microsoft', {
      userId: 'ada.lovelace@contoso.com',
      clientId: CLIENT_ID,
    });

    const revoke = await graph('/me/revokeSignInSessions', first.access_token, { method: 'POST' });
    expect(revoke.status).toBe(200);

    for (const session of [first, second]) {
      const refresh = await token({ grant_type: 'refresh_token', refresh_token: session.refresh_token! });
      expectAadError(refresh.body, 'invalid_grant', 50173);
      expect((await graph('/me', session.access_token)).status).toBe(401);
    }
    expect((await graph('/me', otherApp.access_token)).status).toBe(401);
    expect((await graph('/me', ada.access_token)).status).toBe(200);
    const adaRefresh = await token({ grant_type: 'refresh_token', refresh_token: ada.refresh_token! });
    expect(adaRefresh.status).toBe(200);
  });

  it('answers an unknown client with unauthorized_client AADSTS700016 and a missing secret with 7000218', async () => {
    const post = (fields: Record<string, string>) =>
      fetch(`${emu.urls.microsoft}/common/oauth2/v2.0/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', ...fields }),
      });
    const unknown = await post({ client_id: 'ffffffff-0000-4000-8000-000000000000', client_secret: 's' });
    expect(unknown.status).toBe(400);
    const body = (await unknown.json()) as AadError;
    expectAadError(body, 'unauthorized_client', 700016);
    expect(body.error_description).toContain("'ffffffff-0000-4000-8000-000000000000'");

    const noSecret = await post({ client_id: CLIENT_ID });
    expect(noSecret.status).toBe(401);
    expectAadError((await noSecret.json()) as AadError, 'invalid_client', 7000218);

    const noRefreshToken = await token({ grant_type: 'refresh_token' });
    expectAadError(noRefreshToken.body, 'invalid_request', 900144);
    expect(noRefreshToken.body.error_description).toContain("parameter: 'refresh_token'");
  });

  it('keeps no refresh token on a grant without offline_access', async () => {
    await signIn('User.Read');
    const grants = [...emu.control.oauth('microsoft').grants.values()];
    expect(grants).toHaveLength(1);
    expect(grants[0]?.refreshToken).toBeUndefined();
  });
});
