import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection } from './helpers/flow.js';
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
  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('opens the link, clicks Allow on the consent page and reaches the success page', async () => {
    await createSandboxConnection(t, 'browser-cal', 'google_calendar');
    const res = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'browser-cal', identifier: 'browser-user' },
    });
    const { link, connected_account_id: id } = (await res.json()) as {
      link: string;
      connected_account_id: string;
    };
    const browser = await chromium.launch({
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
    try {
      const page = await browser.newPage();
      await page.goto(link);
      expect(page.url()).toContain('/sandbox/google/o/oauth2/v2/auth');
      await page.click('#allow');
      await page.waitForSelector('main[data-outcome]');
      expect(await page.getAttribute('main', 'data-outcome')).toBe('success');
      expect(await page.textContent('#title')).toBe('Connected');
      expect(page.url()).toContain(`/sso/v1/oauth/`);
    } finally {
      await browser.close();
    }
    const account = (await (await t.api(`/api/v1/connected-accounts/${id}`)).json()) as { status: string };
    expect(account.status).toBe('ACTIVE');
  });
});
