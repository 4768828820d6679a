import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { authorize, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/** An HTML page no other site may frame (clickjacking), with a policy of its own. */
function expectUnframeable(res: Response, what: string): void {
  expect(res.headers.get('content-type'), what).toMatch(/^text\/html/);
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
  const policy = res.headers.get('content-security-policy') ?? '';
  expect(policy, what).toContain("frame-ancestors 'none'");
  expect(policy, what).toMatch(/default-src 'none'/);
}

describe.each(BACKENDS)('framing headers on the HTML pages of a gateway on $name', (backend) => {
  let t: TestGateway;
  let link: string;
  let connectionId: string;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    connectionId = (await createSandboxConnection(t, 'framed-notion', 'notion')).id;
    const res = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'framed-notion', identifier: 'framed-user' },
    });
    link = ((await res.json()) as { link: string }).link;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('on the hosted flow: a link that cannot be used, a callback that fails, the result page', async () => {
    expectUnframeable(await fetch(`${t.url}/connect/lnk_not-a-real-token`), '/connect/{bad token}');
    expectUnframeable(
      await fetch(`${t.url}/sso/v1/oauth/${connectionId}/callback?code=x&state=forged`),
      'callback with a forged state',
    );
    const done = await authorize(t, { connection: 'framed-notion', identifier: 'framed-user-2' });
    expect(done.response.status).toBe(200);
    expectUnframeable(done.response, 'the success page');
    expect(done.response.headers.get('content-security-policy')).toContain("form-action 'none'");
  });

  it("on the sandbox's consent and error pages, reached through /connect", async () => {
    const start = await openLink(link);
    expect(start.status).toBe(303);
    const consentUrl = new URL(start.headers.get('location')!);
    expect(consentUrl.pathname).toMatch(/^\/sandbox\/notion\//);
    const consent = await fetch(consentUrl);
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('id="allow"');
    expectUnframeable(consent, 'the consent page');
    consentUrl.searchParams.set('client_id', 'nobody');
    const refused = await fetch(consentUrl);
    expect(refused.status).toBe(400);
    expectUnframeable(refused, 'the consent error page');
  });

  it('on the API documentation and the dashboard', async () => {
    for (const path of [
      '/docs',
      '/docs/',
      '/docs/static/oauth2-redirect.html',
      '/dashboard',
      '/dashboard/',
    ]) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      expectUnframeable(res, path);
    }
    // The documentation's scripts still come from the gateway itself.
    const docs = await fetch(`${t.url}/docs/`);
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await docs.text()).toContain('swagger-ui-bundle.js');
  });
});

describe('framing headers on the standalone emulators', () => {
  let emulators: RunningEmulators;
  beforeAll(async () => {
    emulators = await startEmulators();
    emulators.control.registerClient('notion', {
      clientId: 'framed-client',
      clientSecret: 'framed-secret',
      redirectUris: ['http://127.0.0.1:9/callback'],
    });
  });
  afterAll(async () => {
    await emulators?.close();
  });

  it('on the consent page and the error page', async () => {
    const authorizeUrl = new URL(`${emulators.urls.notion}/v1/oauth/authorize`);
    authorizeUrl.search = new URLSearchParams({
      client_id: 'framed-client',
      redirect_uri: 'http://127.0.0.1:9/callback',
      response_type: 'code',
      owner: 'user',
    }).toString();
    const consent = await fetch(authorizeUrl);
    expect(consent.status).toBe(200);
    expectUnframeable(consent, 'the consent page');
    authorizeUrl.searchParams.set('client_id', 'nobody');
    const refused = await fetch(authorizeUrl);
    expect(refused.status).toBe(400);
    expectUnframeable(refused, 'the error page');
  });
});
