import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlockedAddressError,
  checkOutboundUrl,
  guardedLookup,
  isPublicAddress,
  OutboundRefusedError,
} from '../src/upstream/outbound-guard.js';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

describe('the outbound guard', () => {
  const refused = (url: string, policy: Parameters<typeof checkOutboundUrl>[1]) => {
    try {
      checkOutboundUrl(url, policy);
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(OutboundRefusedError);
      return (error as OutboundRefusedError).reason;
    }
  };

  it('refuses http, credentials before the host, private literals, local names, the gateway itself and other domains', () => {
    const strict = { allowPrivate: false };
    expect(refused('http://api.example.com/', strict)).toContain('https');
    expect(refused('http://localhost:@127.0.0.2/', { allowPrivate: true })).toContain('credentials');
    expect(refused('https://user:pw@api.example.com/', strict)).toContain('credentials');
    for (const host of [
      '127.0.0.1',
      '10.0.0.5',
      '169.254.169.254',
      '[::1]',
      '[::ffff:127.0.0.1]',
      'db.internal',
    ])
      expect(refused(`https://${host}/`, strict), host).toContain('private');
    expect(
      refused('https://gw.example.com/proxy/x', {
        allowPrivate: false,
        selfOrigins: ['https://gw.example.com'],
      }),
    ).toContain('gateway itself');
    const domains = { allowPrivate: false, domains: ['salesforce.com'] };
    expect(refused('https://evilsalesforce.com/', domains)).toContain('outside');
    expect(refused('https://attacker.example/', domains)).toContain('outside');
    expect(refused('https://acme.my.salesforce.com/services', domains)).toBeUndefined();
    // An operator's allowance for a provider lets loopback http through, as the sandbox and tests need.
    expect(refused('http://127.0.0.1:4010/api', { allowPrivate: true })).toBeUndefined();
  });

  it('checks the addresses a name resolves to when the socket connects', async () => {
    const resolved = await new Promise<unknown>((resolve) =>
      guardedLookup(false)('localhost', { all: true }, (err, address) => resolve(err ?? address)),
    );
    expect(resolved).toBeInstanceOf(BlockedAddressError);
    const allowed = await new Promise<unknown>((resolve) =>
      guardedLookup((host) => host === 'localhost')('localhost', { all: true }, (err, address) =>
        resolve(err ?? address),
      ),
    );
    expect(Array.isArray(allowed)).toBe(true);
  });
});

describe.each(BACKENDS)('server-side requests on a caller’s word on $name', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(backend);
  });
  afterAll(async () => {
    await t?.close();
  });
  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

  it('an imported instance_url or api_domain must stay within the provider’s domains', async () => {
    for (const [name, provider] of [
      ['sf-prod', 'salesforce'],
      ['pd-prod', 'pipedrive'],
    ]) {
      const created = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name, provider, client_id: 'cid', client_secret: 'secret' },
      });
      expect(created.status, await created.clone().text()).toBe(201);
    }
    const importing = (connection: string, metadata: Record<string, unknown>) =>
      t.api('/api/v1/connected-accounts/import', {
        method: 'POST',
        json: {
          connection_name: connection,
          identifier: 'u1',
          access_token: 'at-1',
          verify: false,
          metadata,
        },
      });
    for (const instance of [
      'https://attacker.example',
      'http://127.0.0.1:9',
      'https://x:y@na1.salesforce.com',
    ]) {
      const bad = await importing('sf-prod', { instance_url: instance });
      expect(bad.status, instance).toBe(400);
      const problem = await json(bad);
      expect(problem.code).toBe('invalid_input');
      expect((problem.errors as Array<{ path: string }>)[0]!.path).toBe('/metadata/instance_url');
    }
    const pipedrive = await importing('pd-prod', { api_domain: 'https://pipedrive.attacker.example' });
    expect(pipedrive.status).toBe(400);
    expect((await importing('sf-prod', { instance_url: 'https://acme.my.salesforce.com' })).status).toBe(201);
    expect((await importing('pd-prod', { api_domain: 'https://acme.pipedrive.com' })).status).toBe(201);
  });

  it('refuses a definition whose URL hides a host behind credentials, and never sends to the gateway itself', async () => {
    const base = { key: 'loopy', display_name: 'Loopy', auth: { kind: 'api_key' } };
    const hidden = await t.api('/api/v1/providers', {
      method: 'POST',
      json: { ...base, api: { base_url: 'http://localhost:@127.0.0.2/api' } },
    });
    expect(hidden.status).toBe(400);
    expect(JSON.stringify(await json(hidden))).toContain('/api/base_url');
    // A console URL is rendered as a link: javascript: (or any scheme but https) is refused.
    const script = await t.api('/api/v1/providers', {
      method: 'POST',
      json: {
        ...base,
        api: { base_url: 'https://api.loopy.example' },
        setup: { console: { name: 'Console', url: 'javascript:alert(1)' } },
      },
    });
    expect(script.status).toBe(400);
    expect(JSON.stringify(await json(script))).toContain('/setup/console/url');

    // Loopback http is allowed in a definition (local development), but the guard refuses it when
    // sending unless an operator allowed private targets for this provider: no loop through /proxy.
    const own = new URL(t.url);
    const loopy = await t.api('/api/v1/providers', {
      method: 'POST',
      json: { ...base, api: { base_url: `http://127.0.0.1:${own.port}/proxy` } },
    });
    expect(loopy.status, await loopy.clone().text()).toBe(201);
    const connection = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'loopy', provider: 'loopy' },
    });
    expect(connection.status).toBe(201);
    const imported = await t.api('/api/v1/connected-accounts/import', {
      method: 'POST',
      json: { connection_name: 'loopy', identifier: 'u1', api_key: 'k-1', verify: false },
    });
    expect(imported.status).toBe(502);
    const problem = await json(imported);
    expect(problem.code).toBe('upstream_error');
    expect(problem.detail).toContain('PORTICO_OUTBOUND_ALLOW_PRIVATE=loopy');
  });

  it('token, revocation and user-info requests are checked as the socket connects: a name resolving to loopback is refused', async () => {
    // A name that passes the URL check (no literal address, no local name) but resolves to a
    // private address, as a rebinding name would when the request is made: the machine's own name.
    const host = hostname();
    const addresses = await lookup(host, { all: true });
    expect(
      addresses.some((a) => !isPublicAddress(a.address)),
      `${host} must resolve to a loopback or private address for this test`,
    ).toBe(true);
    // Whatever connects here got past the guard.
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    const base = `https://${host}:${(listener.address() as net.AddressInfo).port}`;
    try {
      const keys = await t.api('/api/v1/providers', {
        method: 'POST',
        json: {
          key: 'rebound_keys',
          display_name: 'Rebound Keys',
          auth: { kind: 'api_key' },
          api: { base_url: `${base}/api` },
          user_info: { url: `${base}/api/me` },
        },
      });
      expect(keys.status, await keys.clone().text()).toBe(201);
      const oauth = await t.api('/api/v1/providers', {
        method: 'POST',
        json: {
          key: 'rebound_oauth',
          display_name: 'Rebound OAuth',
          auth: {
            kind: 'oauth2',
            authorization_url: `${base}/authorize`,
            token_url: `${base}/token`,
            revocation: { url: `${base}/revoke`, style: 'form' },
          },
          api: { base_url: `${base}/api` },
        },
      });
      expect(oauth.status, await oauth.clone().text()).toBe(201);
      for (const json of [
        { name: 'rebound-keys', provider: 'rebound_keys' },
        { name: 'rebound-oauth', provider: 'rebound_oauth', client_id: 'cid', client_secret: 'secret' },
      ]) {
        const created = await t.api('/api/v1/connections', { method: 'POST', json });
        expect(created.status, await created.clone().text()).toBe(201);
      }
      // User-info: the key is checked before it is stored.
      const checked = await t.api('/api/v1/connected-accounts/import', {
        method: 'POST',
        json: { connection_name: 'rebound-keys', identifier: 'u1', api_key: 'k-1' },
      });
      expect(checked.status).toBe(503);
      expect((await json(checked)).detail).toContain('private or reserved address');
      // Token: an expired access token is refreshed at the first proxied call.
      const imported = await t.api('/api/v1/connected-accounts/import', {
        method: 'POST',
        json: {
          connection_name: 'rebound-oauth',
          identifier: 'u1',
          access_token: 'at-1',
          refresh_token: 'rt-1',
          expires_in: 0,
        },
      });
      expect(imported.status, await imported.clone().text()).toBe(201);
      const accountId = (await json(imported)).id as string;
      const proxied = await t.api('/proxy/api/things', {
        headers: { connection_name: 'rebound-oauth', identifier: 'u1' },
      });
      expect(proxied.status).toBeGreaterThanOrEqual(500);
      expect((await json(proxied)).detail).toContain('private or reserved address');
      // Revocation: disconnecting revokes at the provider, which is refused the same way.
      expect((await t.api(`/api/v1/connected-accounts/${accountId}`, { method: 'DELETE' })).status).toBe(200);
      const disconnected = t.logs.find((l) => l.msg === 'account disconnected' && l.account_id === accountId);
      expect(disconnected?.revoked).toBe(false);
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});
