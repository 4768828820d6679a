import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulators, startEmulators, submitConsent } from '../src/index.js';
import { authorizeUrl, CLIENT, type TestState, testModule, tokenRequest } from './core-fixtures.js';

const REDIRECT = CLIENT.redirectUris[0]!;

describe('test control (/_emulator and in process)', () => {
  let emu: RunningEmulators;
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${emu.url}/_emulator${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const me = async (token: string, key: 'notion' | 'google' = 'notion') => {
    const res = await fetch(`${emu.urls[key]}/v1/users/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    emu = await startEmulators({
      modules: [testModule(), testModule({ key: 'google', refreshTokens: 'static' })],
    });
  });
  beforeEach(async () => {
    expect((await control('POST', '/reset', { clients: true })).status).toBe(200);
  });
  afterAll(() => emu.close());

  it('registers clients over HTTP and validates the request', async () => {
    const created = await control('POST', '/clients', {
      emulator: 'notion',
      client_id: 'c-http',
      client_secret: 's-http',
      redirect_uris: [REDIRECT],
    });
    expect(created.status).toBe(201);
    expect(emu.control.clients('notion').map((c) => c.clientId)).toEqual(['c-http']);
    expect((await fetch(authorizeUrl(emu.urls.notion, { client_id: 'c-http' }))).status).toBe(200);

    expect((await control('POST', '/clients', { emulator: 'notion', client_id: 'x' })).status).toBe(400);
    expect(
      (
        await control('POST', '/clients', {
          emulator: 'hubspot',
          client_id: 'x',
          client_secret: 'y',
          redirect_uris: [],
        })
      ).status,
    ).toBe(400);
  });

  it('expires access tokens now, filtered by user and client', async () => {
    const ada = emu.control.issueToken('notion', { userId: 'user-ada' });
    const grace = emu.control.issueToken('notion', { userId: 'user-grace' });
    const res = await control('POST', '/tokens/expire', { emulator: 'notion', user_id: 'user-ada' });
    expect(res.body).toEqual({ expired: 1 });
    expect((await me(ada.access_token)).body.reason).toBe('expired');
    expect((await me(grace.access_token)).status).toBe(200);
    // The refresh token still works: an expiry is not a revocation.
    emu.control.registerClient('notion', {
      clientId: 'emulator-internal-client',
      clientSecret: 'k',
      redirectUris: [],
    });
    const refreshed = await fetch(`${emu.urls.notion}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'refresh_token',
        refresh_token: ada.refresh_token,
        client_id: 'emulator-internal-client',
        client_secret: 'k',
      }),
    });
    expect(refreshed.status).toBe(200);
  });

  it('revokes grants: access tokens refused, next refresh is invalid_grant', async () => {
    emu.control.registerClient('google', CLIENT);
    const location = new URL(await submitConsent(authorizeUrl(emu.urls.google, {}), { decision: 'allow' }));
    const tokens = await tokenRequest(emu.urls.google, {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT,
    });
    const other = emu.control.issueToken('google', { userId: 'user-ada', clientId: 'someone-else' });
    const res = await control('POST', '/grants/revoke', { emulator: 'google', client_id: CLIENT.clientId });
    expect(res.body).toEqual({ revoked: 1 });
    expect((await me(String(tokens.body.access_token), 'google')).body.reason).toBe('revoked');
    const refresh = await tokenRequest(emu.urls.google, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.body.refresh_token),
    });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await me(other.access_token, 'google')).status).toBe(200);
  });

  it('lets a provider route look up bare access and refresh tokens', async () => {
    const issued = emu.control.issueToken('notion', { userId: 'user-grace' });
    const info = async (token: string) => (await fetch(`${emu.urls.notion}/v1/tokeninfo/${token}`)).json();
    expect(await info(issued.access_token)).toEqual({ access: 'user-grace', refresh_grant_user: null });
    expect(await info(issued.refresh_token!)).toEqual({
      access: 'unknown',
      refresh_grant_user: 'user-grace',
    });
    const before = Date.now();
    emu.control.expireAccessTokens('notion', { userId: 'grace@example.com' });
    expect(await info(issued.access_token)).toEqual({
      access: 'expired',
      refresh_grant_user: null,
      expired_at: expect.any(Number),
    });
    const { expired_at } = (await info(issued.access_token)) as { expired_at: number };
    expect(expired_at).toBeGreaterThanOrEqual(before - 1);
    expect(expired_at).toBeLessThanOrEqual(Date.now());
    emu.control.revokeGrants('notion', { userId: 'grace@example.com' });
    expect(await info(issued.refresh_token!)).toEqual({ access: 'unknown', refresh_grant_user: null });
  });

  it("lets a provider route revoke all of a user's grants", async () => {
    const first = emu.control.issueToken('notion', { userId: 'user-ada' });
    const second = emu.control.issueToken('notion', { userId: 'user-ada', clientId: 'another-client' });
    const grace = emu.control.issueToken('notion', { userId: 'user-grace' });
    const res = await fetch(`${emu.urls.notion}/v1/revoke-user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: 'user-ada' }),
    });
    expect(await res.json()).toEqual({ revoked: 2 });
    expect((await me(first.access_token)).body.reason).toBe('revoked');
    expect((await me(second.access_token)).body.reason).toBe('revoked');
    expect((await me(grace.access_token)).status).toBe(200);
  });

  it('lets a provider route check client credentials', async () => {
    emu.control.registerClient('notion', CLIENT);
    const verify = async (clientId: string, clientSecret: string) =>
      (
        await fetch(`${emu.urls.notion}/v1/verify-client`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_id: clientId, client_secret: clientSecret }),
        })
      ).json();
    expect(await verify(CLIENT.clientId, CLIENT.clientSecret)).toEqual({
      ok: true,
      client_id: CLIENT.clientId,
    });
    expect(await verify(CLIENT.clientId, 'wrong')).toEqual({ ok: false, cause: 'wrong_secret' });
    expect(await verify('ghost', CLIENT.clientSecret)).toEqual({ ok: false, cause: 'unknown_client' });
  });

  it('lets a provider route revoke the grant behind a token', async () => {
    const issued = emu.control.issueToken('notion', { userId: 'user-ada' });
    const sibling = emu.control.issueToken('notion', { userId: 'user-ada' });
    const res = await fetch(`${emu.urls.notion}/v1/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: issued.refresh_token }),
    });
    expect(await res.json()).toEqual({ revoked: true });
    expect((await me(issued.access_token)).body.reason).toBe('revoked');
    expect((await me(sibling.access_token)).status).toBe(200);
  });

  describe('fault injection', () => {
    it('answers the next N matching requests with a canned 429, then normally', async () => {
      const token = emu.control.issueToken('notion', { userId: 'user-ada' }).access_token;
      const added = await control('POST', '/faults', {
        emulator: 'notion',
        method: 'GET',
        path: '^/notion/v1/users',
        status: 429,
        headers: { 'retry-after': '2' },
        body: { message: 'slow down' },
        times: 2,
      });
      expect(added.status).toBe(201);
      // Faults apply before authentication: even an anonymous call gets the 429.
      const anonymous = await fetch(`${emu.urls.notion}/v1/users/me`);
      expect(anonymous.status).toBe(429);
      const second = await fetch(`${emu.urls.notion}/v1/users/me`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBe('2');
      expect(await second.json()).toEqual({ message: 'slow down' });
      expect((await me(token)).status).toBe(200);
    });

    it('matches method and emulator', async () => {
      const token = emu.control.issueToken('notion', { userId: 'user-ada' }).access_token;
      emu.control.addFault({ emulator: 'google', path: '^/notion/', status: 500 });
      emu.control.addFault({ method: 'POST', path: '^/notion/v1/items', status: 503 });
      expect((await me(token)).status).toBe(200);
      const get = await fetch(`${emu.urls.notion}/v1/items`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(get.status).toBe(200);
      const post = await fetch(`${emu.urls.notion}/v1/items`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'x' }),
      });
      expect(post.status).toBe(503);
    });

    it('delays a request before handling it normally', async () => {
      const token = emu.control.issueToken('notion', { userId: 'user-ada' }).access_token;
      emu.control.addFault({ path: '^/notion/v1/users/me$', latencyMs: 300 });
      const started = performance.now();
      const res = await me(token);
      expect(performance.now() - started).toBeGreaterThanOrEqual(280);
      expect(res.status).toBe(200);
      const again = performance.now();
      await me(token);
      expect(performance.now() - again).toBeLessThan(250);
    });

    it('drops the connection: the client sees a socket error', async () => {
      emu.control.addFault({ path: '^/notion/v1/users/me$', drop: true });
      await expect(fetch(`${emu.urls.notion}/v1/users/me`)).rejects.toThrow();
      expect((await fetch(`${emu.urls.notion}/v1/users/me`)).status).toBe(401);
    });

    it('can be cleared, and rejects a fault that does nothing or has a bad pattern', async () => {
      emu.control.addFault({ path: '^/notion/', status: 500, times: 5 });
      expect((await control('DELETE', '/faults')).status).toBe(200);
      expect((await fetch(`${emu.urls.notion}/v1/users/me`)).status).toBe(401);
      expect((await control('POST', '/faults', { path: '^/notion/' })).status).toBe(400);
      expect((await control('POST', '/faults', { path: '(', status: 500 })).status).toBe(400);
      expect((await control('POST', '/faults', { path: '^/', status: 500, times: 0 })).status).toBe(400);
    });
  });

  it('counts requests by route pattern and token grants by client', async () => {
    emu.control.registerClient('notion', CLIENT);
    const token = emu.control.issueToken('notion', { userId: 'user-ada' }).access_token;
    emu.control.addFault({ path: '^/notion/v1/items', status: 429 });
    await fetch(`${emu.urls.notion}/v1/items`);
    await fetch(`${emu.urls.notion}/v1/items`, { headers: { authorization: `Bearer ${token}` } });
    await me(token);
    await fetch(`${emu.urls.notion}/v1/does-not-exist`);
    const location = new URL(await submitConsent(authorizeUrl(emu.urls.notion, {}), { decision: 'allow' }));
    const tokens = await tokenRequest(emu.urls.notion, {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT,
    });
    await tokenRequest(emu.urls.notion, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.body.refresh_token),
    });
    await tokenRequest(emu.urls.notion, { grant_type: 'refresh_token', refresh_token: 'rt_bad' });

    const counters = (await control('GET', '/counters')).body;
    expect(counters.requests).toMatchObject({
      'GET /notion/v1/items': 2,
      'GET /notion/v1/users/me': 1,
      'GET /notion/oauth/authorize': 1,
      'POST /notion/oauth/authorize': 1,
      'POST /notion/oauth/token': 3,
    });
    expect(counters.faulted).toEqual({ 'GET /notion/v1/items': 1 });
    expect(counters.token_grants).toEqual({
      notion: {
        authorization_code: 1,
        refresh_token: 1,
        by_client: { [CLIENT.clientId]: { authorization_code: 1, refresh_token: 1 } },
      },
    });
    expect((await control('POST', '/counters/reset')).status).toBe(200);
    expect(emu.control.counters()).toEqual({ requests: {}, faulted: {}, token_grants: {} });
  });

  it('reset re-seeds state and clears tokens, faults and counters; clients survive unless asked', async () => {
    emu.control.registerClient('notion', CLIENT);
    const token = emu.control.issueToken('notion', { userId: 'user-ada' }).access_token;
    await fetch(`${emu.urls.notion}/v1/items`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'added' }),
    });
    expect(emu.control.state<TestState>('notion').items).toEqual(['seeded', 'added']);
    emu.control.addFault({ path: '^/notion/', status: 500, times: 10 });

    expect((await control('POST', '/reset')).status).toBe(200);
    expect(emu.control.state<TestState>('notion').items).toEqual(['seeded']);
    expect(emu.control.counters().requests).toEqual({});
    // Unknown (not 500): the token store and the faults were both cleared.
    expect((await me(token)).body.reason).toBe('unknown');
    expect(emu.control.clients('notion').map((c) => c.clientId)).toContain(CLIENT.clientId);

    await control('POST', '/reset', { clients: true });
    expect(emu.control.clients('notion')).toEqual([]);
  });

  it('issues tokens over HTTP and lists the emulators and users', async () => {
    const issued = await control('POST', '/tokens', {
      emulator: 'google',
      user_id: 'user-grace',
      scopes: ['x'],
    });
    expect(issued.status).toBe(200);
    expect((await me(String(issued.body.access_token), 'google')).body).toMatchObject({
      id: 'user-grace',
      scopes: ['x'],
    });
    expect((await control('POST', '/tokens', { emulator: 'google', user_id: 'nobody' })).status).toBe(400);
    const index = await control('GET', '/');
    expect(index.body.emulators).toEqual([
      expect.objectContaining({
        key: 'notion',
        base_path: '/notion',
        authorize_path: '/notion/oauth/authorize',
        token_path: '/notion/oauth/token',
        users: expect.arrayContaining([expect.objectContaining({ id: 'user-ada' })]),
      }),
      expect.objectContaining({ key: 'google' }),
    ]);
  });

  it("answers unknown routes inside a prefix with the module's not-found shape", async () => {
    const res = await fetch(`${emu.urls.google}/v9/nothing`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ object: 'error', code: 'object_not_found' });
  });
});
