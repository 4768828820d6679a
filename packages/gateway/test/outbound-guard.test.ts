import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlockedAddressError,
  checkOutboundUrl,
  guardedLookup,
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
});
