import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') {
  throw new Error(`The dashboard browser test needs Chromium at ${CHROMIUM} under CI=true.`);
}
if (!available) console.warn(`[tests] ${CHROMIUM} not found; the dashboard browser test is skipped.`);

/** Screenshots of every page, desktop and phone, for a person to look at (gitignored). */
const SHOTS = fileURLToPath(new URL('../test-output/dashboard/', import.meta.url));
const SECRET = 'client-secret-that-must-never-come-back-7f3a';

describe.runIf(available)('the operator dashboard in a real browser', () => {
  let t: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every response body the page received, to search for secrets. */
  const bodies: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestGateway(BACKENDS[0]!);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page = await context.newPage();
    page.on('response', (res) => {
      void res
        .text()
        .then((text) => bodies.push(text))
        .catch(() => {});
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Saves the current page at desktop size and at a 390 px phone width. */
  async function shoot(name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 860 });
  }

  const go = async (hash: string, heading: string | RegExp) => {
    const url = `${t.url}/dashboard/#${hash}`;
    // The same URL again is no navigation at all: load the page afresh instead.
    if (page.url() === url) await page.reload();
    else await page.goto(url);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  it('walks a new operator from sign-in to a disconnected account', async () => {
    const admin = t.gateway.bootstrapAdmin!;
    await page.goto(`${t.url}/dashboard`);
    await page.getByLabel('Username').waitFor();
    await shoot('sign-in');

    // A wrong password: the problem's detail is shown, nothing else happens.
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.locator('#sign-in .form-error').textContent())
      .toMatch(/username or password is wrong/);

    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await page.locator('#count-connections').textContent()).toBe('0');
    const totalBefore = Number(await page.locator('#executions-total').getAttribute('data-total'));
    await shoot('overview-empty');

    // The session cookie is out of reach of scripts; a call without the CSRF header is refused.
    expect(await page.evaluate('document.cookie')).toBe('');
    const forged = await page.evaluate(async () => {
      const res = await fetch('/api/v1/connections', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'forged', provider: 'notion', sandbox: true }),
      });
      return { status: res.status, body: (await res.json()) as { code: string } };
    });
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe('csrf_failed');

    // An invalid form: the field error appears next to the field.
    await go('/connections/new', 'New connection');
    await page.getByLabel('Provider', { exact: true }).selectOption('notion');
    await page.getByLabel('Name', { exact: true }).fill('bad name!');
    await page.getByLabel(/^Sandbox/).check();
    await page.getByRole('button', { name: 'Create connection' }).click();
    const nameError = page.locator('[data-error-for="name"]');
    await expect.poll(() => nameError.textContent()).toMatch(/expected form/);
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-describedby')).toContain(
      'name-error',
    );
    await shoot('connection-invalid');

    // A sandbox connection.
    await page.getByLabel('Name', { exact: true }).fill('notion-sandbox');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { level: 1, name: 'notion-sandbox' }).waitFor();
    const redirectUri = await page.locator('#redirect-uri').textContent();
    expect(redirectUri).toMatch(/\/sso\/v1\/oauth\/conn_\w+\/callback$/);
    await page.getByRole('button', { name: 'Copy redirect URI' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(redirectUri);
    await shoot('connection-detail');

    // A live connection whose secret must never come back, with the provider's setup steps.
    await go('/connections/new', 'New connection');
    await page.getByLabel('Provider', { exact: true }).selectOption('google_sheets');
    await page.getByLabel('Name', { exact: true }).fill('sheets-live');
    await page.getByLabel('Client ID', { exact: true }).fill('123-abc.apps.googleusercontent.com');
    await page.getByLabel('Client secret', { exact: true }).fill(SECRET);
    await shoot('connection-new');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { level: 1, name: 'sheets-live' }).waitFor();
    expect(await page.locator('ol.steps').textContent()).toContain('Google Sheets API');
    expect(await page.getByLabel('Client secret', { exact: true }).inputValue()).toBe('');
    await shoot('connection-live');

    // An authorization link, authorized on the sandbox consent page in another tab.
    await go('/accounts?connection_name=notion-sandbox', 'Connected accounts');
    await page.getByLabel('Identifier', { exact: true }).first().fill('user_42');
    await page.getByRole('button', { name: 'Generate link' }).click();
    const link = (await page.locator('#auth-link').getAttribute('href'))!;
    expect(link).toMatch(/\/connect\//);
    expect(await page.locator('.qr svg').count()).toBe(1);
    await shoot('accounts-link');
    const consent = await context.newPage();
    await consent.goto(link);
    await consent.click('#continue');
    await consent.click('#allow');
    await consent.waitForSelector('main[data-outcome="success"]');
    await consent.close();

    await go('/accounts?connection_name=notion-sandbox', 'Connected accounts');
    await page.getByRole('link', { name: 'user_42' }).click();
    await page.getByRole('heading', { level: 1, name: 'Account user_42' }).waitFor();
    expect(await page.locator('#account-status').textContent()).toBe('ACTIVE');
    await shoot('account-detail');

    // The playground: an invalid input highlights the field, then a run succeeds.
    await go('/tools?provider=notion', 'Tools');
    await shoot('tools');
    await page.getByRole('link', { name: 'notes_user_list' }).click();
    await page.getByRole('heading', { level: 1, name: 'notes_user_list' }).waitFor();
    await page.getByLabel('Identifier', { exact: true }).fill('user_42');
    await page.getByLabel(/^page_size/).fill('0');
    await page.getByRole('button', { name: 'Run tool' }).click();
    await page.locator('#run-problem').waitFor();
    expect(await page.getByLabel(/^page_size/).getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('[data-error-for="page_size"]').textContent()).toMatch(/\S/);
    await shoot('playground-problem');
    await page.getByLabel(/^page_size/).fill('5');
    await page.getByRole('button', { name: 'Run tool' }).click();
    await page.locator('#run-output').waitFor();
    expect(await page.locator('#run-output').textContent()).toContain('results');
    await shoot('playground-result');

    // The execution is listed, and the overview chart moved.
    await go('/executions', 'Executions');
    expect(await page.locator('table tbody tr').count()).toBe(2);
    await shoot('executions');
    await page.locator('table tbody tr a').first().click();
    await page.getByRole('heading', { level: 1, name: /^Execution exec_/ }).waitFor();
    await shoot('execution-detail');
    await go('/overview', 'Overview');
    expect(Number(await page.locator('#executions-total').getAttribute('data-total'))).toBe(totalBefore + 2);
    expect(await page.locator('#count-active').textContent()).toBe('1');
    await shoot('overview');

    // Gateway clients: the secret is shown once.
    await go('/clients', 'Gateway clients');
    await page.getByLabel('Name').fill('dashboard-made');
    await page.getByRole('button', { name: 'Create client' }).click();
    expect(await page.locator('#new-client-secret').textContent()).toMatch(/^pcs_/);
    await shoot('clients');

    // Disconnect.
    await go('/accounts?connection_name=notion-sandbox', 'Connected accounts');
    await page.getByRole('link', { name: 'user_42' }).click();
    await page.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disconnect' }).click();
    await expect.poll(() => page.locator('#account-status').textContent()).toBe('DISCONNECTED');

    // The events of that walk, newest first: the disconnection on top, the authorization below.
    await go('/events', 'Events');
    const types = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(types[0]).toBe('connected_account.disconnected');
    expect(types).toContain('connected_account.authorized');
    expect(types).toContain('connection.created');
    await page.getByLabel('Type').selectOption('connection.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(async () => new Set(await page.locator('tbody tr td:nth-child(2)').allTextContents()))
      .toEqual(new Set(['connection.created']));
    await shoot('events');

    // Deleting a connection says how many accounts it disconnects.
    await go('/connections', 'Connections');
    await shoot('connections');
    await page
      .getByRole('row', { name: /sheets-live/ })
      .getByRole('button', { name: 'Delete' })
      .click();
    expect(await page.locator('#confirm-text').textContent()).toMatch(/disconnects 0 connected accounts/);
    await shoot('connection-delete');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    // The client secret never came back: not in the page, not in any response.
    expect(await page.content()).not.toContain(SECRET);
    expect(bodies.length).toBeGreaterThan(20);
    expect(bodies.filter((b) => b.includes(SECRET))).toEqual([]);
  }, 120_000);

  it('folds the version overrides away in the playground, behind "Advanced"', async () => {
    await go('/tools/notes_user_list', 'notes_user_list');
    const advanced = page.locator('#advanced-overrides');
    expect(await advanced.getAttribute('open')).toBeNull();
    for (const name of ['schema_version', 'tool_version', 'upstream_version']) {
      expect(await page.getByLabel(new RegExp(`^${name}`)).isVisible(), name).toBe(false);
    }
    expect(await page.getByLabel(/^page_size/).isVisible()).toBe(true);
    await advanced.locator('summary').click();
    expect(await page.getByLabel(/^schema_version/).isVisible()).toBe(true);
    await shoot('playground-advanced');
  });

  it('draws the page the operator went to, not a slower one asked for before it', async () => {
    // The overview's figures are held back until the operator has moved on to the executions.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/v1/executions/stats*', async (r) => {
      await held;
      await r.continue().catch(() => {});
    });
    // Settled either way: answered late (as a slow gateway would), or abandoned by the page.
    const settled = new Promise<void>((resolve) => {
      const done = (req: { url(): string }) => {
        if (req.url().includes('/executions/stats')) resolve();
      };
      page.on('requestfinished', done);
      page.on('requestfailed', done);
    });
    try {
      const asked = page.waitForRequest('**/api/v1/executions/stats*', { timeout: 10_000 });
      await page.goto(`${t.url}/dashboard/#/overview`);
      await asked;
      await page.evaluate("location.hash = '#/executions'");
      await page.getByRole('heading', { level: 1, name: 'Executions' }).waitFor({ timeout: 10_000 });
      release();
      await settled;
      // What the late answer would draw is drawn within a task or two of its arrival.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
      expect(await page.getByRole('heading', { level: 1, name: 'Executions' }).count()).toBe(1);
      expect(await page.getByRole('heading', { level: 1, name: 'Overview' }).count()).toBe(0);
    } finally {
      release();
      await page.unroute('**/api/v1/executions/stats*');
    }
  });

  it('after sign-in shows the page the address names, and says how admins are added', async () => {
    await go('/overview', 'Overview');
    await page.locator('#sign-out').click();
    await page.getByLabel('Username').waitFor();
    await page.goto(`${t.url}/dashboard/#/executions`);
    await page.getByLabel('Username').waitFor();
    const help = await page.locator('#sign-in-help').textContent();
    expect(help).toContain('Admins page');
    expect(help).toContain('portico admins reset-password');
    expect(help).not.toContain('portico admins create');
    const admin = t.gateway.bootstrapAdmin!;
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Executions' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/executions');
  });
});
