import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulators, startEmulators, submitConsent } from '../src/index.js';
import { authorizeUrl, basic, CLIENT, pkcePair, testModule, tokenRequest } from './core-fixtures.js';

const REDIRECT = CLIENT.redirectUris[0]!;

describe('OAuth token endpoint', () => {
  let emu: RunningEmulators;
  beforeAll(async () => {
    emu = await startEmulators({
      modules: [
        testModule({
          key: 'notion',
          refreshTokens: 'rotate',
          clientAuth: ['client_secret_basic'],
          tokenBodyFormats: ['json'],
        }),
        testModule({
          key: 'google',
          refreshTokens: 'static',
          clientAuth: ['client_secret_post'],
          tokenBodyFormats: ['form'],
        }),
        testModule({ key: 'hubspot', refreshTokens: 'none' }),
        // Google's rule: a refresh token for access_type=offline, a second one only with prompt=consent.
        testModule({
          key: 'microsoft',
          refreshTokens: 'static',
          issueRefreshToken: ({ params, liveGrants }) =>
            params.access_type === 'offline' &&
            (!liveGrants.some((g) => g.refreshToken) || params.prompt === 'consent'),
        }),
      ],
    });
  });
  beforeEach(() => {
    emu.control.reset({ clients: true });
    for (const key of ['notion', 'google', 'hubspot', 'microsoft'] as const) {
      emu.control.registerClient(key, CLIENT);
    }
  });
  afterAll(() => emu.close());

  async function codeFor(
    base: string,
    params: Record<string, string> = {},
    userId = 'user-ada',
  ): Promise<string> {
    const location = new URL(await submitConsent(authorizeUrl(base, params), { decision: 'allow', userId }));
    return location.searchParams.get('code')!;
  }

  async function me(
    base: string,
    token: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${base}/v1/users/me`, { headers: { authorization: `Bearer ${String(token)}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  describe('authorization_code', () => {
    it('exchanges a code once; a reused code is invalid_grant', async () => {
      const base = emu.urls.google;
      const code = await codeFor(base, { scope: 'a b' }, 'user-grace');
      const first = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
      });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ token_type: 'Bearer', scope: 'a b', user_id: 'user-grace' });
      expect(first.body.access_token).toMatch(/^at_/);
      expect(first.body.refresh_token).toMatch(/^rt_/);
      expect(first.body.expires_in).toBeGreaterThan(3590);
      expect((await me(base, first.body.access_token)).body.id).toBe('user-grace');

      const again = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
      });
      expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    it('a reused code revokes the tokens already issued from it (RFC 6749 §4.1.2)', async () => {
      const base = emu.urls.google;
      const code = await codeFor(base);
      const exchange = () =>
        tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
      const first = await exchange();
      expect(first.status).toBe(200);
      const unrelated = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: await codeFor(base),
        redirect_uri: REDIRECT,
      });
      expect((await me(base, first.body.access_token)).status).toBe(200);

      expect(await exchange()).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant', cause: 'code_reused' },
      });
      expect((await me(base, first.body.access_token)).body.reason).toBe('revoked');
      const refresh = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: String(first.body.refresh_token),
      });
      expect(refresh).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant', cause: 'refresh_revoked' },
      });
      // Only the replayed code's grant dies.
      expect((await me(base, unrelated.body.access_token)).status).toBe(200);
    });

    it('gives the profile the authorize parameters to decide on a refresh token, and keeps them on the grant', async () => {
      const base = emu.urls.microsoft;
      const exchange = async (params: Record<string, string>) =>
        tokenRequest(base, {
          grant_type: 'authorization_code',
          code: await codeFor(base, params),
          redirect_uri: REDIRECT,
        });
      const online = await exchange({ scope: 'a' });
      expect(online.status).toBe(200);
      expect(online.body.refresh_token).toBeUndefined();
      expect(online.body.authorize_params).toMatchObject({
        scope: 'a',
        state: 'st-1',
        response_type: 'code',
      });
      expect(online.body.authorize_params).not.toHaveProperty('decision');
      expect(online.body.authorize_params).not.toHaveProperty('user_id');
      const grants = [...emu.control.oauth('microsoft').grants.values()];
      expect(grants[0]?.authorizeParams?.scope).toBe('a');
      expect(grants[0]?.refreshToken).toBeUndefined();

      const offline = await exchange({ scope: 'a', access_type: 'offline' });
      expect(offline.body.refresh_token).toMatch(/^rt_/);
      // The user already gave this client a refresh token: none again without prompt=consent.
      const again = await exchange({ scope: 'a', access_type: 'offline' });
      expect(again.status).toBe(200);
      expect(again.body.refresh_token).toBeUndefined();
      const consent = await exchange({ scope: 'a', access_type: 'offline', prompt: 'consent' });
      expect(consent.body.refresh_token).toMatch(/^rt_/);
      expect(consent.body.refresh_token).not.toBe(offline.body.refresh_token);
      // Control-API grants keep getting one.
      expect(emu.control.issueToken('microsoft', { userId: 'user-ada' }).refresh_token).toMatch(/^rt_/);
    });

    it('tells the profile exactly why a request failed', async () => {
      const google = emu.urls.google;
      const cause = async (
        params: Record<string, string>,
        opts: Parameters<typeof tokenRequest>[2] = {},
        base = google,
      ) => (await tokenRequest(base, params, opts)).body;

      const code = await codeFor(google);
      const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT };
      expect(await cause(exchange, { secret: 'wrong' })).toMatchObject({
        error: 'invalid_client',
        cause: 'wrong_secret',
        clientId: CLIENT.clientId,
        grantType: 'authorization_code',
      });
      const ghost = await fetch(`${google}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...exchange, client_id: 'ghost', client_secret: 'x' }).toString(),
      });
      expect(await ghost.json()).toMatchObject({
        error: 'invalid_client',
        cause: 'unknown_client',
        clientId: 'ghost',
      });
      const anonymous = await fetch(`${google}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(exchange).toString(),
      });
      expect(await anonymous.json()).toMatchObject({ error: 'invalid_client', cause: 'client_auth_missing' });
      expect(await cause(exchange, { auth: 'basic' })).toMatchObject({ cause: 'client_auth_method' });
      expect(await cause(exchange, { json: true })).toMatchObject({
        error: 'invalid_request',
        cause: 'unsupported_content_type',
      });
      expect(await cause({ grant_type: 'authorization_code', redirect_uri: REDIRECT })).toMatchObject({
        error: 'invalid_request',
        cause: 'missing_parameter',
        parameter: 'code',
      });
      expect(await cause({})).toMatchObject({ cause: 'missing_parameter', parameter: 'grant_type' });
      expect(await cause({ grant_type: 'password' })).toMatchObject({
        error: 'unsupported_grant_type',
        cause: 'unsupported_grant_type',
        grantType: 'password',
      });
      expect(await cause({ ...exchange, code: 'code_nope' })).toMatchObject({ cause: 'code_unknown' });
      expect(await cause({ ...exchange, redirect_uri: 'http://localhost:9999/other' })).toMatchObject({
        cause: 'redirect_mismatch',
      });

      const { verifier, challenge } = pkcePair();
      const pkceCode = async () =>
        codeFor(google, { code_challenge: challenge, code_challenge_method: 'S256' });
      expect(await cause({ ...exchange, code: await pkceCode() })).toMatchObject({ cause: 'pkce_missing' });
      expect(
        await cause({ ...exchange, code: await pkceCode(), code_verifier: pkcePair().verifier }),
      ).toMatchObject({ cause: 'pkce_mismatch' });
      const pkceOk = await tokenRequest(google, {
        ...exchange,
        code: await pkceCode(),
        code_verifier: verifier,
      });
      expect(pkceOk.status).toBe(200);

      emu.control.registerClient('google', {
        clientId: 'client-2',
        clientSecret: 'secret-2',
        redirectUris: [REDIRECT],
      });
      const foreign = async (params: Record<string, string>) =>
        (
          await fetch(`${google}/oauth/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              ...params,
              client_id: 'client-2',
              client_secret: 'secret-2',
            }).toString(),
          })
        ).json();
      expect(await foreign({ ...exchange, code: await codeFor(google) })).toMatchObject({
        cause: 'code_client_mismatch',
      });
      expect(
        await foreign({ grant_type: 'refresh_token', refresh_token: String(pkceOk.body.refresh_token) }),
      ).toMatchObject({ cause: 'refresh_client_mismatch' });

      expect(await cause({ grant_type: 'refresh_token', refresh_token: 'rt_nope' })).toMatchObject({
        error: 'invalid_grant',
        cause: 'refresh_unknown',
        grantType: 'refresh_token',
      });
      emu.control.revokeGrants('google', {});
      expect(
        await cause({ grant_type: 'refresh_token', refresh_token: String(pkceOk.body.refresh_token) }),
      ).toMatchObject({ error: 'invalid_grant', cause: 'refresh_revoked' });

      // 'rotate' (notion): the replaced refresh token is told apart from an unknown one.
      const notion = emu.urls.notion;
      const issued = await cause(
        { grant_type: 'authorization_code', code: await codeFor(notion), redirect_uri: REDIRECT },
        { auth: 'basic', json: true },
        notion,
      );
      const old = String(issued.refresh_token);
      await cause({ grant_type: 'refresh_token', refresh_token: old }, { auth: 'basic', json: true }, notion);
      expect(
        await cause(
          { grant_type: 'refresh_token', refresh_token: old },
          { auth: 'basic', json: true },
          notion,
        ),
      ).toMatchObject({ error: 'invalid_grant', cause: 'refresh_rotated' });
      expect(
        await cause(
          { grant_type: 'refresh_token', refresh_token: 'x' },
          { auth: 'basic', json: true },
          emu.urls.hubspot,
        ),
      ).toMatchObject({ error: 'unsupported_grant_type', cause: 'refresh_unsupported' });
    });

    it('rejects an unknown code, a different redirect_uri and a code of another client', async () => {
      const base = emu.urls.google;
      const unknown = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: 'nope',
        redirect_uri: REDIRECT,
      });
      expect(unknown.body.error).toBe('invalid_grant');

      const code = await codeFor(base);
      const otherRedirect = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://localhost:9999/other',
      });
      expect(otherRedirect.body.error).toBe('invalid_grant');

      emu.control.registerClient('google', {
        clientId: 'client-2',
        clientSecret: 'secret-2',
        redirectUris: [REDIRECT],
      });
      const code2 = await codeFor(base);
      const res = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: code2,
          redirect_uri: REDIRECT,
          client_id: 'client-2',
          client_secret: 'secret-2',
        }).toString(),
      });
      expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    });

    it('rejects an expired code (10 minutes)', async () => {
      let now = Date.now();
      const timed = await startEmulators({ modules: [testModule()], clock: () => now });
      try {
        timed.control.registerClient('notion', CLIENT);
        const code = await codeFor(timed.urls.notion);
        now += 10 * 60 * 1000 + 1;
        const res = await tokenRequest(timed.urls.notion, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
        });
        expect(res.body).toMatchObject({ error: 'invalid_grant', cause: 'code_expired' });
      } finally {
        await timed.close();
      }
    });

    it('checks the PKCE S256 verifier', async () => {
      const base = emu.urls.google;
      const { verifier, challenge } = pkcePair();
      const params = { code_challenge: challenge, code_challenge_method: 'S256' };

      const missing = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: await codeFor(base, params),
        redirect_uri: REDIRECT,
      });
      expect(missing.body.error).toBe('invalid_grant');

      const wrong = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: await codeFor(base, params),
        redirect_uri: REDIRECT,
        code_verifier: pkcePair().verifier,
      });
      expect(wrong.body.error).toBe('invalid_grant');

      const right = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: await codeFor(base, params),
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      expect(right.status).toBe(200);
      expect(right.body.access_token).toBeTruthy();
    });

    it('accepts plain PKCE', async () => {
      const base = emu.urls.google;
      const { verifier } = pkcePair();
      const code = await codeFor(base, { code_challenge: verifier, code_challenge_method: 'plain' });
      const res = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      expect(res.status).toBe(200);
    });
  });

  describe('client authentication and body formats', () => {
    it('takes HTTP Basic with a JSON body where the profile says so, and refuses body credentials', async () => {
      const base = emu.urls.notion;
      const ok = await tokenRequest(
        base,
        { grant_type: 'authorization_code', code: await codeFor(base), redirect_uri: REDIRECT },
        { auth: 'basic', json: true },
      );
      expect(ok.status).toBe(200);

      const inBody = await tokenRequest(
        base,
        { grant_type: 'authorization_code', code: await codeFor(base), redirect_uri: REDIRECT },
        { auth: 'body', json: true },
      );
      expect(inBody).toMatchObject({ status: 401, body: { error: 'invalid_client' } });

      const form = await tokenRequest(
        base,
        { grant_type: 'authorization_code', code: await codeFor(base), redirect_uri: REDIRECT },
        { auth: 'basic' },
      );
      expect(form).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    });

    it('takes body credentials in a form where the profile says so, and refuses Basic', async () => {
      const base = emu.urls.google;
      const basicAuth = await tokenRequest(
        base,
        { grant_type: 'authorization_code', code: await codeFor(base), redirect_uri: REDIRECT },
        { auth: 'basic' },
      );
      expect(basicAuth).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    });

    it('answers invalid_client (401) for a wrong secret, an unknown client or no credentials', async () => {
      const base = emu.urls.hubspot;
      const params = { grant_type: 'authorization_code', code: await codeFor(base), redirect_uri: REDIRECT };
      expect(await tokenRequest(base, params, { auth: 'basic', secret: 'wrong' })).toMatchObject({
        status: 401,
        body: { error: 'invalid_client' },
      });
      expect(await tokenRequest(base, params, { auth: 'body', secret: 'wrong' })).toMatchObject({
        status: 401,
        body: { error: 'invalid_client' },
      });
      const none = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(params).toString(),
      });
      expect(none.status).toBe(401);
      const unknown = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('ghost', 'x') },
        body: new URLSearchParams(params).toString(),
      });
      expect(unknown.status).toBe(401);
      // The code was not consumed by the failed attempts.
      expect((await tokenRequest(base, params)).status).toBe(200);
    });

    it("answers a body that does not parse in the provider's error shape", async () => {
      const res = await fetch(`${emu.urls.notion}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: basic(CLIENT.clientId, CLIENT.clientSecret),
        },
        body: '{"grant_type":',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_request', cause: 'malformed_body' });
    });

    it('answers unsupported_grant_type for other grants', async () => {
      const res = await tokenRequest(emu.urls.google, { grant_type: 'client_credentials' });
      expect(res).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
      const none = await tokenRequest(emu.urls.google, {});
      expect(none.body.error).toBe('invalid_request');
    });
  });

  describe('refresh_token', () => {
    it("'static': same refresh token keeps working, no new one is returned", async () => {
      const base = emu.urls.google;
      const first = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: await codeFor(base),
        redirect_uri: REDIRECT,
      });
      const refresh = String(first.body.refresh_token);
      const r1 = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: refresh });
      expect(r1.status).toBe(200);
      expect(r1.body.refresh_token).toBeUndefined();
      expect(r1.body.access_token).not.toBe(first.body.access_token);
      const r2 = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: refresh });
      expect(r2.status).toBe(200);
      expect((await me(base, r2.body.access_token)).status).toBe(200);
      // Earlier access tokens stay valid until they expire.
      expect((await me(base, first.body.access_token)).status).toBe(200);
    });

    it("'rotate': each refresh returns a new refresh token and the old one dies at once", async () => {
      const base = emu.urls.notion;
      const first = await tokenRequest(
        base,
        { grant_type: 'authorization_code', code: await codeFor(base), redirect_uri: REDIRECT },
        { auth: 'basic', json: true },
      );
      const old = String(first.body.refresh_token);
      const rotated = await tokenRequest(
        base,
        { grant_type: 'refresh_token', refresh_token: old },
        { auth: 'basic', json: true },
      );
      expect(rotated.status).toBe(200);
      expect(rotated.body.refresh_token).toMatch(/^rt_/);
      expect(rotated.body.refresh_token).not.toBe(old);

      const reuse = await tokenRequest(
        base,
        { grant_type: 'refresh_token', refresh_token: old },
        { auth: 'basic', json: true },
      );
      expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

      const next = await tokenRequest(
        base,
        { grant_type: 'refresh_token', refresh_token: String(rotated.body.refresh_token) },
        { auth: 'basic', json: true },
      );
      expect(next.status).toBe(200);
    });

    it("'none': no refresh token is issued", async () => {
      const base = emu.urls.hubspot;
      const first = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: await codeFor(base),
        redirect_uri: REDIRECT,
      });
      expect(first.status).toBe(200);
      expect(first.body.refresh_token).toBeUndefined();
    });

    it('rejects an unknown refresh token and one of another client', async () => {
      const base = emu.urls.google;
      expect(
        (await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: 'rt_nope' })).body.error,
      ).toBe('invalid_grant');
      const first = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: await codeFor(base),
        redirect_uri: REDIRECT,
      });
      emu.control.registerClient('google', {
        clientId: 'client-2',
        clientSecret: 'secret-2',
        redirectUris: [REDIRECT],
      });
      const res = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: String(first.body.refresh_token),
          client_id: 'client-2',
          client_secret: 'secret-2',
        }).toString(),
      });
      expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    });
  });

  describe('access token lifetime', () => {
    it('expires access tokens after the TTL, which is configurable per instance and at run time', async () => {
      let now = Date.now();
      const timed = await startEmulators({
        modules: [testModule()],
        clock: () => now,
        tokenTtlSeconds: { notion: 60 },
      });
      try {
        const issued = timed.control.issueToken('notion', { userId: 'user-ada' });
        expect(issued.expires_in).toBe(60);
        expect((await me(timed.urls.notion, issued.access_token)).status).toBe(200);
        now += 61_000;
        expect((await me(timed.urls.notion, issued.access_token)).body.reason).toBe('expired');

        const config = await fetch(`${timed.url}/_emulator/config`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ emulator: 'notion', access_token_ttl_seconds: null }),
        });
        expect(config.status).toBe(200);
        const forever = timed.control.issueToken('notion', { userId: 'user-ada' });
        expect(forever.expires_in).toBeUndefined();
        now += 365 * 24 * 3600 * 1000;
        expect((await me(timed.urls.notion, forever.access_token)).status).toBe(200);
      } finally {
        await timed.close();
      }
    });
  });

  describe('bearer authentication', () => {
    it('tells missing, malformed, unknown, expired and revoked tokens apart', async () => {
      const base = emu.urls.google;
      const noHeader = await fetch(`${base}/v1/users/me`);
      expect(((await noHeader.json()) as { reason: string }).reason).toBe('missing');
      const basicHeader = await fetch(`${base}/v1/users/me`, { headers: { authorization: 'Basic abc' } });
      expect(((await basicHeader.json()) as { reason: string }).reason).toBe('malformed');
      expect((await me(base, 'at_unknown')).body.reason).toBe('unknown');

      const a = emu.control.issueToken('google', { userId: 'user-ada' });
      emu.control.expireAccessTokens('google');
      expect((await me(base, a.access_token)).body.reason).toBe('expired');

      const b = emu.control.issueToken('google', { userId: 'user-ada' });
      emu.control.revokeGrants('google');
      expect((await me(base, b.access_token)).body.reason).toBe('revoked');
    });
  });
});
