import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') {
  throw new Error(
    `The browser test needs Chromium at ${CHROMIUM} under CI=true (.ci/run installs Debian's chromium).`,
  );
}
if (!available)
  console.warn(`[tests] ${CHROMIUM} not found; the browser test is skipped. CI=true makes this an error.`);

describe.runIf(available)('authorization in a real browser', () => {
  let t: TestGateway;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A new authorization link for `identifier` on a sandbox connection `name` (made if missing). */
  async function linkFor(name: string, identifier: string) {
    if ((await t.api(`/api/v1/connections/${name}`)).status === 404)
      await createSandboxConnection(t, name, 'google_calendar');
    const res = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: name, identifier },
    });
    return (await res.json()) as { link: string; connected_account_id: string };
  }

  it('opens the link, clicks Allow on the consent page and reaches the success page', async () => {
    const { link, connected_account_id: id } = await linkFor('browser-cal', 'browser-user');
    const page = await browser.newPage();
    try {
      await page.goto(link);
      // The link's landing page: opening it spent nothing; the person's click does.
      expect(await page.getAttribute('main', 'data-outcome')).toBe('landing');
      await page.click('#continue');
      await page.waitForURL(/\/sandbox\/google\/o\/oauth2\/v2\/auth/);
      await page.click('#allow');
      await page.waitForSelector('main[data-outcome]');
      expect(await page.getAttribute('main', 'data-outcome')).toBe('success');
      expect(await page.textContent('#title')).toBe('Connected');
      expect(page.url()).toContain(`/sso/v1/oauth/`);
    } finally {
      await page.close();
    }
    const account = (await (await t.api(`/api/v1/connected-accounts/${id}`)).json()) as { status: string };
    expect(account.status).toBe('ACTIVE');
  });
  it("does not render the consent page inside another site's iframe (clickjacking)", async () => {
    const { link } = await linkFor('browser-cal', 'framed-user');
    const consentUrl = (await openLink(link)).headers.get('location')!;
    // Another site: "localhost" is not the gateway's 127.0.0.1. As a control, an answer of the
    // gateway's that carries no framing headers (/healthz, JSON) does render in its frame.
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<iframe id="control" src="${t.url}/healthz"></iframe><iframe id="victim" src="${consentUrl}"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const page = await browser.newPage();
    try {
      await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      await page.frameLocator('#control').getByText('"status":"ok"').waitFor();
      const victim = await (await page.waitForSelector('#victim')).contentFrame();
      await victim?.waitForLoadState();
      expect(victim?.url()).not.toBe(consentUrl);
      expect(await page.frameLocator('#victim').locator('#allow').count()).toBe(0);
    } finally {
      await page.close();
      attacker.close();
    }
  });

  it('renders the API documentation under its Content-Security-Policy', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    try {
      await page.goto(`${t.url}/docs`);
      await page.locator('.swagger-ui .info .title', { hasText: 'Portico' }).waitFor();
      await page.locator('.opblock').first().waitFor();
      expect(refused).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
