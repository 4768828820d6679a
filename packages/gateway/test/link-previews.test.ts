import { submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// What a chat app's link preview, a mail scanner or a browser prefetch does to a link must leave it
// for the person it was made for; the pages they see wear the application's name and look.
describe.each(BACKENDS)('links that survive previews, and branded pages, on $name', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(backend);
    await createSandboxConnection(t, 'preview-notion', 'notion');
  });
  afterAll(async () => {
    await t?.close();
  });

  const newLink = async (identifier: string) =>
    (await (
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'preview-notion', identifier },
      })
    ).json()) as { link: string; connected_account_id: string };

  it('HEAD and preview-style GETs spend nothing; the person then connects with the same link', async () => {
    const { link, connected_account_id: id } = await newLink('previewed');
    const head = await fetch(link, { method: 'HEAD' });
    expect(head.status).toBe(200);
    for (const agent of [
      'Slackbot-LinkExpanding 1.0',
      'Mozilla/5.0 (compatible; Microsoft Outlook SafeLinks)',
    ]) {
      const preview = await fetch(link, { headers: { 'user-agent': agent, purpose: 'prefetch' } });
      expect(preview.status).toBe(200);
      const html = await preview.text();
      expect(html).toContain('Connect your Notion account');
      expect(html).toContain('id="continue"');
      expect(preview.headers.get('cache-control')).toBe('no-store');
      expect(preview.headers.get('x-robots-tag')).toBe('noindex');
      // The button's POST is answered with a redirect to the provider: the policy lets it through.
      expect(preview.headers.get('content-security-policy')).toMatch(
        /form-action 'self' http:\/\/127\.0\.0\.1:\d+/,
      );
    }
    expect(await accountOf(t, id)).toMatchObject({ status: 'PENDING_AUTH' });

    const start = await openLink(link);
    expect(start.status).toBe(303);
    const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    expect(done.status).toBe(200);
    expect(await accountOf(t, id)).toMatchObject({ status: 'ACTIVE' });

    // Spent: opening it again says so, and what to do next.
    const again = await fetch(link);
    expect(again.status).toBe(410);
    expect(await again.text()).toMatch(/already been used.*ask it for a new link/s);
    expect((await fetch(link, { method: 'POST', redirect: 'manual' })).status).toBe(410);
  });

  it('the browser that pressed Continue may open the link again until it connects; a preview or another browser may not', async () => {
    const { link, connected_account_id: id } = await newLink('resumed');
    const first = await openLink(link);
    expect(first.status).toBe(303);
    const resume = first.headers.getSetCookie().find((c) => c.startsWith('portico_link='));
    expect(resume).toMatch(/^portico_link=\w+; Path=\/connect\/[^;]+; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const cookie = browserCookie(first);

    // The person stopped at the provider's consent page and clicks the link again.
    const landing = await fetch(link, { headers: { cookie } });
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('id="continue"');
    const again = await fetch(link, { method: 'POST', redirect: 'manual', headers: { cookie } });
    expect(again.status).toBe(303);

    // A preview, another browser, or a made-up cookie still finds the link spent.
    expect((await fetch(link)).status).toBe(410);
    expect((await fetch(link, { method: 'POST', redirect: 'manual' })).status).toBe(410);
    const forged = { cookie: 'portico_link=forged' };
    expect((await fetch(link, { method: 'POST', redirect: 'manual', headers: forged })).status).toBe(410);

    const callback = await submitConsent(again.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callback, {
      redirect: 'manual',
      headers: { cookie: `${cookie}; ${browserCookie(again)}` },
    });
    expect(done.status).toBe(200);
    expect(await accountOf(t, id)).toMatchObject({ status: 'ACTIVE' });
    // Connected: the link is spent for that browser too.
    expect((await fetch(link, { headers: { cookie } })).status).toBe(410);
    expect((await fetch(link, { method: 'POST', redirect: 'manual', headers: { cookie } })).status).toBe(410);
  });

  it('the environment’s name, logo, accent colour and support link are on every page', async () => {
    const bad = await t.api('/api/v1/environment', {
      method: 'PATCH',
      json: { branding: { accent_color: 'red', logo_url: 'http://cdn.example.com/logo.png' } },
    });
    expect(bad.status).toBe(400);
    const paths = ((await bad.json()) as { errors: Array<{ path: string }> }).errors.map((e) => e.path);
    expect(paths).toEqual(['/branding/logo_url', '/branding/accent_color']);

    const branding = {
      display_name: 'Acme Assistant',
      logo_url: 'https://cdn.example.com/acme.png',
      accent_color: '#7c3aed',
      support_url: 'mailto:help@acme.example',
    };
    const set = await t.api('/api/v1/environment', { method: 'PATCH', json: { branding } });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ branding });
    expect(await (await t.api('/api/v1/environment')).json()).toMatchObject({ branding });

    const { link } = await newLink('branded');
    const landing = await fetch(link);
    const html = await landing.text();
    expect(html).toContain('Acme Assistant asks to act on your behalf in Notion');
    expect(html).toContain('src="https://cdn.example.com/acme.png"');
    expect(html).toContain('#7c3aed');
    expect(html).toContain('href="mailto:help@acme.example"');
    expect(landing.headers.get('content-security-policy')).toContain('img-src https:');

    const start = await openLink(link);
    const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    expect(await done.text()).toContain('Acme Assistant');
    const spent = await (await fetch(link)).text();
    expect(spent).toContain('href="mailto:help@acme.example"');

    // API-key providers' form wears it too.
    await createSandboxConnection(t, 'preview-stripe', 'stripe');
    const keyLink = (await (
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'preview-stripe', identifier: 'branded' },
      })
    ).json()) as { link: string };
    const form = await openLink(keyLink.link);
    expect(form.status).toBe(200);
    expect(await form.text()).toMatch(/Acme Assistant will act on your behalf in Stripe/);

    expect((await t.api('/api/v1/environment', { method: 'PATCH', json: { branding: {} } })).status).toBe(
      200,
    );
    expect(await (await t.api('/api/v1/environment')).json()).toMatchObject({ branding: {} });
  });
});
