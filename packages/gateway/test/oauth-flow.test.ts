import type { EmulatorControl, EmulatorKey } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_KEYS, PROVIDERS, type ProviderKey } from '../src/providers/catalog.js';
import { ACCOUNT_REFRESH_TOKEN } from '../src/secrets/sealed-columns.js';
import type { AccountRow } from '../src/store/accounts.js';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, authorize, browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { REQUEST_PATH_READS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { probe } from './helpers/probes.js';

const APP = 'https://app.example.com/done';

describe.each(BACKENDS)('authorization flow on $name', (backend) => {
  let t: TestGateway;
  let control: EmulatorControl;
  beforeAll(async () => {
    t = await startTestGateway(backend);
    control = t.gateway.sandbox.control!;
  });
  afterAll(async () => {
    await t?.close();
  });

  const row = async (id: string) =>
    (await t.db.query<AccountRow>('SELECT * FROM connected_accounts WHERE id = $1', [id]))[0]!;
  const refreshTokenOf = async (id: string) => {
    const r = await row(id);
    return r.refresh_token
      ? t.gateway.keyring.open(r.refresh_token, { ...ACCOUNT_REFRESH_TOKEN, rowId: id })
      : null;
  };
  const refreshGrants = (emulator: EmulatorKey) =>
    control.counters().token_grants[emulator]?.refresh_token ?? 0;

  // The providers with a dedicated emulator; the definitions emulator's are in providers-sandbox.test.ts,
  // remote MCP servers (discovered, not configured) in remote-mcp.test.ts.
  const DEDICATED = PROVIDER_KEYS.filter((p) => !['definitions', 'mcp'].includes(PROVIDERS[p]!.emulator));
  describe.each(DEDICATED.map((p) => ({ provider: p })))('$provider', ({ provider }) => {
    const emulator = PROVIDERS[provider]!.emulator;
    const connection = `sb-${provider.replace('_', '-')}`;
    let accountId: string;

    it('links, consents, calls back and activates the account', async () => {
      await createSandboxConnection(t, connection, provider);
      const result = await authorize(t, {
        connection,
        identifier: 'user_42',
        redirectUrl: APP,
        state: 'app-state-1',
      });
      accountId = result.accountId;
      const authorizeUrl = new URL(result.authorizeUrl);
      expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(
        `${t.url}/sandbox/${emulator}${new URL(PROVIDERS[provider]!.oauth!.authorizeUrl.replace('{tenant}', 'common')).pathname}`,
      );
      for (const [key, value] of Object.entries(PROVIDERS[provider]!.oauth!.extraAuthorizeParams)) {
        expect(authorizeUrl.searchParams.get(key)).toBe(value);
      }
      expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe(
        PROVIDERS[provider]!.oauth!.pkce ? 'S256' : null,
      );
      expect(result.response.status).toBe(302);
      const back = new URL(result.response.headers.get('location')!);
      expect(back.origin + back.pathname).toBe(APP);
      expect(Object.fromEntries(back.searchParams)).toEqual({
        status: 'success',
        connected_account_id: accountId,
        state: 'app-state-1',
      });
      const account = await accountOf(t, accountId);
      expect(account).toMatchObject({
        status: 'ACTIVE',
        provider,
        identifier: 'user_42',
        connection_name: connection,
      });
      expect(JSON.stringify(account)).not.toMatch(/token"\s*:\s*"(?!\d)/);
      const credential = await t.gateway.accountTokens.forAccount(accountId);
      expect(await probe(provider, credential.endpoints.apiBaseUrl, credential.accessToken)).toBeLessThan(
        300,
      );
    });

    it('refreshes an expired token on use, with the provider’s rotation semantics', async () => {
      const before = await t.gateway.accountTokens.forAccount(accountId);
      const oldRefresh = await refreshTokenOf(accountId);
      const grantsBefore = refreshGrants(emulator);
      // The provider expires the token early; the gateway learns it from a 401 and refreshes once.
      control.expireAccessTokens(emulator);
      expect(await probe(provider, before.endpoints.apiBaseUrl, before.accessToken)).toBe(401);
      const after = await t.gateway.accountTokens.afterUnauthorized(before);
      expect(after.accessToken).not.toBe(before.accessToken);
      expect(await probe(provider, after.endpoints.apiBaseUrl, after.accessToken)).toBeLessThan(300);
      expect(refreshGrants(emulator)).toBe(grantsBefore + 1);
      const newRefresh = await refreshTokenOf(accountId);
      if (PROVIDERS[provider]!.oauth!.refreshRotates) expect(newRefresh).not.toBe(oldRefresh);
      else expect(newRefresh).toBe(oldRefresh);

      // Proactive: a token inside the refresh margin is refreshed before use.
      await t.db.query(
        `UPDATE connected_accounts SET token_expires_at = now() + interval '10 seconds' WHERE id = $1`,
        [accountId],
      );
      await t.gateway.accountTokens.invalidate(accountId);
      const proactive = await t.gateway.accountTokens.forAccount(accountId);
      expect(proactive.accessToken).not.toBe(after.accessToken);
      expect(refreshGrants(emulator)).toBe(grantsBefore + 2);
      const expiry = (await row(accountId)).token_expires_at;
      // Notion sends no expires_in: its tokens are valid until revoked.
      if (provider === 'notion') expect(expiry).toBeNull();
      else expect(expiry!.getTime()).toBeGreaterThan(Date.now() + 60_000);
    });
  });

  describe('failures', () => {
    it('signs Microsoft users in at the connection’s tenant, and shows the app’s name when done', async () => {
      const created = await t.api('/api/v1/connections', {
        method: 'POST',
        json: {
          name: 'single-tenant',
          provider: 'sharepoint',
          sandbox: true,
          tenant: 'contoso.onmicrosoft.com',
          display_name: 'Acme Assistant',
        },
      });
      expect(created.status).toBe(201);
      expect(await created.json()).toMatchObject({
        tenant: 'contoso.onmicrosoft.com',
        display_name: 'Acme Assistant',
      });
      const result = await authorize(t, { connection: 'single-tenant', identifier: 'tenant-user' });
      expect(new URL(result.authorizeUrl).pathname).toBe(
        '/sandbox/microsoft/contoso.onmicrosoft.com/oauth2/v2.0/authorize',
      );
      expect(result.response.status).toBe(200);
      expect(await result.response.text()).toContain('connected to Acme Assistant');
      // The token endpoint of the same tenant refreshes it.
      await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [
        result.accountId,
      ]);
      await t.gateway.accountTokens.invalidate(result.accountId);
      expect((await t.gateway.accountTokens.forAccount(result.accountId)).accessToken).toBeTruthy();
      for (const [body, path] of [
        [{ name: 'bad-tenant', provider: 'sharepoint', sandbox: true, tenant: 'not a tenant' }, '/tenant'],
        [{ name: 'tenantless', provider: 'notion', sandbox: true, tenant: 'common' }, '/tenant'],
      ] as const) {
        const res = await t.api('/api/v1/connections', { method: 'POST', json: body });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe(path);
      }
    });

    it('binds the consent trip to the browser that opened the link', async () => {
      const conn = await createSandboxConnection(t, 'bound', 'notion');
      const { submitConsent } = await import('@portico/emulators');
      // The attacker opens a link issued for their own identifier and has a victim consent, so the
      // callback arrives in the victim's browser: without the cookie, or with another one.
      const trip = async () => {
        const linkRes = await t.api('/api/v1/connected-accounts/authorization-link', {
          method: 'POST',
          json: { connection_name: 'bound', identifier: 'attacker-id' },
        });
        const { link, connected_account_id: id } = (await linkRes.json()) as {
          link: string;
          connected_account_id: string;
        };
        const start = await openLink(link);
        const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
        return { id, start, callback };
      };
      const first = await trip();
      const [cookie] = first.start.headers.getSetCookie();
      expect(cookie).toMatch(/^portico_auth_areq_\w+=\w+; /);
      expect(cookie).toContain(`Path=/sso/v1/oauth/${conn.id}/callback`);
      expect(cookie).toContain('HttpOnly');
      expect(cookie).toContain('SameSite=Lax');
      const second = await trip();
      // The trip's binding cookie, with another value (the link's resume cookie is not the trip's).
      const forged = second.start.headers
        .getSetCookie()[0]!
        .split(';')[0]!
        .replace(/=\w+$/, '=the-victims-own-value');
      for (const [{ id, callback }, headers] of [
        [first, {}],
        [second, { cookie: forged }],
      ] as const) {
        const res = await fetch(callback, { redirect: 'manual', headers });
        expect(res.status).toBe(400);
        const html = await res.text();
        expect(html).toContain('data-code="browser_mismatch"');
        expect(html).toMatch(/started in another browser/);
        expect((await row(id)).status).toBe('PENDING_AUTH');
        expect((await row(id)).access_token).toBeNull();
      }
      // A refused trip is spent: the cookie cannot complete it afterwards.
      const late = await fetch(first.callback, {
        redirect: 'manual',
        headers: { cookie: browserCookie(first.start) },
      });
      expect(await late.text()).toMatch(/already completed/);
      // In the browser that opened the link, the flow connects.
      const own = await authorize(t, { connection: 'bound', identifier: 'attacker-id' });
      expect(own.response.status).toBe(200);
      expect((await row(first.id)).status).toBe('ACTIVE');
    });

    it('refuses a tampered, replayed, expired or foreign state and stores nothing', async () => {
      await createSandboxConnection(t, 'state-a', 'google_drive');
      const other = await createSandboxConnection(t, 'state-b', 'google_drive');
      const linkRes = await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'state-a', identifier: 'state-user' },
      });
      const { link, connected_account_id: id } = (await linkRes.json()) as {
        link: string;
        connected_account_id: string;
      };
      const start = await openLink(link);
      const { submitConsent } = await import('@portico/emulators');
      const callback = new URL(await submitConsent(start.headers.get('location')!, { decision: 'allow' }));

      const tampered = new URL(callback);
      tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
      const foreign = new URL(callback);
      foreign.pathname = `/sso/v1/oauth/${other.id}/callback`;
      for (const [url, reason] of [
        [tampered, /state is unknown/],
        [foreign, /belongs to another connection/],
      ] as const) {
        const res = await fetch(url, { redirect: 'manual' });
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toContain('text/html');
        const html = await res.text();
        expect(html).toContain('data-code="state_invalid"');
        expect(html).toMatch(reason);
      }
      expect((await row(id)).status).toBe('PENDING_AUTH');

      await t.db.query(
        `UPDATE authorization_requests SET expires_at = now() - interval '1 second' WHERE account_id = $1`,
        [id],
      );
      const expired = await fetch(callback, { redirect: 'manual' });
      expect(await expired.text()).toMatch(/took too long and expired/);
      expect((await row(id)).status).toBe('PENDING_AUTH');
      expect((await row(id)).access_token).toBeNull();

      // A completed authorization cannot be replayed.
      const done = await authorize(t, { connection: 'state-a', identifier: 'state-user' });
      expect(done.response.status).toBe(200);
      expect(await done.response.text()).toContain('data-outcome="success"');
      const replay = await fetch(done.callbackUrl, { redirect: 'manual' });
      expect(replay.status).toBe(400);
      expect(await replay.text()).toMatch(/already completed/);
    });

    it('makes links single-use and expiring', async () => {
      await createSandboxConnection(t, 'links', 'hubspot');
      const mk = async () =>
        (await (
          await t.api('/api/v1/connected-accounts/authorization-link', {
            method: 'POST',
            json: { connection_name: 'links', identifier: 'link-user' },
          })
        ).json()) as { link: string; expires_at: string };
      const first = await mk();
      expect(new Date(first.expires_at).getTime() - Date.now()).toBeGreaterThan(3500_000);
      expect((await openLink(first.link)).status).toBe(303);
      const reused = await openLink(first.link);
      expect(reused.status).toBe(410);
      expect(await reused.text()).toMatch(/already been used/);

      const second = await mk();
      await t.db.query(
        `UPDATE authorization_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`,
      );
      const expired = await openLink(second.link);
      expect(expired.status).toBe(410);
      expect(await expired.text()).toMatch(/expired/);

      const unknown = await fetch(`${t.url}/connect/not-a-real-token`, { redirect: 'manual' });
      expect(unknown.status).toBe(404);
    });

    it('reports a denied consent to the app and leaves the account pending', async () => {
      await createSandboxConnection(t, 'deny', 'sharepoint');
      const result = await authorize(t, {
        connection: 'deny',
        identifier: 'denier',
        redirectUrl: APP,
        state: 's',
        decision: 'deny',
      });
      const back = new URL(result.response.headers.get('location')!);
      expect(Object.fromEntries(back.searchParams)).toEqual({
        status: 'error',
        error: 'access_denied',
        connected_account_id: result.accountId,
        state: 's',
      });
      expect((await accountOf(t, result.accountId)).status).toBe('PENDING_AUTH');
    });

    it('explains a wrong client secret on the page and keeps the account pending', async () => {
      await createSandboxConnection(t, 'badsecret', 'notion');
      const linkRes = await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'badsecret', identifier: 'u' },
      });
      const { link, connected_account_id: id } = (await linkRes.json()) as {
        link: string;
        connected_account_id: string;
      };
      const start = await openLink(link);
      // The operator changes the secret after the client was registered at the provider.
      await t.api('/api/v1/connections/badsecret', {
        method: 'PATCH',
        json: { client_secret: 'wrong-secret' },
      });
      const { submitConsent } = await import('@portico/emulators');
      const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
      const res = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toMatch(/rejected the connection(&#39;|')s client credentials/);
      expect(html).toContain('connection &#34;badsecret&#34;');
      expect(html).not.toContain('wrong-secret');
      expect((await row(id)).status).toBe('PENDING_AUTH');
    });

    it.each(['sharepoint', 'hubspot', 'notion', 'google_drive'])(
      'keeps a %s account ACTIVE when the refresh fails on the connection’s client secret, and tells the operator',
      async (provider) => {
        const name = `misconfigured-${provider.replaceAll('_', '-')}`;
        await createSandboxConnection(t, name, provider);
        const { accountId } = await authorize(t, { connection: name, identifier: 'misconfigured' });
        // The operator pasted a wrong client secret into the connection.
        const patched = await t.api(`/api/v1/connections/${name}`, {
          method: 'PATCH',
          json: { client_secret: 'not-the-client-secret' },
        });
        expect(patched.status).toBe(200);
        await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [accountId]);
        await t.gateway.accountTokens.invalidate(accountId);
        const error = await t.gateway.accountTokens.forAccount(accountId).catch((e: unknown) => e);
        expect(error).toMatchObject({ code: 'upstream_unauthorized', status: 502 });
        expect((error as Error).message).toContain(`PATCH /api/v1/connections/${name}`);
        expect((await row(accountId)).status).toBe('ACTIVE');
        expect((await row(accountId)).access_token).not.toBeNull();
      },
    );

    it('registers a sandbox client again after the emulators forgot it (a restart), so the account can be judged and re-authorized', async () => {
      await createSandboxConnection(t, 'restarted', 'notion');
      const { accountId } = await authorize(t, { connection: 'restarted', identifier: 'restarted' });
      // What a restart of an embedded gateway does to its in-memory emulators.
      control.reset({ clients: true });
      await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [accountId]);
      await t.gateway.accountTokens.invalidate(accountId);
      const error = await t.gateway.accountTokens.forAccount(accountId).catch((e: unknown) => e);
      // The grant is gone with the emulator's memory: the account expires with a working link,
      // instead of failing on an unknown client forever.
      expect(error).toMatchObject({ code: 'account_not_active' });
      const link = (
        (error as { toBody(id: string): Record<string, unknown> }).toBody('r').authorization_link as {
          link: string;
        }
      ).link;
      const start = await openLink(link);
      const { submitConsent } = await import('@portico/emulators');
      const back = await fetch(await submitConsent(start.headers.get('location')!, { decision: 'allow' }), {
        redirect: 'manual',
        headers: { cookie: browserCookie(start) },
      });
      expect(back.status).toBe(200);
      expect((await row(accountId)).status).toBe('ACTIVE');
      expect((await t.gateway.accountTokens.forAccount(accountId)).accessToken).toBeTruthy();
    });

    it('expires an account whose grant was revoked, and says how to reconnect', async () => {
      await createSandboxConnection(t, 'revoked', 'google_calendar');
      const { accountId } = await authorize(t, { connection: 'revoked', identifier: 'rev' });
      control.revokeGrants('google');
      await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [accountId]);
      await t.gateway.accountTokens.invalidate(accountId);
      const error = await t.gateway.accountTokens.forAccount(accountId).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'account_not_active' });
      const body = (error as { toBody(id: string): Record<string, unknown> }).toBody('r');
      expect(body).toMatchObject({
        status: 409,
        account_status: 'EXPIRED',
        authorization_link: { link: expect.stringContaining(`${t.url}/connect/`) },
      });
      expect(body.detail).toMatch(/Ask the user to open authorization_link.link/);
      const account = await row(accountId);
      expect(account.status).toBe('EXPIRED');
      expect(account.access_token).toBeNull();
      // The link in the error works: authorizing again reactivates the account.
      const link = (body.authorization_link as { link: string }).link;
      const start = await openLink(link);
      const { submitConsent } = await import('@portico/emulators');
      const back = await fetch(await submitConsent(start.headers.get('location')!, { decision: 'allow' }), {
        redirect: 'manual',
        headers: { cookie: browserCookie(start) },
      });
      expect(back.status).toBe(200);
      expect((await row(accountId)).status).toBe('ACTIVE');
    });

    it('keeps the account active on a transient refresh failure and says to retry', async () => {
      await createSandboxConnection(t, 'flaky', 'hubspot');
      const { accountId } = await authorize(t, { connection: 'flaky', identifier: 'flaky' });
      control.addFault({ emulator: 'hubspot', path: '^/hubspot/oauth/v1/token', status: 503, times: 1 });
      await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [accountId]);
      await t.gateway.accountTokens.invalidate(accountId);
      const error = await t.gateway.accountTokens.forAccount(accountId).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'upstream_unavailable' });
      expect((error as { toBody(id: string): { retryable: boolean } }).toBody('r').retryable).toBe(true);
      expect((await row(accountId)).status).toBe('ACTIVE');
      expect((await t.gateway.accountTokens.forAccount(accountId)).accessToken).toBeTruthy();
    });
  });

  describe('connected accounts API', () => {
    it('lists with filters and pagination, gets, and disconnects with revocation', async () => {
      await createSandboxConnection(t, 'api-drive', 'google_drive');
      const ids: string[] = [];
      for (const identifier of ['a1', 'a2', 'a3'])
        ids.push((await authorize(t, { connection: 'api-drive', identifier })).accountId);
      const seen: string[] = [];
      let token: string | null = null;
      do {
        const res: Response = await t.api(
          `/api/v1/connected-accounts?connection_name=api-drive&status=ACTIVE&page_size=2${token ? `&page_token=${token}` : ''}`,
        );
        const page = (await res.json()) as { data: { id: string }[]; next_page_token: string | null };
        seen.push(...page.data.map((a) => a.id));
        token = page.next_page_token;
      } while (token);
      expect(seen.sort()).toEqual([...ids].sort());
      const byIdentifier = (await (await t.api('/api/v1/connected-accounts?identifier=a2')).json()) as {
        data: { id: string }[];
      };
      expect(byIdentifier.data.map((a) => a.id)).toEqual([ids[1]]);
      expect((await t.api('/api/v1/connected-accounts?status=BOGUS')).status).toBe(400);

      const credential = await t.gateway.accountTokens.forAccount(ids[0]!);
      const deleted = await t.api(`/api/v1/connected-accounts/${ids[0]}`, { method: 'DELETE' });
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toMatchObject({ status: 'DISCONNECTED' });
      const wiped = await row(ids[0]!);
      expect(wiped.access_token).toBeNull();
      expect(wiped.refresh_token).toBeNull();
      // Revoked at the provider: the old token no longer works there.
      expect(await probe('google_drive', credential.endpoints.apiBaseUrl, credential.accessToken)).toBe(401);
      const error = await t.gateway.accountTokens.forAccount(ids[0]!).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'account_not_active' });
      expect((await t.api('/api/v1/connected-accounts/ca_nope')).status).toBe(404);
    });

    it('leaves no usable credentials behind when a connection is deleted', async () => {
      await createSandboxConnection(t, 'doomed', 'notion');
      const { accountId } = await authorize(t, { connection: 'doomed', identifier: 'd' });
      const credential = await t.gateway.accountTokens.forAccount(accountId);
      expect((await t.api('/api/v1/connections/doomed', { method: 'DELETE' })).status).toBe(204);
      expect(await t.db.query('SELECT id FROM connected_accounts WHERE id = $1', [accountId])).toEqual([]);
      expect(await probe('notion', credential.endpoints.apiBaseUrl, credential.accessToken)).toBe(401);
      await expect(t.gateway.accountTokens.forAccount(accountId)).rejects.toMatchObject({
        code: 'account_not_found',
      });
    });

    it('validates link requests', async () => {
      const res = await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'nope', identifier: 'x', redirect_url: 'javascript:alert(1)' },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ errors: [{ path: '/redirect_url' }] });
      const missing = await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'nope', identifier: 'x' },
      });
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ code: 'connection_not_found' });
    });
  });

  describe('hot path', () => {
    it('serves a cached token without touching the database and writes last_used_at in batches', async () => {
      await createSandboxConnection(t, 'hot', 'hubspot');
      const { accountId } = await authorize(t, { connection: 'hot', identifier: 'hot-user' });
      const ref = {
        environmentId: (await row(accountId)).environment_id,
        connectionName: 'hot',
        identifier: 'hot-user',
      };
      await t.gateway.accountTokens.forRef(ref);
      const before = t.queries(REQUEST_PATH_READS);
      for (let i = 0; i < 200; i++) await t.gateway.accountTokens.forRef(ref);
      expect(t.queries(REQUEST_PATH_READS)).toBe(before);
      expect((await row(accountId)).last_used_at).toBeNull();
      await t.gateway.accountTokens.flushLastUsed();
      expect((await row(accountId)).last_used_at).toBeInstanceOf(Date);
    });
  });
});

export type { ProviderKey };
