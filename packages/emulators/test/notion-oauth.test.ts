import { APIErrorCode, APIResponseError, Client, LogLevel, UnknownHTTPResponseError } from '@notionhq/client';
import { beforeEach, describe, expect, it } from 'vitest';
import { submitConsent } from '../src/index.js';
import { useEmulators } from './helpers/emulators.js';

/**
 * Notion's OAuth server: `owner=user`, HTTP Basic + JSON at the token endpoint, no `expires_in`,
 * rotating refresh tokens, revocation and introspection. The SDK's `oauth.*` calls drive it.
 */

const GRACE = '9ace0000-0000-4000-8000-000000000002';
const CLIENT_ID = 'notion-oauth-test-client';
const CLIENT_SECRET = 'notion-oauth-test-secret';
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

const emu = useEmulators({ modules: ['notion'] });

beforeEach(() => {
  emu.control.registerClient('notion', {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [REDIRECT_URI],
  });
});

function sdk(auth?: string): Client {
  return new Client({ auth, baseUrl: emu.urls.notion, logLevel: LogLevel.ERROR });
}

function authorizeUrl(extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    owner: 'user',
    state: 'st-1',
    ...extra,
  });
  return `${emu.urls.notion}/v1/oauth/authorize?${params}`;
}

async function authorize(userId = GRACE): Promise<string> {
  const location = new URL(await submitConsent(authorizeUrl(), { userId, decision: 'allow' }));
  expect(location.searchParams.get('state')).toBe('st-1');
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

function basic(id = CLIENT_ID, secret = CLIENT_SECRET): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

async function tokenRequest(body: Record<string, unknown>, authorization = basic()) {
  const res = await fetch(`${emu.urls.notion}/v1/oauth/token`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('authorization code flow', () => {
  it('exchanges a code with Basic auth + JSON and returns Notion’s token response', async () => {
    const code = await authorize();
    const token = await sdk().oauth.token({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
    });
    expect(token.access_token).toMatch(/^ntn_/);
    expect(token).toMatchObject({
      token_type: 'bearer',
      bot_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workspace_name: "Grace's Workspace",
      workspace_icon: null,
      workspace_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      owner: {
        type: 'user',
        user: {
          object: 'user',
          id: GRACE,
          name: 'Grace Hopper',
          avatar_url: null,
          type: 'person',
          person: { email: 'grace.hopper@example.com' },
        },
      },
      duplicated_template_id: null,
      request_id: expect.any(String),
    });
    expect((token as Record<string, unknown>).refresh_token).toEqual(expect.any(String));
    expect(token).not.toHaveProperty('expires_in');

    const me = await sdk(token.access_token).users.me({});
    expect(me.id).toBe(token.bot_id);
    const search = await sdk(token.access_token).search({ query: 'COBOL' });
    expect(search.results).toHaveLength(1);

    const reused = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(reused.status).toBe(400);
    expect(reused.body).toMatchObject({ error: 'invalid_grant', error_description: expect.any(String) });
  });

  it('refuses an authorize request without owner=user', async () => {
    const location = new URL(
      await submitConsent(authorizeUrl({ owner: 'workspace' }), { userId: GRACE, decision: 'allow' }),
    );
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('refuses a wrong client secret with 401 invalid_client', async () => {
    const code = await authorize();
    const error = await sdk()
      .oauth.token({
        client_id: CLIENT_ID,
        client_secret: 'wrong',
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    // OAuth errors are `{error, error_description}`, not API errors, so the SDK cannot type them.
    expect(error).toBeInstanceOf(UnknownHTTPResponseError);
    expect((error as UnknownHTTPResponseError).status).toBe(401);
    expect(JSON.parse((error as UnknownHTTPResponseError).body)).toMatchObject({ error: 'invalid_client' });
  });
});

describe('refresh tokens', () => {
  it('rotate on use: the old refresh token dies with invalid_grant', async () => {
    const code = await authorize();
    const first = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(first.status).toBe(200);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).toMatch(/^ntn_/);
    expect(refreshed.body.refresh_token).toEqual(expect.any(String));
    expect(refreshed.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(refreshed.body.bot_id).toBe(first.body.bot_id);
    expect(refreshed.body).not.toHaveProperty('expires_in');

    const replay = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
    });
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_grant', request_id: expect.any(String) });

    const me = await sdk(refreshed.body.access_token as string).users.me({});
    expect(me.type).toBe('bot');
  });

  it('report expires_in only when the instance gives access tokens a lifetime', async () => {
    emu.control.setAccessTokenTtl('notion', 3600);
    const code = await authorize();
    const token = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(token.body.expires_in).toBe(3600);
  });
});

describe('revocation and introspection', () => {
  it('revokes a token: the API refuses it afterwards and introspection reports it inactive', async () => {
    const code = await authorize();
    const token = await sdk().oauth.token({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
    });
    const active = await sdk().oauth.introspect({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      token: token.access_token,
    });
    expect(active.active).toBe(true);

    const revoked = await sdk().oauth.revoke({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      token: token.access_token,
    });
    expect(revoked).toEqual({ request_id: expect.any(String) });

    const error = await sdk(token.access_token)
      .users.me({})
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(APIResponseError);
    expect((error as APIResponseError).code).toBe(APIErrorCode.Unauthorized);

    const inactive = await sdk().oauth.introspect({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      token: token.access_token,
    });
    expect(inactive.active).toBe(false);

    const refresh = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: (token as Record<string, unknown>).refresh_token,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('requires client authentication to revoke', async () => {
    const res = await fetch(`${emu.urls.notion}/v1/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'ntn_x' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('checks the Basic client credentials on revoke and introspect: a wrong secret or unknown client is 401', async () => {
    const code = await authorize();
    const token = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    const accessToken = String(token.body.access_token);
    const post = (path: string, authorization: string) =>
      fetch(`${emu.urls.notion}/v1/oauth/${path}`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ token: accessToken }),
      });
    for (const path of ['introspect', 'revoke']) {
      for (const authorization of [
        basic(CLIENT_ID, 'wrong-secret'),
        basic('no-such-client', CLIENT_SECRET),
      ]) {
        const res = await post(path, authorization);
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: 'invalid_client', request_id: expect.any(String) });
      }
    }
    // The refused revocations revoked nothing.
    const introspect = await post('introspect', basic());
    expect(await introspect.json()).toMatchObject({ active: true });
    await expect(sdk(accessToken).users.me({})).resolves.toMatchObject({ type: 'bot' });
  });
});

describe('authorize without state', () => {
  it('is accepted, as at Notion: the redirect carries the code and no state', async () => {
    const url = new URL(authorizeUrl());
    url.searchParams.delete('state');
    const location = new URL(await submitConsent(url.toString(), { userId: GRACE, decision: 'allow' }));
    expect(location.searchParams.has('state')).toBe(false);
    const code = location.searchParams.get('code');
    expect(code).toMatch(/^ncd_/);
    const token = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(token.status).toBe(200);
    expect(token.body.access_token).toMatch(/^ntn_/);
  });
});
