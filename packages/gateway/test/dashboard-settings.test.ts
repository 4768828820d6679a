import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') {
  throw new Error(`The dashboard settings test needs Chromium at ${CHROMIUM} under CI=true.`);
}
if (!available) console.warn(`[tests] ${CHROMIUM} not found; the dashboard settings test is skipped.`);

/** Screenshots for a person to look at (gitignored). */
const SHOTS = fileURLToPath(new URL('../test-output/dashboard/', import.meta.url));
/** The operator's list, for every environment: the settings page shows it read-only. */
const GLOBAL_ENTRY = 'https://global.example.com';

/** The computed text colour of an element (the tests compile without the DOM library). */
const colourOf = (locator: Locator) =>
  locator.evaluate(
    (el) =>
      (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el)
        .color,
  );

interface EnvironmentView {
  id: string;
  name: string;
  redirect_url_allowlist: string[];
  global_redirect_url_allowlist: string[];
  branding: Record<string, string>;
}

describe.runIf(available)('environment settings in the operator dashboard', () => {
  let t: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Uncaught errors and CSP violations of the dashboard page. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestGateway(BACKENDS[0]!, { PORTICO_REDIRECT_URL_ALLOWLIST: GLOBAL_ENTRY });
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
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // A refused request (400) is logged as a failed load: that is what the forms are made for.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function shoot(name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 860 });
  }

  async function environment(): Promise<EnvironmentView> {
    const res = await t.api('/api/v1/environment');
    expect(res.status).toBe(200);
    return (await res.json()) as EnvironmentView;
  }

  it('edits the branding, checks it on a link’s landing page, and removes it', async () => {
    const admin = t.gateway.bootstrapAdmin!;
    await page.goto(`${t.url}/dashboard`);
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const env = await environment();
    expect(await page.locator('#environment-name').textContent()).toContain(env.id);
    // No branding yet: nothing to remove, and the preview shows Portico's plain page.
    expect(await page.getByRole('button', { name: 'Remove branding' }).isDisabled()).toBe(true);
    expect(await page.locator('#preview-message').textContent()).toMatch(/^The application asks/);
    await shoot('settings-empty');

    const displayName = page.getByLabel('Display name', { exact: true });
    const accent = page.getByLabel('Accent colour', { exact: true });
    await displayName.fill('Acme Support Desk');
    await page.getByLabel('Logo URL', { exact: true }).fill('https://cdn.acme.example/logo.png');
    await page.getByLabel('Support link', { exact: true }).fill('mailto:help@acme.example');

    // An invalid colour: the server's field error next to the field, the preview keeps the default.
    await accent.fill('teal');
    expect(await page.locator('#accent-contrast').textContent()).toMatch(/not a #rrggbb colour/);
    await page.getByRole('button', { name: 'Save branding' }).click();
    const accentError = page.locator('[data-error-for="branding.accent_color"]');
    await expect.poll(() => accentError.textContent()).toMatch(/#rrggbb/);
    expect(await accent.getAttribute('aria-invalid')).toBe('true');
    expect(await accent.getAttribute('aria-describedby')).toContain('branding-accent_color-error');
    expect(await page.locator('#branding-form .form-error').textContent()).toMatch(/branding is invalid/);
    expect(await page.locator('#branding-saved').textContent()).toBe('');
    expect((await environment()).branding).toEqual({});
    await shoot('settings-branding-invalid');

    // The colour picker fills the text field; the preview takes the colour and the name at once.
    await page.getByLabel('Accent colour picker').fill('#0f766e');
    expect(await accent.inputValue()).toBe('#0f766e');
    expect(await colourOf(page.locator('#preview-title'))).toBe('rgb(15, 118, 110)');
    expect(await page.locator('#preview-name').textContent()).toBe('Acme Support Desk');
    expect(await page.locator('#preview-logo').isVisible()).toBe(true);
    expect(await page.locator('#preview-support').textContent()).toBe('Need help? Contact Acme Support Desk');

    await page.getByRole('button', { name: 'Save branding' }).click();
    await expect.poll(() => page.locator('#branding-saved').textContent()).toMatch(/Branding saved/);
    expect(await accentError.textContent()).toBe('');
    expect(await accent.getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByRole('button', { name: 'Remove branding' }).isDisabled()).toBe(false);
    await shoot('settings-branding-saved');
    expect((await environment()).branding).toEqual({
      display_name: 'Acme Support Desk',
      logo_url: 'https://cdn.acme.example/logo.png',
      accent_color: '#0f766e',
      support_url: 'mailto:help@acme.example',
    });

    // The page reloaded shows what is stored.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    expect(await displayName.inputValue()).toBe('Acme Support Desk');
    expect(await accent.inputValue()).toBe('#0f766e');

    // An authorization link's landing page, as the end user sees it.
    const created = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'notion-branded', provider: 'notion', sandbox: true },
    });
    expect(created.status).toBe(201);
    const linkRes = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'notion-branded', identifier: 'user_branding' },
    });
    expect(linkRes.status).toBe(201);
    const { link } = (await linkRes.json()) as { link: string };
    const landing = await context.newPage();
    await landing.goto(link);
    await landing.locator('main[data-outcome="landing"]').waitFor();
    expect(await landing.locator('header span').textContent()).toBe('Acme Support Desk');
    expect(await landing.locator('#message').textContent()).toMatch(/^Acme Support Desk asks/);
    expect(await colourOf(landing.locator('#title'))).toBe('rgb(15, 118, 110)');
    expect(await landing.locator('footer a').getAttribute('href')).toBe('mailto:help@acme.example');
    expect(await landing.title()).toContain('Acme Support Desk');

    // Remove branding: confirmed, stored as none, and the landing page is plain again.
    await page.getByRole('button', { name: 'Remove branding' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove branding' }).click();
    await expect.poll(() => page.locator('#branding-saved').textContent()).toMatch(/Branding removed/);
    expect(await displayName.inputValue()).toBe('');
    expect(await accent.inputValue()).toBe('');
    expect(await page.getByRole('button', { name: 'Remove branding' }).isDisabled()).toBe(true);
    expect((await environment()).branding).toEqual({});
    await landing.reload();
    await landing.locator('main[data-outcome="landing"]').waitFor();
    expect(await landing.locator('header').count()).toBe(0);
    expect(await landing.locator('#message').textContent()).not.toContain('Acme Support Desk');
    await landing.close();
  }, 90_000);

  it('edits the redirect URL allow-list beside the read-only global one', async () => {
    await page.goto(`${t.url}/dashboard/#/settings`);
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    expect(await page.locator('#global-allowlist li').allTextContents()).toEqual([GLOBAL_ENTRY]);
    expect(await page.locator('#global-allowlist textarea, #global-allowlist input').count()).toBe(0);
    const entries = page.getByLabel('This environment’s entries');
    expect(await entries.inputValue()).toBe('');
    expect(await page.locator('#allowlist-effect').textContent()).toMatch(/under this entry/);

    // A bad entry on line 3 (after a blank line): the error names the line and the entry.
    await entries.fill('https://app.example.com/\n\nnot a url');
    await page.getByRole('button', { name: 'Save allow-list' }).click();
    const error = page.locator('[data-error-for="redirect_url_allowlist"]');
    await expect.poll(() => error.textContent()).toMatch(/^line 3 \(not a url\): must be an http\(s\) URL/);
    expect(await entries.getAttribute('aria-invalid')).toBe('true');
    expect((await environment()).redirect_url_allowlist).toEqual([]);
    await shoot('settings-allowlist-invalid');

    await entries.fill('https://app.example.com/\nhttps://app.example.com/oauth/\nhttps://app.example.com');
    await page.getByRole('button', { name: 'Save allow-list' }).click();
    await expect
      .poll(() => page.locator('#allowlist-saved').textContent())
      .toMatch(/Allow-list saved: 2 entries, as Portico stores them/);
    expect(await error.textContent()).toBe('');
    // As stored: normalized, without the duplicate.
    expect(await entries.inputValue()).toBe('https://app.example.com\nhttps://app.example.com/oauth/');
    expect(await page.locator('#allowlist-effect').textContent()).toMatch(/under these 3 entries/);
    await shoot('settings-allowlist-saved');
    const stored = await environment();
    expect(stored.redirect_url_allowlist).toEqual([
      'https://app.example.com',
      'https://app.example.com/oauth/',
    ]);
    expect(stored.global_redirect_url_allowlist).toEqual([GLOBAL_ENTRY]);

    // It is in force: a link to elsewhere is refused, one under an entry is made.
    const refused = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: {
        connection_name: 'notion-branded',
        identifier: 'user_allow',
        redirect_url: 'https://evil.example/done',
      },
    });
    expect(refused.status).toBe(400);
    const allowed = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: {
        connection_name: 'notion-branded',
        identifier: 'user_allow',
        redirect_url: 'https://app.example.com/oauth/done',
      },
    });
    expect(allowed.status).toBe(201);

    // After a reload the page shows what is stored; an empty list removes the entries.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    expect(await entries.inputValue()).toBe('https://app.example.com\nhttps://app.example.com/oauth/');
    await entries.fill('');
    await page.getByRole('button', { name: 'Save allow-list' }).click();
    await expect.poll(() => page.locator('#allowlist-saved').textContent()).toMatch(/no entries of its own/);
    expect((await environment()).redirect_url_allowlist).toEqual([]);
  }, 60_000);

  it('sets and removes the sign-in URL of MCP clients that connect with OAuth', async () => {
    const settings = async () => {
      const res = await t.api('/api/v1/mcp/oauth/settings');
      expect(res.status).toBe(200);
      return (await res.json()) as { sign_in_url: string | null; mcp_url: string | null };
    };
    await page.goto(`${t.url}/dashboard/#/settings`);
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const url = page.getByLabel('Sign-in URL', { exact: true });
    expect(await url.inputValue()).toBe('');
    expect(await page.locator('#mcp-oauth-state').textContent()).toMatch(/^OFF/);
    expect(await page.getByRole('button', { name: 'Turn off MCP OAuth' }).isDisabled()).toBe(true);

    await url.fill('https://app.example.com/mcp/sign-in#here');
    await page.getByRole('button', { name: 'Save sign-in URL' }).click();
    const error = page.locator('[data-error-for="sign_in_url"]');
    await expect.poll(() => error.textContent()).toMatch(/fragment/);
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    expect((await settings()).sign_in_url).toBeNull();

    await url.fill('https://app.example.com/mcp/sign-in');
    await page.getByRole('button', { name: 'Save sign-in URL' }).click();
    await expect.poll(() => page.locator('#mcp-oauth-saved').textContent()).toMatch(/Sign-in URL saved/);
    expect(await error.textContent()).toBe('');
    const stored = await settings();
    expect(stored.sign_in_url).toBe('https://app.example.com/mcp/sign-in');
    expect(await page.locator('#mcp-url').textContent()).toBe(stored.mcp_url);
    expect(stored.mcp_url).toMatch(/\/mcp/);
    await shoot('settings-mcp-oauth');

    await page.getByRole('button', { name: 'Turn off MCP OAuth' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Turn off' }).click();
    await expect.poll(() => page.locator('#mcp-oauth-saved').textContent()).toMatch(/MCP OAuth is off/);
    expect(await url.inputValue()).toBe('');
    expect((await settings()).sign_in_url).toBeNull();
  }, 60_000);

  it('ran without a script error or a CSP violation', () => {
    // The preview's colour goes through the CSSOM, which the strict style-src allows.
    expect(pageErrors).toEqual([]);
  });
});
