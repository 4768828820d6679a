import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulators, startEmulators, submitConsent } from '../src/index.js';

const REDIRECT = 'http://localhost:9999/callback';

/** Slack-like: the user token nested under authed_user, comma-separated user_scope, no rotation. */
const SLACKY = {
  key: 'slacky',
  display_name: 'Slacky',
  auth: {
    kind: 'oauth2',
    authorization_url: 'https://slack.com/oauth/v2/authorize',
    token_url: 'https://slack.com/api/oauth.v2.access',
    scope_separator: ',',
    scope_parameter: 'user_scope',
    client_auth: 'client_secret_post',
    token_body: 'form',
    token_response: {
      access_token: 'authed_user.access_token',
      refresh_token: 'authed_user.refresh_token',
      expires_in: 'authed_user.expires_in',
      scope: 'authed_user.scope',
      token_type: null,
    },
    refresh: { rotates: false },
    revocation: { url: 'https://slack.com/api/auth.revoke', style: 'form', token: 'access' },
  },
  api: { base_url: 'https://slack.com/api' },
  user_info: {
    url: 'https://slack.com/api/auth.test',
    method: 'POST',
    id: 'user_id',
    label: 'user',
    ok: { path: 'ok', equals: [true] },
  },
};

/** Notion-like: Basic client auth, JSON body, rotating refresh tokens, PKCE; a tenant in its paths. */
const NOTIONY = {
  key: 'notiony',
  display_name: 'Notiony',
  auth: {
    kind: 'oauth2',
    authorization_url: 'https://login.notiony.example/{tenant}/oauth2/authorize',
    token_url: 'https://login.notiony.example/{tenant}/oauth2/token',
    pkce: true,
    client_auth: 'client_secret_basic',
    token_body: 'json',
    refresh: { rotates: true },
    revocation: { url: 'https://api.notiony.example/v1/oauth/revoke', style: 'basic_json' },
    sandbox_token_ttl_seconds: 120,
  },
  api: { base_url: 'https://api.notiony.example', default_headers: { 'notiony-version': '2024-01-01' } },
  parameters: [
    { name: 'tenant', source: 'connection', default: 'common' },
    { name: 'instance_url', source: 'token', path: 'instance_url' },
  ],
  user_info: {
    url: 'https://api.notiony.example/v1/users/me',
    id: 'bot.owner.user.id',
    label: 'bot.owner.user.person.email',
  },
};

/** An API key in its own header, whose pattern forbids the sandbox_ prefix. */
const KEYED = {
  key: 'keyed',
  display_name: 'Keyed',
  auth: { kind: 'api_key', pattern: '^sk_test_[A-Za-z0-9]+$' },
  api: { base_url: 'https://api.keyed.example', credential: { in: 'header', name: 'X-Api-Key' } },
  user_info: { url: 'https://api.keyed.example/v2/me', id: 'data[*].id', label: 'data[*].email' },
};

const BASICS = {
  key: 'basics',
  display_name: 'Basics',
  auth: { kind: 'basic' },
  api: { base_url: 'https://{subdomain}.basics.example/api' },
};

/** HubSpot-like: its own error field, DELETE revocation of the refresh token, tokens that never expire, a query credential. */
const HUBBY = {
  key: 'hubby',
  display_name: 'Hubby',
  auth: {
    kind: 'oauth2',
    authorization_url: 'https://app.hubby.example/oauth/authorize',
    token_url: 'https://api.hubby.example/oauth/v1/token',
    token_errors: {
      field: 'status',
      kinds: {
        BAD_REFRESH_TOKEN: 'invalid_grant',
        BAD_AUTH_CODE: 'invalid_grant',
        BAD_CLIENT_ID: 'invalid_client',
        BAD_CLIENT_SECRET: 'invalid_client',
      },
    },
    revocation: {
      url: 'https://api.hubby.example/oauth/v1/refresh-tokens/{token}',
      style: 'delete',
      token: 'refresh',
    },
    sandbox_token_ttl_seconds: null,
  },
  api: { base_url: 'https://api.hubby.example', credential: { in: 'query', name: 'access_token' } },
};

/** GitHub-like: revoked by DELETE with client Basic auth and the token in a JSON body. */
const HUBGIT = {
  key: 'hubgit',
  display_name: 'HubGit',
  auth: {
    kind: 'oauth2',
    authorization_url: 'https://hubgit.example/login/oauth/authorize',
    token_url: 'https://hubgit.example/login/oauth/access_token',
    revocation: { url: 'https://api.hubgit.example/applications/{client_id}/grant', style: 'basic_delete' },
  },
  api: { base_url: 'https://api.hubgit.example' },
};

/** Stripe-like: the API key as the Basic user name. */
const STRIPY = {
  key: 'stripy',
  display_name: 'Stripy',
  auth: { kind: 'api_key' },
  api: {
    base_url: 'https://api.stripy.example',
    credential: { in: 'header', name: 'Authorization', value: 'Basic {basic}' },
  },
};

const CLIENTS = {
  slacky: {
    clientId: 'slacky-client',
    clientSecret: 'slacky-secret',
    redirectUris: [REDIRECT],
    provider: 'slacky',
  },
  notiony: {
    clientId: 'notiony-client',
    clientSecret: 'notiony-secret',
    redirectUris: [REDIRECT],
    provider: 'notiony',
  },
};

// biome-ignore lint/suspicious/noExplicitAny: bodies are asserted as loose JSON
type Json = Record<string, any>;

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe('definitions emulator', () => {
  let emu: RunningEmulators;
  const base = (key: string) => `${emu.urls.definitions}/${key}`;

  async function send(
    url: string,
    init: RequestInit = {},
  ): Promise<{ status: number; headers: Headers; body: Json }> {
    const res = await fetch(url, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : {} };
  }

  const control = (method: string, path: string, body?: unknown) =>
    send(`${emu.url}/_emulator${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  function authorizeUrl(url: string, client: { clientId: string }, params: Record<string, string>): string {
    const target = new URL(url);
    const all = {
      client_id: client.clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      state: 'st-1',
      ...params,
    };
    for (const [name, value] of Object.entries(all)) target.searchParams.set(name, value);
    return target.toString();
  }

  async function consent(url: string): Promise<URL> {
    return new URL(await submitConsent(url, { decision: 'allow' }));
  }

  const form = (fields: Record<string, string>, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });

  const json = (value: unknown, headers: Record<string, string> = {}, method = 'POST'): RequestInit => ({
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(value),
  });

  beforeAll(async () => {
    emu = await startEmulators({ modules: ['definitions'] });
  });
  beforeEach(async () => {
    emu.control.reset({ clients: true });
    for (const definition of [SLACKY, NOTIONY, KEYED, BASICS]) emu.control.registerDefinition(definition);
    // The control API's HTTP route registers the same way.
    expect((await control('POST', '/definitions', HUBBY)).status).toBe(204);
    emu.control.registerClient('definitions', CLIENTS.slacky);
    emu.control.registerClient('definitions', CLIENTS.notiony);
  });
  afterAll(() => emu.close());

  describe('control API', () => {
    it('lists definitions, refuses unplayable ones and clients without a provider', async () => {
      expect(emu.control.definitions()).toEqual(['basics', 'hubby', 'keyed', 'notiony', 'slacky']);
      expect((await control('GET', '/definitions')).body).toEqual({ keys: emu.control.definitions() });
      const bad = await control('POST', '/definitions', { key: 'x', auth: { kind: 'oauth2' } });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(/key/);
      const noToken = await control('POST', '/definitions', {
        key: 'nope',
        auth: { kind: 'oauth2' },
        api: {},
      });
      expect(noToken.status).toBe(400);
      expect(() =>
        emu.control.registerClient('definitions', { clientId: 'c', clientSecret: 's', redirectUris: [] }),
      ).toThrow(/provider/);
      // The latest definition for a key wins.
      emu.control.registerDefinition({ ...KEYED, display_name: 'Keyed again' });
      expect(emu.control.definitions()).toHaveLength(5);
    });

    it('registers clients over HTTP with their provider and lists them', async () => {
      const created = await control('POST', '/clients', {
        emulator: 'definitions',
        provider: 'hubby',
        client_id: 'hubby-client',
        client_secret: 'hubby-secret',
        redirect_uris: [REDIRECT],
      });
      expect(created.status).toBe(201);
      const listed = (await control('GET', '/clients')).body.definitions as Json[];
      expect(listed).toContainEqual({
        client_id: 'hubby-client',
        redirect_uris: [REDIRECT],
        provider: 'hubby',
      });
      expect(
        emu.control
          .clients('definitions')
          .map((c) => c.clientId)
          .sort(),
      ).toEqual(['hubby-client', 'notiony-client', 'slacky-client']);
    });

    it('answers 404 for a path that names no definition', async () => {
      const res = await send(`${base('unknown')}/anything`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });
  });

  describe('a Slack-like definition', () => {
    const authorize = () =>
      authorizeUrl(`${base('slacky')}/oauth/v2/authorize`, CLIENTS.slacky, {
        user_scope: 'channels:read,chat:write',
      });
    const tokenUrl = () => `${base('slacky')}/api/oauth.v2.access`;
    const credentials = { client_id: CLIENTS.slacky.clientId, client_secret: CLIENTS.slacky.clientSecret };

    async function exchange(): Promise<Json> {
      const location = await consent(authorize());
      expect(location.searchParams.get('state')).toBe('st-1');
      const code = location.searchParams.get('code')!;
      const res = await send(
        tokenUrl(),
        form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...credentials }),
      );
      expect(res.status).toBe(200);
      return res.body;
    }

    it('shows the consent page with the user_scope scopes', async () => {
      const page = await fetch(authorize());
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('Slacky');
      expect(html).toContain('<code>channels:read</code>');
      expect(html).toContain('<code>chat:write</code>');
    });

    it('issues the user token nested under authed_user', async () => {
      const body = await exchange();
      expect(body.token_type).toBeUndefined();
      expect(body.access_token).toBeUndefined();
      expect(body.authed_user).toMatchObject({
        token_type: 'user',
        scope: 'channels:read,chat:write',
        access_token: expect.stringMatching(/^emu_at_/),
        refresh_token: expect.stringMatching(/^emu_rt_/),
      });
      expect(body.authed_user.expires_in).toBeGreaterThan(3590);
    });

    it('refuses client authentication other than the declared one', async () => {
      const location = await consent(authorize());
      const code = location.searchParams.get('code')!;
      const res = await send(
        tokenUrl(),
        form(
          { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
          { authorization: basic(CLIENTS.slacky.clientId, CLIENTS.slacky.clientSecret) },
        ),
      );
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'invalid_client' });
      const asJson = await send(
        tokenUrl(),
        json({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...credentials }),
      );
      expect(asJson.status).toBe(400);
      expect(asJson.body.error).toBe('invalid_request');
    });

    it('echoes API calls, answers user_info, expires, refreshes without rotation, revokes', async () => {
      const tokens = (await exchange()).authed_user as Json;
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      const echo = await send(
        `${base('slacky')}/api/chat.postMessage?pretty=1`,
        json({ channel: 'C1', text: 'hi' }, bearer(tokens.access_token)),
      );
      expect(echo.status).toBe(200);
      expect(echo.body).toMatchObject({
        ok: true,
        provider: 'slacky',
        method: 'POST',
        path: '/api/chat.postMessage',
        query: { pretty: '1' },
        body: { channel: 'C1', text: 'hi' },
        user: { id: '41000001', email: 'ada.lovelace@example.com' },
      });
      expect(echo.body.headers['content-type']).toBe('application/json');
      expect(echo.body.headers.authorization).toBeUndefined();

      const me = await send(`${base('slacky')}/api/auth.test`, {
        method: 'POST',
        headers: bearer(tokens.access_token),
      });
      expect(me.body).toEqual({ ok: true, user_id: '41000001', user: 'ada.lovelace@example.com' });

      expect(emu.control.expireAccessTokens('definitions', { clientId: CLIENTS.slacky.clientId })).toBe(1);
      const expired = await send(`${base('slacky')}/api/auth.test`, {
        method: 'POST',
        headers: bearer(tokens.access_token),
      });
      expect(expired.status).toBe(401);
      expect(expired.body.error.code).toBe('unauthorized');
      expect(expired.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);

      const refresh = () =>
        send(
          tokenUrl(),
          form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...credentials }),
        );
      const refreshed = await refresh();
      expect(refreshed.status).toBe(200);
      // Not rotating: no new refresh token, and the old one keeps working.
      expect(refreshed.body.authed_user.refresh_token).toBeUndefined();
      const access = refreshed.body.authed_user.access_token as string;
      expect((await refresh()).status).toBe(200);
      expect((await send(`${base('slacky')}/api/x`, { headers: bearer(access) })).status).toBe(200);

      const revoked = await send(`${base('slacky')}/api/auth.revoke`, form({ token: access }));
      expect(revoked.status).toBe(200);
      expect((await send(`${base('slacky')}/api/x`, { headers: bearer(access) })).status).toBe(401);
      const dead = await refresh();
      expect(dead.status).toBe(400);
      expect(dead.body.error).toBe('invalid_grant');
    });

    it('echoes bodies of any type and method', async () => {
      const { access_token } = emu.control.issueToken('definitions', {
        userId: '41000002',
        clientId: 'slacky-client',
      });
      const auth = { authorization: `Bearer ${access_token}` };
      const text = await send(`${base('slacky')}/files/1`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'text/csv' },
        body: 'a,b\n1,2',
      });
      expect(text.body).toMatchObject({
        method: 'PUT',
        path: '/files/1',
        body: 'a,b\n1,2',
        user: { id: '41000002' },
      });
      const broken = await send(`${base('slacky')}/x`, {
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{not json',
      });
      expect(broken.body.body).toBe('{not json');
      const deleted = await send(`${base('slacky')}/x/y`, { method: 'DELETE', headers: auth });
      expect(deleted.body).toMatchObject({ method: 'DELETE', body: null });
    });
  });

  describe('a Notion-like definition (Basic, JSON, PKCE, rotation)', () => {
    const authorizeBase = () => `${base('notiony')}/contoso/oauth2/authorize`;
    const tokenUrl = () => `${base('notiony')}/common/oauth2/token`;
    const clientBasic = () => basic(CLIENTS.notiony.clientId, CLIENTS.notiony.clientSecret);

    async function codeWithPkce(): Promise<{ code: string; verifier: string }> {
      const { verifier, challenge } = pkcePair();
      const url = authorizeUrl(authorizeBase(), CLIENTS.notiony, {
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      return { code: (await consent(url)).searchParams.get('code')!, verifier };
    }

    it('requires an S256 code challenge', async () => {
      const none = await consent(authorizeUrl(authorizeBase(), CLIENTS.notiony, {}));
      expect(none.searchParams.get('error')).toBe('invalid_request');
      const plain = await consent(
        authorizeUrl(authorizeBase(), CLIENTS.notiony, {
          code_challenge: 'a'.repeat(43),
          code_challenge_method: 'plain',
        }),
      );
      expect(plain.searchParams.get('error')).toBe('invalid_request');
    });

    it("refuses another definition's client", async () => {
      const page = await fetch(authorizeUrl(authorizeBase(), CLIENTS.slacky, {}));
      expect(page.status).toBe(400);
      expect(await page.text()).toContain('invalid_client');
    });

    it('exchanges, rotates refresh tokens and revokes with basic_json', async () => {
      const { code, verifier } = await codeWithPkce();
      const exchange = (fields: Json, headers: Record<string, string> = { authorization: clientBasic() }) =>
        send(tokenUrl(), json(fields, headers));
      const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT };
      // Credentials in the body are not how this definition authenticates its client.
      const inBody = await exchange(
        {
          ...params,
          code_verifier: verifier,
          client_id: CLIENTS.notiony.clientId,
          client_secret: 'notiony-secret',
        },
        {},
      );
      expect(inBody.status).toBe(401);
      expect(inBody.body.error).toBe('invalid_client');
      const asForm = await send(
        tokenUrl(),
        form({ ...params, code_verifier: verifier }, { authorization: clientBasic() }),
      );
      expect(asForm.status).toBe(400);
      expect((await exchange(params)).body.error).toBe('invalid_grant');

      const tokens = await exchange({ ...params, code_verifier: verifier });
      expect(tokens.status).toBe(200);
      expect(tokens.body).toMatchObject({
        token_type: 'bearer',
        expires_in: 120,
        instance_url: 'https://notiony-instance.emulator.invalid',
      });

      const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
      const me = await send(`${base('notiony')}/v1/users/me`, bearer(tokens.body.access_token));
      expect(me.body).toEqual({
        bot: { owner: { user: { id: '41000001', person: { email: 'ada.lovelace@example.com' } } } },
      });
      // A token of another definition is no token here.
      const slacky = emu.control.issueToken('definitions', { userId: '41000001', provider: 'slacky' });
      expect((await send(`${base('notiony')}/v1/users/me`, bearer(slacky.access_token))).status).toBe(401);

      const first = await exchange({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token });
      expect(first.status).toBe(200);
      expect(first.body.refresh_token).toMatch(/^emu_rt_/);
      expect(first.body.refresh_token).not.toBe(tokens.body.refresh_token);
      const reused = await exchange({
        grant_type: 'refresh_token',
        refresh_token: tokens.body.refresh_token,
      });
      expect(reused.status).toBe(400);
      expect(reused.body.error).toBe('invalid_grant');

      const revokeUrl = `${base('notiony')}/v1/oauth/revoke`;
      const token = { token: first.body.access_token };
      expect(
        (await send(revokeUrl, json(token, { authorization: basic('notiony-client', 'wrong') }))).status,
      ).toBe(401);
      expect((await send(revokeUrl, json(token, { authorization: clientBasic() }))).status).toBe(200);
      expect((await send(`${base('notiony')}/v1/users/me`, bearer(first.body.access_token))).status).toBe(
        401,
      );
      const after = await exchange({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
      expect(after.body.error).toBe('invalid_grant');
    });
  });

  describe('a HubSpot-like definition (own error field, DELETE revocation)', () => {
    beforeEach(() => {
      emu.control.registerClient('definitions', {
        clientId: 'hubby-client',
        clientSecret: 'hubby-secret',
        redirectUris: [REDIRECT],
        provider: 'hubby',
      });
    });
    const tokenUrl = () => `${base('hubby')}/oauth/v1/token`;
    const credentials = { client_id: 'hubby-client', client_secret: 'hubby-secret' };

    it('answers errors in its field, issues non-expiring tokens, revokes by DELETE', async () => {
      const url = authorizeUrl(
        `${base('hubby')}/oauth/authorize`,
        { clientId: 'hubby-client' },
        { scope: 'a b' },
      );
      const code = (await consent(url)).searchParams.get('code')!;
      const wrongSecret = await send(
        tokenUrl(),
        form({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          ...credentials,
          client_secret: 'x',
        }),
      );
      expect(wrongSecret.status).toBe(400);
      expect(wrongSecret.body.status).toBe('BAD_CLIENT_SECRET');
      const tokens = await send(
        tokenUrl(),
        form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...credentials }),
      );
      expect(tokens.body).toMatchObject({ token_type: 'bearer', scope: 'a b' });
      expect(tokens.body.expires_in).toBeUndefined();

      const call = await send(
        `${base('hubby')}/crm/v3/objects?access_token=${tokens.body.access_token}&limit=5`,
      );
      expect(call.status).toBe(200);
      expect(call.body.query).toEqual({ limit: '5' });

      const deleted = await fetch(`${base('hubby')}/oauth/v1/refresh-tokens/${tokens.body.refresh_token}`, {
        method: 'DELETE',
      });
      expect(deleted.status).toBe(204);
      expect((await send(`${base('hubby')}/x?access_token=${tokens.body.access_token}`)).status).toBe(401);
      const refresh = await send(
        tokenUrl(),
        form({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, ...credentials }),
      );
      expect(refresh.body.status).toBe('BAD_REFRESH_TOKEN');
    });
  });

  describe('a GitHub-like definition (basic_delete revocation)', () => {
    it('revokes the grant of the access token in the DELETE body', async () => {
      emu.control.registerDefinition(HUBGIT);
      const client = {
        clientId: 'hubgit-client',
        clientSecret: 'hubgit-secret',
        redirectUris: [REDIRECT],
        provider: 'hubgit',
      };
      emu.control.registerClient('definitions', client);
      const { access_token } = emu.control.issueToken('definitions', {
        userId: '41000003',
        clientId: client.clientId,
      });
      const url = `${base('hubgit')}/applications/${client.clientId}/grant`;
      const wrong = await send(
        url,
        json({ access_token }, { authorization: basic(client.clientId, 'nope') }, 'DELETE'),
      );
      expect(wrong.status).toBe(401);
      const auth = { authorization: basic(client.clientId, client.clientSecret) };
      expect((await send(url, json({ access_token }, auth, 'DELETE'))).status).toBe(204);
      const call = await send(`${base('hubgit')}/user`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(call.status).toBe(401);
    });
  });

  describe('API keys and Basic credentials', () => {
    it('reads a key sent as the Basic user name', async () => {
      emu.control.registerDefinition(STRIPY);
      const call = (value: string) =>
        send(`${base('stripy')}/v1/charges`, {
          headers: { authorization: `Basic ${Buffer.from(value).toString('base64')}` },
        });
      expect((await call('sandbox_key:')).status).toBe(200);
      expect((await call('sandbox_key')).status).toBe(200);
      expect((await call('live_key:')).status).toBe(401);
    });

    const me = (key?: string) =>
      send(`${base('keyed')}/v2/me`, { headers: key === undefined ? {} : { 'x-api-key': key } });

    it('accepts keys that match the pattern and say sandbox; refuses the rest', async () => {
      const ok = await me('sk_test_sandbox1');
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({
        data: [{ id: expect.any(String), email: expect.stringContaining('@example.com') }],
      });
      expect((await me('sk_test_live1')).status).toBe(401);
      expect((await me('sandbox_abc')).status).toBe(401);
      const missing = await me();
      expect(missing.status).toBe(401);
      expect(missing.body.error.code).toBe('unauthorized');
      const echo = await send(`${base('keyed')}/v2/things`, { headers: { 'x-api-key': 'sk_test_sandbox1' } });
      expect(echo.body.headers['x-api-key']).toBeUndefined();
      expect(echo.body.path).toBe('/v2/things');
    });

    it('refuses revoked keys until reset', async () => {
      expect((await me('sk_test_sandbox1')).status).toBe(200);
      expect((await me('sk_test_sandbox2')).status).toBe(200);
      emu.control.revokeApiKey('keyed', 'sk_test_sandbox1');
      expect((await me('sk_test_sandbox1')).status).toBe(401);
      expect((await me('sk_test_sandbox2')).status).toBe(200);
      expect(
        (await control('POST', '/api-keys/revoke', { provider: 'keyed', key: 'sk_test_sandbox3' })).status,
      ).toBe(200);
      expect((await me('sk_test_sandbox3')).status).toBe(401);
      expect(emu.control.revokeGrants('definitions', { provider: 'keyed' })).toBe(1);
      expect((await me('sk_test_sandbox2')).status).toBe(401);
      emu.control.reset();
      expect((await me('sk_test_sandbox1')).status).toBe(200);
    });

    it('takes any user name with a sandbox_ password over Basic', async () => {
      const call = (user: string, password: string) =>
        send(`${base('basics')}/api/tickets`, { headers: { authorization: basic(user, password) } });
      const ok = await call('grace.hopper@example.com', 'sandbox_pw');
      expect(ok.status).toBe(200);
      expect(ok.body.user.id).toBe('41000002');
      const refused = await call('anyone', 'secret');
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Basic/);
    });
  });
});
