import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') {
  throw new Error(`The dashboard providers test needs Chromium at ${CHROMIUM} under CI=true.`);
}
if (!available) console.warn(`[tests] ${CHROMIUM} not found; the dashboard providers test is skipped.`);

/** Screenshots for a person to look at (gitignored). */
const SHOTS = fileURLToPath(new URL('../test-output/dashboard/', import.meta.url));
const API_KEY = 'acme-key-that-must-never-come-back-51c9';

/** A custom API-key provider with a connection parameter. */
const ACME = {
  key: 'acme_crm',
  display_name: 'Acme CRM',
  category: 'CRM',
  docs_url: 'https://docs.acme.example/api/auth',
  auth: { kind: 'api_key', label: 'Acme API key', help: 'Settings → API keys in Acme.' },
  api: { base_url: 'https://{subdomain}.acme.example/api' },
  parameters: [
    {
      name: 'subdomain',
      source: 'connection',
      label: 'Acme subdomain',
      description: 'acme for acme.acme.example',
      pattern: '^[a-z0-9-]+$',
    },
  ],
  user_info: { url: 'https://{subdomain}.acme.example/api/me', id: 'id', label: 'email' },
  setup: {
    console: { name: 'Acme settings', url: 'https://app.acme.example/settings/api' },
    steps: ['Each end user creates an API key under Settings → API keys in Acme.'],
    scopes: [],
  },
};

describe.runIf(available)('providers in the operator dashboard', () => {
  let t: TestGateway;
  let browser: Browser;
  let page: Page;
  /** Every response body the page received, to search for the imported key. */
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
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
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

  async function shoot(name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 860 });
  }

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
  const go = async (hash: string, name: string | RegExp) => {
    const url = `${t.url}/dashboard/#${hash}`;
    if (page.url() === url) await page.reload();
    else await page.goto(url);
    await heading(name).waitFor();
  };
  const definitionErrors = () => page.locator('#definition-errors li').allTextContents();

  it('lists, creates and uses a custom provider, and imports an API key', async () => {
    const admin = t.gateway.bootstrapAdmin!;
    await page.goto(`${t.url}/dashboard`);
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Overview').waitFor();

    // The list: built-in providers with their auth kind, category and docs.
    await page.getByRole('navigation').getByRole('link', { name: 'Providers' }).click();
    await heading('Providers').waitFor();
    const slackRow = page.locator('tr[data-provider="slack"]');
    await expect.poll(() => slackRow.textContent()).toContain('Slack');
    expect(await slackRow.textContent()).toContain('OAuth 2.0');
    expect(await slackRow.textContent()).toContain('built-in');
    expect(await slackRow.getByRole('link', { name: /Docs/ }).getAttribute('href')).toMatch(/^https:\/\//);
    const builtIn = await page.locator('tbody tr').count();
    expect(builtIn).toBeGreaterThanOrEqual(30);
    expect(await page.locator('#provider-count').textContent()).toBe(
      `${builtIn} of ${builtIn} providers (${builtIn} built-in, 0 custom)`,
    );
    await page.getByLabel('Filter').fill('notion');
    await expect.poll(() => page.locator('tbody tr:not([hidden])').count()).toBeLessThan(builtIn);
    expect(await page.locator('tr[data-provider="notion"]').isVisible()).toBe(true);
    expect(await slackRow.isVisible()).toBe(false);
    await shoot('providers');

    // A built-in provider: its steps with {redirect_uri} explained, its scopes and its definition.
    await page.getByLabel('Filter').fill('');
    await slackRow.getByRole('link', { name: 'Slack', exact: true }).click();
    await heading('Slack').waitFor();
    expect(await page.locator('#provider-steps li').count()).toBeGreaterThan(1);
    expect(await page.locator('#provider-steps code.placeholder').first().textContent()).toBe(
      '{redirect_uri}',
    );
    expect(await page.locator('#provider-redirect-note').textContent()).toContain(
      `${t.url}/sso/v1/oauth/{connection_id}/callback`,
    );
    expect(await page.locator('#provider-scopes tbody tr').count()).toBeGreaterThan(0);
    expect(JSON.parse((await page.locator('#definition-json').textContent())!).key).toBe('slack');
    expect(await page.locator('#delete-provider').count()).toBe(0);
    await shoot('provider-built-in');

    // A built-in definition as the start of a custom one: another key, nothing built-in only.
    await page.getByRole('link', { name: 'Use as a template for a custom provider' }).click();
    await heading('Providers').waitFor();
    const definition = page.getByLabel('Definition (JSON)');
    await expect.poll(() => definition.inputValue()).toContain('"slack_custom"');
    const template = JSON.parse(await definition.inputValue()) as Record<string, unknown>;
    expect(template.display_name).toBe('Slack');
    expect(template.tool_prefix).toBeUndefined();
    expect((template.sandbox as { emulator?: string } | undefined)?.emulator).toBeUndefined();

    // A definition that is not JSON, then one the server refuses: every field error is listed.
    await go('/providers', 'Providers');
    await definition.fill('{"key": ');
    await page.getByRole('button', { name: 'Create provider' }).click();
    await expect.poll(definitionErrors).toEqual(['/: is not valid JSON']);
    await definition.fill(
      JSON.stringify({
        ...ACME,
        key: 'Acme CRM',
        auth: { kind: 'api_key', colour: 'red' },
        api: { base_url: 'http://acme.example' },
      }),
    );
    await page.getByRole('button', { name: 'Create provider' }).click();
    await expect.poll(async () => (await definitionErrors()).length).toBeGreaterThan(1);
    const errors = await definitionErrors();
    expect(errors.some((e) => e.startsWith('/key: '))).toBe(true);
    expect(errors.some((e) => e.startsWith('/api/base_url: '))).toBe(true);
    expect(await definition.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#create-provider .form-error').textContent()).toMatch(/\S/);
    await shoot('provider-invalid');

    // A valid custom API-key provider: created, then listed as custom.
    await definition.fill(JSON.stringify(ACME, null, 2));
    await page.getByRole('button', { name: 'Create provider' }).click();
    await heading('Acme CRM').waitFor();
    expect(await page.locator('#provider-details').textContent()).toContain('custom');
    expect(await page.locator('#provider-parameters').textContent()).toContain('subdomain');
    expect(await page.locator('#provider-steps').textContent()).toContain('Settings → API keys');
    await go('/providers', 'Providers');
    const acmeRow = page.locator('tr[data-provider="acme_crm"]');
    expect(await acmeRow.textContent()).toContain('Acme CRM');
    expect(await acmeRow.textContent()).toContain('API key');
    expect(await acmeRow.textContent()).toContain('custom');
    expect(await acmeRow.textContent()).toContain('CRM');
    expect(await page.locator('#provider-count').textContent()).toBe(
      `${builtIn + 1} of ${builtIn + 1} providers (${builtIn} built-in, 1 custom)`,
    );

    // The new-connection form for an OAuth provider: its steps, the redirect URI to come, credentials.
    await go('/connections/new', 'New connection');
    await page.getByLabel('Provider', { exact: true }).selectOption('notion');
    expect(await page.locator('#setup-steps').textContent()).toContain('notion.so/my-integrations');
    expect(await page.locator('#redirect-note').textContent()).toContain(
      '/sso/v1/oauth/{connection_id}/callback',
    );
    expect(await page.getByLabel('Client ID', { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('#parameters').isVisible()).toBe(false);

    // …and for the API-key provider: no client credentials nor scopes, its parameter instead.
    await page.getByLabel('Provider', { exact: true }).selectOption('acme_crm');
    expect(await page.locator('#setup-steps').textContent()).toContain('Settings → API keys');
    expect(await page.locator('#provider-setup').textContent()).toContain('No client ID, secret or scopes');
    expect(await page.getByLabel('Client ID', { exact: true }).isVisible()).toBe(false);
    expect(await page.getByLabel('Client secret', { exact: true }).isVisible()).toBe(false);
    expect(await page.locator('#oauth-settings').isVisible()).toBe(false);
    const subdomain = page.getByLabel(/^Acme subdomain/);
    expect(await subdomain.isVisible()).toBe(true);
    expect(await page.locator('label[for="param-subdomain"]').textContent()).toContain('(required)');
    await page.getByLabel('Name', { exact: true }).fill('acme-live');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await expect
      .poll(() => page.locator('[data-error-for="parameters.subdomain"]').textContent())
      .toMatch(/required/);
    expect(await subdomain.getAttribute('aria-invalid')).toBe('true');
    await subdomain.fill('acme');
    await shoot('connection-new-api-key');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await heading('acme-live').waitFor();
    expect(await page.locator('#redirect-uri').count()).toBe(0);
    expect(await page.getByLabel(/^Acme subdomain/).inputValue()).toBe('acme');
    const stored = (await (await t.api('/api/v1/connections/acme-live')).json()) as {
      parameters: Record<string, string>;
      provider: string;
    };
    expect(stored.provider).toBe('acme_crm');
    expect(stored.parameters).toEqual({ subdomain: 'acme' });
    await shoot('connection-api-key');

    // Import an API key for an identifier, unchecked: the account is ACTIVE at once.
    await page.getByRole('link', { name: 'Import credentials' }).click();
    await heading('Connected accounts').waitFor();
    const importForm = page.locator('#import-form');
    await importForm.waitFor();
    expect(await importForm.getByLabel('Connection').inputValue()).toBe('acme-live');
    await importForm.getByLabel('Identifier', { exact: true }).fill('user_7');
    await importForm.getByLabel('Acme API key').fill(API_KEY);
    expect(await importForm.getByLabel('Access token').count()).toBe(0);
    await importForm.getByLabel(/^Check the credential/).uncheck();
    await shoot('accounts-import');
    await importForm.getByRole('button', { name: 'Import' }).click();
    await heading('Account user_7').waitFor();
    expect(await page.locator('#account-status').textContent()).toBe('ACTIVE');
    expect(await page.locator('#account-connection').textContent()).toBe('acme-live');
    await go('/accounts?connection_name=acme-live', 'Connected accounts');
    expect(await page.getByRole('row', { name: /user_7/ }).textContent()).toContain('ACTIVE');

    // Importing without the key: the field error appears next to the key.
    await page.getByRole('button', { name: 'Import credentials' }).click();
    await importForm.getByLabel('Identifier', { exact: true }).fill('user_8');
    await importForm.getByRole('button', { name: 'Import' }).click();
    await expect
      .poll(() => importForm.locator('[data-error-for="api_key"]').textContent())
      .toMatch(/required/);

    // The provider in use cannot be deleted; the dashboard says why.
    await go('/providers/acme_crm', 'Acme CRM');
    await page.getByRole('button', { name: 'Delete provider' }).click();
    expect(await page.locator('#confirm-text').textContent()).toContain('acme_crm');
    await page.getByRole('dialog').getByRole('button', { name: 'Delete provider' }).click();
    await expect
      .poll(() => page.locator('#delete-provider-error').textContent())
      .toContain('provider_in_use');

    // Replacing the definition (a new display name) keeps the key.
    await page
      .getByLabel('Definition (JSON)')
      .fill(JSON.stringify({ ...ACME, display_name: 'Acme CRM (EU)' }));
    await page.getByRole('button', { name: 'Save definition' }).click();
    await heading('Acme CRM (EU)').waitFor();
    await shoot('provider-custom');

    // With its connection gone, the custom provider can be deleted.
    expect((await t.api('/api/v1/connections/acme-live', { method: 'DELETE' })).status).toBe(204);
    await page.getByRole('button', { name: 'Delete provider' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete provider' }).click();
    await heading('Providers').waitFor();
    expect(await page.locator('tr[data-provider="acme_crm"]').count()).toBe(0);

    // The imported key never came back to the browser.
    expect(bodies.filter((b) => b.includes(API_KEY))).toEqual([]);
  }, 120_000);

  it('renders a console or documentation URL as a link only when it is https', async () => {
    // The API refuses such URLs when a definition is saved; the page does not rely on that alone.
    // As text: the test runner would rewrite an import() written in a function it compiles.
    const rendered = (await page.evaluate(`(async () => {
      const { consoleLinks } = await import('/dashboard/catalog.js');
      const hostile = consoleLinks({
        display_name: 'Hostile',
        docs_url: 'javascript:alert(document.domain)',
        setup: { console: { name: 'console', url: 'javascript:alert(1)' } },
      });
      const fine = consoleLinks({
        display_name: 'Fine',
        docs_url: 'https://docs.fine.example',
        setup: { console: { name: 'console', url: 'https://console.fine.example' } },
      });
      return {
        hostileLinks: hostile.querySelectorAll('a').length,
        hostileText: hostile.textContent,
        fineHrefs: [...fine.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      };
    })()`)) as { hostileLinks: number; hostileText: string; fineHrefs: string[] };
    expect(rendered.hostileLinks).toBe(0);
    expect(rendered.hostileText).toContain('Open the console');
    expect(rendered.fineHrefs).toEqual(['https://console.fine.example', 'https://docs.fine.example']);
  });
});
