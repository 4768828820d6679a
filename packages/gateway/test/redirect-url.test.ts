import { submitConsent } from '@portico/emulators';
import { ScalekitClient } from '@scalekit-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Portico } from '../../sdk/src/index.js';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * redirect_url and user_verify_url values that pass a JSON-schema `uri` but are no URL a browser
 * can be sent to: refused with 400 when a link is made, and never a 500 at the callback, where the
 * link's places are checked again against the environment's current allow-list.
 */
const NOT_URLS = [
  'https://a%2fb.example/',
  'https://app.example.com%40evil.example/',
  'http://x:99999/',
  'https://%65vil.example/',
  'https://user:secret@app.example.com/',
  'https:///app.example.com/',
  'http://app.example.com:0/',
];
const APP = 'https://app.example.com';

describe.each(BACKENDS)('redirect URLs that are not URLs ($name)', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await createSandboxConnection(t, 'notion-sandbox', 'notion');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const createLink = (identifier: string, extra: Record<string, string>) =>
    t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'notion-sandbox', identifier, ...extra },
    });
  const allowOnly = async (entries: string[]) => {
    const res = await t.api('/api/v1/environment', {
      method: 'PATCH',
      json: { redirect_url_allowlist: entries },
    });
    expect(res.status).toBe(200);
  };
  /** Opens the link and consents like a browser; the gateway's answer at the callback. */
  const consent = async (link: string) => {
    const start = await openLink(link);
    expect(start.status).toBe(303);
    const callbackUrl = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    return fetch(callbackUrl, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
  };
  const linkOf = async (res: Response) => {
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { link: string; connected_account_id: string };
  };
  const expectResultPage = async (res: Response, outcome: 'success' | 'error') => {
    const html = await res.text();
    expect(res.status, html.slice(0, 300)).toBe(outcome === 'success' ? 200 : 400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(html).toContain(`data-outcome="${outcome}"`);
    return html;
  };

  it('refuses them at link creation with 400 invalid_input naming the field, with or without an allow-list', async () => {
    for (const allowlist of [[], [APP]]) {
      await allowOnly(allowlist);
      for (const field of ['redirect_url', 'user_verify_url']) {
        for (const url of NOT_URLS) {
          const res = await createLink('u', { [field]: url });
          const problem = (await res.json()) as {
            code: string;
            detail: string;
            errors: Array<{ path: string; message: string }>;
          };
          expect(res.status, `${field} ${url} with [${allowlist}]: ${JSON.stringify(problem)}`).toBe(400);
          expect(res.headers.get('content-type')).toContain('application/problem+json');
          expect(problem.code).toBe('invalid_input');
          expect(problem.errors).toEqual([{ path: `/${field}`, message: expect.stringMatching(/^must /) }]);
          expect(problem.detail).toMatch(new RegExp(`^${field} must .*: give the absolute http\\(s\\) URL`));
        }
      }
      // A good URL is still accepted.
      expect((await createLink('u', { redirect_url: `${APP}/done?x=1` })).status).toBe(201);
    }
    await allowOnly([]);
  });

  it('says what is wrong with each', async () => {
    const detail = async (url: string) =>
      ((await (await createLink('u', { redirect_url: url })).json()) as { detail: string }).detail;
    expect(await detail('https://a%2fb.example/')).toMatch(/without percent-escapes/);
    expect(await detail('https://user:secret@app.example.com/')).toMatch(/user name or password/);
    expect(await detail('http://x:99999/')).toMatch(/port from 1 to 65535/);
    expect(await detail('https:///app.example.com/')).toMatch(/must have a host/);
  });

  it('refuses them through the Portico SDK and over gRPC too', async () => {
    const portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    await expect(
      portico.getAuthorizationLink({
        connectionName: 'notion-sandbox',
        identifier: 'sdk',
        redirectUrl: 'https://app.example.com%40evil.example/',
      }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    const sk = new ScalekitClient(t.url, t.clientId, t.clientSecret);
    await expect(
      sk.actions.getAuthorizationLink({
        connectionName: 'notion-sandbox',
        identifier: 'grpc',
        userVerifyUrl: 'http://x:99999/',
      }),
    ).rejects.toMatchObject({ grpcStatus: 3, message: expect.stringContaining('user_verify_url') });
  });

  it('shows the result page, account connected, when the allow-list no longer allows the link’s redirect_url', async () => {
    await allowOnly([APP]);
    const { link, connected_account_id } = await linkOf(
      await createLink('tightened', { redirect_url: `${APP}/done`, state: 's' }),
    );
    await allowOnly(['https://elsewhere.example.com']);
    const html = await expectResultPage(await consent(link), 'success');
    expect(html).toContain('Connected');
    expect((await accountOf(t, connected_account_id)).status).toBe('ACTIVE');
    await allowOnly([]);
  });

  it('shows the result page, never a 500, for a link stored with a redirect_url that is not a URL', async () => {
    // Links made before URLs were checked hold such values: write them as such a link would have.
    for (const [i, url] of NOT_URLS.entries()) {
      const { link, connected_account_id } = await linkOf(
        await createLink(`stored-${i}`, { redirect_url: `${APP}/done` }),
      );
      await t.db.query('UPDATE authorization_links SET redirect_url = $1 WHERE account_id = $2', [
        url,
        connected_account_id,
      ]);
      await expectResultPage(await consent(link), 'success');
      expect((await accountOf(t, connected_account_id)).status, url).toBe('ACTIVE');
    }
  });

  it('connects nothing when the link’s user_verify_url is no longer allowed, and says so', async () => {
    await allowOnly([APP]);
    const { link, connected_account_id } = await linkOf(
      await createLink('verify-tightened', { user_verify_url: `${APP}/verify` }),
    );
    await allowOnly(['https://elsewhere.example.com']);
    const html = await expectResultPage(await consent(link), 'error');
    expect(html).toContain('data-code="user_verify_url_not_allowed"');
    expect((await accountOf(t, connected_account_id)).status).toBe('PENDING_AUTH');
    await allowOnly([]);
  });

  it('answers verify with redirect_url null when the link’s redirect_url is no longer allowed', async () => {
    await allowOnly([APP]);
    const { link, connected_account_id } = await linkOf(
      await createLink('verify-redirect', { user_verify_url: `${APP}/verify`, redirect_url: `${APP}/after` }),
    );
    const done = await consent(link);
    expect(done.status).toBe(302);
    const authRequestId = new URL(done.headers.get('location')!).searchParams.get('auth_request_id');
    await allowOnly([`${APP}/verify`]);
    const res = await t.api('/api/v1/connected-accounts/verify', {
      method: 'POST',
      json: { auth_request_id: authRequestId, identifier: 'verify-redirect' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      connected_account: { id: connected_account_id, status: 'ACTIVE' },
      redirect_url: null,
    });
    await allowOnly([]);
  });
});
