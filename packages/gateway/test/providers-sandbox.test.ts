import { submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_KEYS, PROVIDERS, type ProviderDefinition } from '../src/providers/catalog.js';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, authorize, browserCookie, executeTool, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Every built-in provider that the definitions emulator plays, end to end against the sandbox on
 * both stores: link, consent (or the hosted credential form), a proxied call that arrives with the
 * credential where the definition says, a refresh after the token expired, and revocation.
 */
const PLAYED = PROVIDER_KEYS.map((k) => PROVIDERS[k]!).filter((p) => p.emulator === 'definitions');

/** Values for the connection parameters a provider requires. */
function parametersFor(p: ProviderDefinition): Record<string, string> | undefined {
  const required = p.parameters.filter((x) => x.source === 'connection' && x.default === undefined);
  return required.length ? Object.fromEntries(required.map((x) => [x.name, 'acme'])) : undefined;
}

interface Echo {
  ok: boolean;
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  user: { id: string; email: string };
}

describe.each(BACKENDS)('every built-in provider definition, end to end on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ships at least 23 definitions beyond the seven of the specification', () => {
    expect(PLAYED.length).toBeGreaterThanOrEqual(23);
    expect(PROVIDER_KEYS.length).toBeGreaterThanOrEqual(30);
  });

  const proxyGet = (connection: string, path: string) =>
    t.api(`/proxy${path}`, { headers: { connection_name: connection, identifier: 'user_42' } });

  const version = async (accountId: string) =>
    (
      await t.db.query<{ token_version: number }>(
        'SELECT token_version FROM connected_accounts WHERE id = $1',
        [accountId],
      )
    )[0]!.token_version;

  async function connect(
    p: ProviderDefinition,
  ): Promise<{ connection: string; accountId: string; linkStart: Response }> {
    const connection = `sbx-${p.key.replaceAll('_', '-')}`;
    const parameters = parametersFor(p);
    const created = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: connection, provider: p.key, sandbox: true, ...(parameters ? { parameters } : {}) },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const linkRes = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: connection, identifier: 'user_42' },
    });
    expect(linkRes.status).toBe(201);
    const { link, connected_account_id: accountId } = (await linkRes.json()) as {
      link: string;
      connected_account_id: string;
    };
    const linkStart = await openLink(link);
    return { connection, accountId, linkStart };
  }

  for (const p of PLAYED.filter((x) => x.auth === 'oauth2')) {
    it(`${p.key}: consent, proxy, refresh and revocation`, async () => {
      const { connection, accountId, linkStart } = await connect(p);
      expect(linkStart.status).toBe(303);
      const authorizeUrl = new URL(linkStart.headers.get('location')!);
      // The consent screen is the definition's authorization URL, played by the emulator.
      expect(authorizeUrl.pathname).toContain(`/sandbox/definitions/${p.key}/`);
      const scopeParameter = p.oauth!.scopeParameter;
      if (p.oauth!.defaultScopes.length || p.oauth!.requiredScopes.length)
        expect(authorizeUrl.searchParams.get(scopeParameter)).toBeTruthy();
      expect(Boolean(authorizeUrl.searchParams.get('code_challenge'))).toBe(p.oauth!.pkce);
      for (const [k, v] of Object.entries(p.oauth!.extraAuthorizeParams))
        expect(authorizeUrl.searchParams.get(k)).toBe(v);
      const callbackUrl = await submitConsent(authorizeUrl.toString(), { decision: 'allow' });
      const callback = await fetch(callbackUrl, {
        redirect: 'manual',
        headers: { cookie: browserCookie(linkStart) },
      });
      expect(callback.status, await callback.clone().text()).toBe(200);
      expect(await accountOf(t, accountId)).toMatchObject({ status: 'ACTIVE', provider: p.key });

      const res = await proxyGet(connection, '/portico-probe/items?limit=2');
      expect(res.status, await res.clone().text()).toBe(200);
      const echo = (await res.json()) as Echo;
      expect(echo.ok).toBe(true);
      expect(echo.path).toMatch(/\/portico-probe\/items$/);
      expect(echo.query.limit).toBe('2');
      // The credential went where the definition says, and nowhere the caller could see it.
      expect(JSON.stringify(echo.headers)).not.toMatch(/sandbox_|Bearer /);

      const before = await version(accountId);
      const expired = await t.api(`/api/v1/sandbox/connections/${connection}/expire-tokens`, {
        method: 'POST',
      });
      expect(((await expired.json()) as { expired: number }).expired).toBeGreaterThanOrEqual(1);
      expect((await proxyGet(connection, '/portico-probe/again')).status).toBe(200);
      expect(await version(accountId)).toBe(before + 1);

      const control = t.gateway.sandbox.control!;
      const clientId = (
        (await (await t.api(`/api/v1/connections/${connection}`)).json()) as { client_id: string }
      ).client_id;
      const live = () =>
        [...control.oauth('definitions').grants.values()].filter((g) => g.clientId === clientId && !g.revoked)
          .length;
      expect(live()).toBe(1);
      const disconnected = await t.api(`/api/v1/connected-accounts/${accountId}`, { method: 'DELETE' });
      expect(disconnected.status).toBe(200);
      expect(await accountOf(t, accountId)).toMatchObject({ status: 'DISCONNECTED' });
      // Revoked at the provider when it has a revocation endpoint; wiped on Portico's side either way.
      expect(live()).toBe(p.oauth!.revocation ? 0 : 1);
      expect((await proxyGet(connection, '/portico-probe/items')).status).toBe(409);
    });
  }

  for (const p of PLAYED.filter((x) => x.auth !== 'oauth2')) {
    it(`${p.key}: the hosted form refuses a wrong credential, stores a right one, and the proxy sends it`, async () => {
      const { connection, accountId, linkStart } = await connect(p);
      expect(linkStart.status).toBe(200);
      const page = await linkStart.text();
      expect(page).toContain(`Connect your ${p.displayName} account`);
      const action = page.match(/<form method="post" action="([^"]+)"/)![1]!;
      const state = page.match(/name="state" value="([^"]+)"/)![1]!;
      const submit = (fields: Record<string, string>) =>
        fetch(new URL(action, t.url), {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: browserCookie(linkStart) },
          body: new URLSearchParams({ state, ...fields }).toString(),
        });
      const basic = p.auth === 'basic';
      // What the form tells the person to enter in the sandbox is what the sandbox accepts.
      const example = /id="sandbox-hint">[^<]*\(for example ([^)\s]+)\)/.exec(page)?.[1];
      expect(example, page).toBeTruthy();
      const good: Record<string, string> = basic
        ? { username: 'AC0123', password: example! }
        : { api_key: example! };
      const bad: Record<string, string> = basic
        ? { username: 'AC0123', password: 'wrong' }
        : { api_key: example!.replace('sandbox', 'wrong') };
      if (p.userInfo) {
        const refused = await submit(bad);
        expect(refused.status).toBe(400);
        expect(await refused.text()).toContain('did not accept');
        expect(await accountOf(t, accountId)).toMatchObject({ status: 'PENDING_AUTH' });
      }
      const accepted = await submit(good);
      expect(accepted.status, await accepted.clone().text()).toBe(200);
      expect(await accountOf(t, accountId)).toMatchObject({ status: 'ACTIVE' });
      if (p.userInfo?.label) expect((await accountOf(t, accountId)).label).toBeTruthy();

      const res = await proxyGet(connection, '/portico-probe/items');
      expect(res.status, await res.clone().text()).toBe(200);
      const echo = (await res.json()) as Echo;
      expect(echo.path).toMatch(/\/portico-probe\/items$/);
      expect(JSON.stringify(echo.headers)).not.toContain('sandbox_');
      // A used form cannot be sent again.
      expect((await submit(good)).status).toBe(400);
      expect((await t.api(`/api/v1/connected-accounts/${accountId}`, { method: 'DELETE' })).status).toBe(200);
      expect((await proxyGet(connection, '/portico-probe/items')).status).toBe(409);
    });
  }

  it('plays a remote MCP provider with the emulated MCP server: discovery, registration, link, tools and refresh', async () => {
    const created = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'sbx-linear-mcp', provider: 'linear_mcp', sandbox: true },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const connection = (await created.json()) as {
      client_id: string;
      scopes: string[];
      mcp_server: Record<string, unknown>;
    };
    // Discovered and registered at the sandbox's own server, never at Linear's.
    expect(connection.mcp_server).toEqual({
      url: `${t.url}/sandbox/mcp/dcr/mcp`,
      resource: `${t.url}/sandbox/mcp/dcr/mcp`,
      issuer: `${t.url}/sandbox/mcp/dcr`,
      registration: 'dynamic',
    });
    expect(connection.scopes).toEqual(['notes:read', 'notes:write']);
    const control = t.gateway.sandbox.control!;
    expect(control.clients('mcp').some((c) => c.clientId === connection.client_id)).toBe(true);

    const flow = await authorize(t, { connection: 'sbx-linear-mcp', identifier: 'user_42' });
    expect(flow.response.status).toBe(200);
    expect(new URL(flow.authorizeUrl).pathname).toBe('/sandbox/mcp/oauth/authorize');
    expect(await accountOf(t, flow.accountId)).toMatchObject({ status: 'ACTIVE', provider: 'linear_mcp' });

    const listed = (await (await t.api('/api/v1/tools?provider=linear_mcp')).json()) as {
      data: Array<{ name: string }>;
    };
    expect(listed.data.map((tool) => tool.name).sort()).toEqual([
      'sbx-linear-mcp__delete-note',
      'sbx-linear-mcp__notes_create',
      'sbx-linear-mcp__notes_list',
      'sbx-linear-mcp__slow_echo',
    ]);
    const made = await executeTool(t, {
      tool_name: 'sbx-linear-mcp__notes_create',
      identifier: 'user_42',
      tool_input: { title: 'Offline' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const notes = async () =>
      ((await (await fetch(`${t.url}/sandbox/mcp/dcr/_notes/mcp-user-1`)).json()) as { notes: unknown[] })
        .notes;
    expect(await notes()).toMatchObject([{ title: 'Offline' }]);

    const before = await version(flow.accountId);
    const expired = await t.api('/api/v1/sandbox/connections/sbx-linear-mcp/expire-tokens', {
      method: 'POST',
    });
    expect(((await expired.json()) as { expired: number }).expired).toBeGreaterThanOrEqual(1);
    const again = await executeTool(t, { tool_name: 'sbx-linear-mcp__notes_list', identifier: 'user_42' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(JSON.stringify(again.body.data)).toContain('Offline');
    expect(await version(flow.accountId)).toBe(before + 1);
  });
});
