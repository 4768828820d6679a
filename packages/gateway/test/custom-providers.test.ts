import { submitConsent } from '@portico/emulators';
import { ScalekitClient } from '@scalekit-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/** An OAuth provider unlike the built-in ones: nested token, JSON body with Basic auth, rotation. */
const ACME_CRM = {
  key: 'acme_crm',
  display_name: 'Acme CRM',
  category: 'CRM',
  docs_url: 'https://developer.acme.example/oauth',
  auth: {
    kind: 'oauth2',
    authorization_url: 'https://{region}.acme.example/oauth/authorize',
    token_url: 'https://{region}.acme.example/oauth/token',
    pkce: true,
    scope_separator: ',',
    default_scopes: ['contacts:read', 'contacts:write'],
    client_auth: 'client_secret_basic',
    token_body: 'json',
    token_response: { access_token: 'data.token', refresh_token: 'data.refresh', expires_in: 'data.ttl' },
    refresh: { rotates: true },
    revocation: { url: 'https://{region}.acme.example/oauth/revoke', style: 'basic_json', token: 'refresh' },
  },
  api: {
    base_url: 'https://{region}.acme.example/api',
    credential: { in: 'header', name: 'X-Acme-Token', value: '{token}' },
    default_headers: { 'Acme-Version': '2026-01' },
  },
  parameters: [{ name: 'region', source: 'connection', label: 'Region', pattern: '^[a-z]{2}$' }],
  user_info: { url: 'https://{region}.acme.example/api/me', id: 'user.id', label: 'user.email' },
};

/** An API-key provider that takes the key as a query parameter. */
const ACME_KEYS = {
  key: 'acme_keys',
  display_name: 'Acme Keys',
  auth: { kind: 'api_key', label: 'Access key', help: 'Settings → API → Access keys.' },
  api: { base_url: 'https://api.acme-keys.example/v2', credential: { in: 'query', name: 'access_key' } },
  user_info: { url: 'https://api.acme-keys.example/v2/account', label: 'account.name' },
};

describe.each(BACKENDS)('custom providers and imported credentials on $name', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  const proxy = (connection: string, path: string, identifier = 'user_42') =>
    t.api(`/proxy${path}`, { headers: { connection_name: connection, identifier } });
  const version = async (accountId: string) =>
    (
      await t.db.query<{ token_version: number }>(
        'SELECT token_version FROM connected_accounts WHERE id = $1',
        [accountId],
      )
    )[0]!.token_version;

  it('refuses a definition with mistakes, naming each field', async () => {
    const res = await t.api('/api/v1/providers', {
      method: 'POST',
      json: {
        ...ACME_CRM,
        key: 'Acme CRM',
        auth: { ...ACME_CRM.auth, token_url: 'ftp://acme.example/token', client_auth: 'header' },
        api: { ...ACME_CRM.api, base_url: 'https://{tenant}.acme.example' },
        tool_prefix: 'acme',
      },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const body = (await res.json()) as {
      code: string;
      detail: string;
      errors: Array<{ path: string; message: string }>;
    };
    expect(body.code).toBe('invalid_input');
    const paths = body.errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/key', '/auth/token_url', '/auth/client_auth']));
    expect(body.detail).toContain('key');
    // Placeholders and built-in-only fields are checked once the shape is right.
    const semantic = await t.api('/api/v1/providers', {
      method: 'POST',
      json: {
        ...ACME_CRM,
        api: { ...ACME_CRM.api, base_url: 'https://{tenant}.acme.example' },
        tool_prefix: 'acme',
      },
    });
    expect(semantic.status).toBe(400);
    const errors = ((await semantic.json()) as { errors: Array<{ path: string; message: string }> }).errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        { path: '/api/base_url', message: expect.stringContaining('{tenant}') },
        { path: '/tool_prefix', message: expect.stringContaining('built-in') },
      ]),
    );
  });

  it('a custom OAuth provider works end to end: consent, proxy, rotating refresh, revocation', async () => {
    const created = await t.api('/api/v1/providers', { method: 'POST', json: ACME_CRM });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(await created.json()).toMatchObject({ key: 'acme_crm', built_in: false, auth: 'oauth2' });
    expect((await t.api('/api/v1/providers', { method: 'POST', json: ACME_CRM })).status).toBe(409);
    const listed = (await (await t.api('/api/v1/providers')).json()) as { data: Array<{ key: string }> };
    expect(listed.data.map((p) => p.key)).toContain('acme_crm');

    // A connection must give the provider's required parameter, in the form it declares.
    const missing = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'acme', provider: 'acme_crm', sandbox: true },
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe(
      '/parameters/region',
    );
    const connection = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'acme', provider: 'acme_crm', sandbox: true, parameters: { region: 'eu' } },
    });
    expect(connection.status).toBe(201);
    expect(await connection.json()).toMatchObject({
      parameters: { region: 'eu' },
      scopes: ['contacts:read', 'contacts:write'],
    });

    const link = (await (
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'acme', identifier: 'user_42' },
      })
    ).json()) as { link: string; connected_account_id: string };
    const start = await openLink(link.link);
    const authorizeUrl = new URL(start.headers.get('location')!);
    expect(authorizeUrl.searchParams.get('scope')).toBe('contacts:read,contacts:write');
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const callback = await submitConsent(authorizeUrl.toString(), { decision: 'allow' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    expect(done.status, await done.clone().text()).toBe(200);
    const account = await accountOf(t, link.connected_account_id);
    expect(account).toMatchObject({
      status: 'ACTIVE',
      provider: 'acme_crm',
      label: expect.stringContaining('@'),
    });

    const res = await proxy('acme', '/contacts?limit=1');
    expect(res.status, await res.clone().text()).toBe(200);
    const echo = (await res.json()) as { path: string; headers: Record<string, string> };
    expect(echo.path).toMatch(/\/api\/contacts$/);
    expect(echo.headers['acme-version']).toBe('2026-01');
    expect(echo.headers['x-acme-token']).toBeUndefined();

    const before = await version(link.connected_account_id);
    await t.api('/api/v1/sandbox/connections/acme/expire-tokens', { method: 'POST' });
    expect((await proxy('acme', '/contacts')).status).toBe(200);
    await t.api('/api/v1/sandbox/connections/acme/expire-tokens', { method: 'POST' });
    // A second refresh works only if the rotated refresh token of the first was stored.
    expect((await proxy('acme', '/contacts')).status).toBe(200);
    expect(await version(link.connected_account_id)).toBe(before + 2);

    // In use: the provider cannot go; replacing it keeps the key.
    expect((await t.api('/api/v1/providers/acme_crm', { method: 'DELETE' })).status).toBe(409);
    const replaced = await t.api('/api/v1/providers/acme_crm', {
      method: 'PUT',
      json: { ...ACME_CRM, display_name: 'Acme CRM (EU)' },
    });
    expect(replaced.status).toBe(200);
    expect((await (await t.api('/api/v1/providers/acme_crm')).json()) as object).toMatchObject({
      display_name: 'Acme CRM (EU)',
      definition: { key: 'acme_crm' },
    });
    expect((await t.api('/api/v1/providers/notion', { method: 'PUT', json: ACME_CRM })).status).toBe(409);
    expect(
      (await t.api(`/api/v1/connected-accounts/${link.connected_account_id}`, { method: 'DELETE' })).status,
    ).toBe(200);
    expect((await t.api('/api/v1/connections/acme', { method: 'DELETE' })).status).toBe(204);
    expect((await t.api('/api/v1/providers/acme_crm', { method: 'DELETE' })).status).toBe(204);
    expect((await t.api('/api/v1/providers/acme_crm')).status).toBe(404);
  });

  it('a custom API-key provider: the hosted form checks the key, the proxy sends it as a query parameter', async () => {
    expect((await t.api('/api/v1/providers', { method: 'POST', json: ACME_KEYS })).status).toBe(201);
    const refused = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'keys', provider: 'acme_keys', sandbox: true, client_id: 'x' },
    });
    expect(refused.status).toBe(400);
    await createSandboxConnection(t, 'keys', 'acme_keys');
    const link = (await (
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'keys', identifier: 'user_42' },
      })
    ).json()) as { link: string; connected_account_id: string };
    const form = await openLink(link.link);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-security-policy')).toContain("form-action 'self'");
    const html = await form.text();
    expect(html).toContain('Access key');
    expect(html).toContain('Settings → API → Access keys.');
    const state = html.match(/name="state" value="([^"]+)"/)![1]!;
    const action = html.match(/action="([^"]+)"/)![1]!;
    const post = (fields: Record<string, string>, cookie = browserCookie(form)) =>
      fetch(new URL(action, t.url), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ state, ...fields }).toString(),
      });
    // Another browser cannot finish this trip.
    expect((await post({ api_key: 'sandbox_k1' }, '')).status).toBe(400);
    const wrong = await post({ api_key: 'not-a-sandbox-key' });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('did not accept');
    const ok = await post({ api_key: 'sandbox_k1' });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await accountOf(t, link.connected_account_id)).toMatchObject({
      status: 'ACTIVE',
      label: expect.any(String),
    });
    const res = await proxy('keys', '/reports?year=2026');
    expect(res.status).toBe(200);
    const echo = (await res.json()) as { path: string; query: Record<string, string> };
    expect(echo.path).toMatch(/\/v2\/reports$/);
    expect(echo.query.year).toBe('2026');
    // A revoked key makes the account expire with a new link, as a refused OAuth grant does.
    t.gateway.sandbox.control!.revokeApiKey('acme_keys', 'sandbox_k1');
    const gone = await proxy('keys', '/reports');
    expect(gone.status).toBe(409);
    expect(await gone.json()).toMatchObject({ code: 'account_not_active', account_status: 'EXPIRED' });

    // Importing a key: checked with the provider first unless told not to.
    const bad = await t.api('/api/v1/connected-accounts/import', {
      method: 'POST',
      json: { connection_name: 'keys', identifier: 'user_7', api_key: 'wrong' },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'credentials_invalid' });
    const mixed = await t.api('/api/v1/connected-accounts/import', {
      method: 'POST',
      json: { connection_name: 'keys', identifier: 'user_7', api_key: 'sandbox_k2', refresh_token: 'r' },
    });
    expect(mixed.status).toBe(400);
    expect(((await mixed.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe(
      '/refresh_token',
    );
    const imported = await t.api('/api/v1/connected-accounts/import', {
      method: 'POST',
      json: { connection_name: 'keys', identifier: 'user_7', api_key: 'sandbox_k2' },
    });
    expect(imported.status).toBe(201);
    expect(await imported.json()).toMatchObject({ status: 'ACTIVE', identifier: 'user_7' });
    expect((await proxy('keys', '/reports', 'user_7')).status).toBe(200);
  });

  it('an imported OAuth token is refreshed by Portico when it expires (REST and the Scalekit SDK)', async () => {
    const conn = await createSandboxConnection(t, 'notion-import', 'notion');
    const clientId = (
      (await (await t.api('/api/v1/connections/notion-import')).json()) as { client_id: string }
    ).client_id;
    expect(conn.id).toBeTruthy();
    // Starting a link registers the sandbox client; tokens the app obtained elsewhere come from the emulator.
    await openLink(
      (
        (await (
          await t.api('/api/v1/connected-accounts/authorization-link', {
            method: 'POST',
            json: { connection_name: 'notion-import', identifier: 'warmup' },
          })
        ).json()) as { link: string }
      ).link,
    );
    const control = t.gateway.sandbox.control!;
    const issued = control.issueToken('notion', { userId: 'ada.lovelace@example.com', clientId });
    const res = await t.api('/api/v1/connected-accounts/import', {
      method: 'POST',
      json: {
        connection_name: 'notion-import',
        identifier: 'migrated',
        access_token: issued.access_token,
        refresh_token: issued.refresh_token,
        expires_in: 0,
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const account = (await res.json()) as { id: string; status: string };
    expect(account.status).toBe('ACTIVE');
    const before = await version(account.id);
    const me = await proxy('notion-import', '/v1/users/me', 'migrated');
    expect(me.status, await me.clone().text()).toBe(200);
    expect(await version(account.id)).toBe(before + 1);

    // The official SDK's CreateConnectedAccount with an OAuth token is the same import over gRPC.
    const second = control.issueToken('notion', { userId: 'ada.lovelace@example.com', clientId });
    const sk = new ScalekitClient(t.url, t.clientId, t.clientSecret);
    const created = await sk.actions.createConnectedAccount({
      connectionName: 'notion-import',
      identifier: 'via-sdk',
      authorizationDetails: {
        details: {
          case: 'oauthToken',
          value: { accessToken: second.access_token, refreshToken: second.refresh_token ?? '', scopes: [] },
        },
      } as never,
    });
    expect(created.connectedAccount?.status).toBe(1);
    expect((await proxy('notion-import', '/v1/users/me', 'via-sdk')).status).toBe(200);
    // A refresh token alone is enough: Portico gets the access token at once.
    const third = control.issueToken('notion', { userId: 'ada.lovelace@example.com', clientId });
    const onlyRefresh = await t.api('/api/v1/connected-accounts/import', {
      method: 'POST',
      json: {
        connection_name: 'notion-import',
        identifier: 'refresh-only',
        refresh_token: third.refresh_token,
      },
    });
    expect(onlyRefresh.status).toBe(201);
    expect((await proxy('notion-import', '/v1/users/me', 'refresh-only')).status).toBe(200);
  });
});
