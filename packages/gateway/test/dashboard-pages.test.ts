import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') {
  throw new Error(`The dashboard pages test needs Chromium at ${CHROMIUM} under CI=true.`);
}
if (!available) console.warn(`[tests] ${CHROMIUM} not found; the dashboard pages test is skipped.`);

const SHOTS = fileURLToPath(new URL('../test-output/dashboard/', import.meta.url));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1366, height: 860 };
const PHONE = { width: 390, height: 844 };
const IDENTIFIER = 'walker';

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Every page of the operator dashboard, at 1366 px and 390 px: no horizontal overflow, no serious
 * or critical accessibility violation (axe-core), keyboard use, and the pages' own work (webhooks,
 * approvals, execution detail, viewers).
 */
describe.runIf(available)('every dashboard page, at desktop and phone width', () => {
  let t: TestGateway;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  let accountId: string;
  let connection: string;
  let failedExecution: string;

  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestGateway(BACKENDS[0]!, { PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true' });
    ({ connection, accountId } = await sandboxAccount(t, {
      provider: 'google_calendar',
      identifier: IDENTIFIER,
    }));
    // A call held for approval: destructive calls wait for a person under any policy.
    expect(
      (
        await t.api('/api/v1/policies', {
          method: 'POST',
          json: { name: 'hold-deletes', identifier: IDENTIFIER, allow_tools: ['calendar_*'] },
        })
      ).status,
    ).toBe(201);
    const created = await executeTool(t, {
      tool_name: 'calendar_create_event',
      identifier: IDENTIFIER,
      tool_input: { summary: 'Held', start_datetime: '2031-03-01T10:00:00Z' },
    });
    const eventId = (created.body.data as { id: string }).id;
    const held = await executeTool(t, {
      tool_name: 'calendar_delete_event',
      identifier: IDENTIFIER,
      tool_input: { event_id: eventId },
    });
    expect(held.body.code).toBe('approval_required');
    // A failed call with a field error, for the execution detail.
    const failed = await executeTool(t, {
      tool_name: 'calendar_create_event',
      identifier: IDENTIFIER,
      tool_input: { summary: 'Bad date', start_datetime: 'next tuesday' },
    });
    expect(failed.status).toBe(400);
    const list = await json(await t.api('/api/v1/executions?status=error&page_size=10'));
    const errors = list.data as { id: string; tool_name: string }[];
    failedExecution = errors.find((e) => e.tool_name === 'calendar_create_event')!.id;
    // Something in the other lists.
    await t.api('/api/v1/mcp/tokens', { method: 'POST', json: { identifier: IDENTIFIER } });
    const trigger = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: { connection_name: connection, identifier: IDENTIFIER, trigger_type: 'calendar_events' },
    });
    expect(trigger.status).toBe(201);
    await t.api('/api/v1/proxy/tokens', {
      method: 'POST',
      json: { identifier: IDENTIFIER, connection_name: connection },
    });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    // axe-core is injected as an inline script, which the dashboard's CSP rightly refuses.
    const context = await browser.newContext({ viewport: DESKTOP, bypassCSP: true });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await signIn(t.gateway.bootstrapAdmin!.username, t.gateway.bootstrapAdmin!.password);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signIn(username: string, password: string): Promise<void> {
    await page.goto(`${t.url}/dashboard`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }

  const go = async (hash: string, heading: string | RegExp) => {
    const url = `${t.url}/dashboard/#${hash}`;
    if (page.url() === url) await page.reload();
    else await page.goto(url);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  /** Serious and critical axe violations of the page as it is now, one line each. */
  async function axe(): Promise<string[]> {
    if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.addScriptTag({ content: AXE });
    const result = (await page.evaluate(
      'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)',
    )) as AxeViolation[];
    return result
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }

  const overflow = async () =>
    (await page.evaluate('document.scrollingElement.scrollWidth - window.innerWidth')) as number;

  it('has no horizontal overflow and no serious accessibility violation on any page', async () => {
    const pages: [string, string | RegExp, string][] = [
      ['/overview', 'Overview', 'overview'],
      ['/connections', 'Connections', 'connections'],
      ['/connections/new', 'New connection', 'connection-new'],
      [`/connections/${connection}`, connection, 'connection'],
      ['/providers', 'Providers', 'providers'],
      ['/providers/google_calendar', /Google Calendar/, 'provider'],
      ['/accounts', 'Connected accounts', 'accounts'],
      [`/accounts/${accountId}`, `Account ${IDENTIFIER}`, 'account'],
      ['/tools', 'Tools', 'tools-all'],
      ['/tools/calendar_create_event', 'calendar_create_event', 'tool'],
      ['/toolsets', 'Toolsets', 'toolsets'],
      ['/executions', 'Executions', 'executions-list'],
      [`/executions/${failedExecution}`, `Execution ${failedExecution}`, 'execution-failed'],
      ['/events', 'Events', 'events-list'],
      ['/webhooks', 'Webhooks', 'webhooks'],
      ['/triggers', 'Triggers', 'triggers'],
      ['/policies', 'Policies', 'policies'],
      ['/policies/hold-deletes', 'Policy hold-deletes', 'policy'],
      ['/approvals', 'Approvals', 'approvals'],
      ['/clients', 'Gateway clients', 'clients-list'],
      ['/tokens', 'Tokens', 'tokens'],
      ['/settings', 'Settings', 'settings-page'],
      ['/audit', 'Audit log', 'audit'],
      ['/admins', 'Dashboard accounts', 'admins'],
    ];
    const problems: string[] = [];
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      for (const [hash, heading, shot] of pages) {
        await go(hash, heading);
        const over = await overflow();
        if (over > 1) problems.push(`${hash} at ${size.width} px: ${over} px wider than the window`);
        for (const v of await axe()) problems.push(`${hash} at ${size.width} px: ${v}`);
        await page.screenshot({
          path: path.join(SHOTS, `page-${shot}-${size.width === PHONE.width ? 'phone' : 'desktop'}.png`),
          fullPage: true,
        });
      }
    }
    expect(problems).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 240_000);

  it('shows each trigger’s health, and pauses and resumes one', async () => {
    await page.setViewportSize(DESKTOP);
    await go('/triggers', 'Triggers');
    const health = page.getByRole('list', { name: 'Triggers by state' });
    expect(await health.textContent()).toContain('active 1');
    const row = page.locator('#triggers-table tbody tr').first();
    expect(await row.textContent()).toContain('calendar_events');
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.getByRole('button', { name: 'Resume' }).waitFor();
    expect(await page.locator('#triggers-table tbody tr').first().textContent()).toContain('paused');
    await page.locator('#triggers-table tbody tr').first().getByRole('button', { name: 'Resume' }).click();
    await page.locator('#triggers-table tbody tr').first().getByRole('button', { name: 'Pause' }).waitFor();
  });

  it('shows the tools without a stray "null", each card within the page, the navigation in view', async () => {
    await page.setViewportSize(DESKTOP);
    await go('/tools', 'Tools');
    // No element says just "null" (descriptions may mention null as a JSON value).
    const nulls = await page.evaluate(`(() => {
      const walker = document.createTreeWalker(document.getElementById('view'), NodeFilter.SHOW_TEXT);
      const found = [];
      for (let n = walker.nextNode(); n; n = walker.nextNode())
        if (n.nodeValue.trim() === 'null') found.push(n.parentElement.outerHTML.slice(0, 200));
      return found;
    })()`);
    expect(nulls).toEqual([]);
    expect(await overflow()).toBeLessThanOrEqual(1);
    // The navigation stays reachable at the top: the page did not scroll it away.
    expect(await page.evaluate('window.scrollY')).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Sections' }).isVisible()).toBe(true);
    const cards = await page.locator('.tool-list li').evaluateAll((els) =>
      els.map((el) => {
        const e = el as unknown as { scrollWidth: number; clientWidth: number };
        return e.scrollWidth - e.clientWidth;
      }),
    );
    expect(cards.length).toBeGreaterThan(10);
    expect(Math.max(...cards)).toBeLessThanOrEqual(1);
    // A search no tool has a word of says so.
    await go('/tools?q=zzqxv', 'Tools');
    expect(await page.locator('#no-tools').textContent()).toMatch(/No tool matches/);
    // The search box asks the gateway's tool search: tools ranked by the task, with their tags.
    await page.getByLabel('Search').fill('put a meeting with Ann in my calendar');
    await page.getByLabel('Effect').selectOption('false');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect
      .poll(() => page.locator('#tool-count').textContent())
      .toMatch(/^\d+ tools match, best first\.$/);
    const names = await page.locator('.tool-list li code').allTextContents();
    expect(names.slice(0, 3)).toContain('calendar_create_event');
    expect(await page.locator('.tool-list li').first().locator('.tag').allTextContents()).toContain('writes');
    expect(page.url()).toContain('read_only=false');
  });

  it('creates a toolset, lists the tools within it, and deletes it', async () => {
    await page.setViewportSize(DESKTOP);
    await go('/toolsets', 'Toolsets');
    await page.getByLabel('Name', { exact: true }).fill('calendar-readers');
    await page.getByLabel('Providers').fill('google_calendar');
    await page.getByLabel('Tags').fill('read-only');
    await page.getByRole('button', { name: 'Create toolset' }).click();
    const row = page.locator('#toolsets-table tbody tr', { hasText: 'calendar-readers' });
    await row.waitFor();
    expect(await row.locator('.mcp-url').textContent()).toBe(`${t.url}/mcp/t/calendar-readers`);
    // A mistake is shown next to the form, naming the field.
    await page.getByLabel('Name', { exact: true }).fill('typos');
    await page.getByLabel('Tools', { exact: true }).fill('calendar_list_event');
    await page.getByRole('button', { name: 'Create toolset' }).click();
    await expect
      .poll(() => page.locator('#toolset-form .form-error').textContent())
      .toMatch(/did you mean "calendar_list_events"/);

    await row.getByRole('link', { name: 'calendar-readers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tools' }).waitFor();
    await expect
      .poll(async () => (await page.locator('.tool-list li code').allTextContents()).sort())
      .toEqual(['calendar_get_event_by_id', 'calendar_list_calendars', 'calendar_list_events']);
    expect(await page.getByLabel('Toolset').inputValue()).toBe('calendar-readers');

    await go('/toolsets', 'Toolsets');
    await page
      .locator('#toolsets-table tbody tr', { hasText: 'calendar-readers' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete toolset' }).click();
    await expect.poll(() => page.locator('#toolsets-table').textContent()).toMatch(/Nothing yet/);
  });

  it('keeps the key columns of the accounts and executions tables at 390 px', async () => {
    await page.setViewportSize(PHONE);
    await go(`/accounts?connection_name=${connection}`, 'Connected accounts');
    const status = page.locator('tbody td[data-label="Status"]').first();
    expect(await status.isVisible()).toBe(true);
    expect(await status.innerText()).toContain('ACTIVE');
    await go('/executions?status=error', 'Executions');
    const code = page.locator('tbody td[data-label="Error code"]').first();
    expect(await code.isVisible()).toBe(true);
    expect(await code.innerText()).toMatch(/\w/);
    const box = await code.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);

    // The navigation folds behind "Menu" on a phone; choosing a page folds it again.
    const nav = page.getByRole('navigation', { name: 'Sections' });
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await nav.isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await nav.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await page.setViewportSize(DESKTOP);
  });

  it('is usable by keyboard: skip link, the navigation by Tab, a page opened with Enter, a dialog', async () => {
    await page.setViewportSize(DESKTOP);
    // A fresh load: the focus starts at the top of the document.
    await page.goto('about:blank');
    await page.goto(`${t.url}/dashboard/#/overview`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    // Tab through the navigation to Webhooks, each stop with a visible focus ring.
    let label = '';
    for (let i = 0; i < 20 && label !== 'Webhooks'; i++) {
      await page.keyboard.press('Tab');
      label = (await page.evaluate('document.activeElement.textContent')) as string;
      expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).not.toBe('none');
    }
    expect(label).toBe('Webhooks');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    expect(await page.evaluate('document.activeElement.id')).toBe('view');

    // A webhook endpoint to delete: its confirmation dialog keeps the focus and Escape closes it.
    await page.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/hooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('#webhook-secret').waitFor();
    expect(await page.locator('#webhook-secret').textContent()).toMatch(/^whsec_/);
    const remove = page.getByRole('row', { name: /127\.0\.0\.1:9/ }).getByRole('button', { name: 'Delete' });
    await remove.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    expect(await page.evaluate('document.activeElement.closest("dialog")?.id')).toBe('confirm');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.closest("dialog")?.id')).toBe('confirm');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Delete');
  });

  it('creates a webhook endpoint, shows its delivery log, and deletes it', async () => {
    await page.setViewportSize(DESKTOP);
    await go('/webhooks', 'Webhooks');
    await page.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/other');
    await page.getByLabel('Description').fill('made in the dashboard');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('#webhook-secret').waitFor();
    const row = page.getByRole('row', { name: /127\.0\.0\.1:9\/other/ });
    await row.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: /^Webhook / }).waitFor();
    expect(await page.getByRole('heading', { name: 'Delivery log' }).isVisible()).toBe(true);
    // An event for it: the receiver does not answer, so the attempt fails and can be retried.
    const made = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'hook-trigger', provider: 'notion', sandbox: true },
    });
    expect(made.status).toBe(201);
    const retry = page.getByRole('button', { name: 'Retry' }).first();
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
          return retry.count();
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBeGreaterThan(0);
    expect(await page.locator('tbody td[data-label="Event"]').first().textContent()).toContain(
      'connection.created',
    );
    await retry.click();
    await expect.poll(() => page.locator('#toast').textContent()).toMatch(/queued again/);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    await expect.poll(() => page.locator('#webhook-secret').textContent()).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await expect.poll(() => page.getByRole('row', { name: /127\.0\.0\.1:9\/other/ }).count()).toBe(0);
    const listed = await json(await t.api('/api/v1/webhooks'));
    expect((listed.data as { url: string }[]).map((w) => w.url)).not.toContain('http://127.0.0.1:9/other');
  });

  it('creates, edits and deletes a policy; a bad definition lists its field errors', async () => {
    await page.setViewportSize(DESKTOP);
    await go('/policies', 'Policies');
    const definition = page.getByLabel('Definition (JSON)');
    await definition.fill(JSON.stringify({ name: 'Bad Name', allow_tools: ['calendar_*'] }));
    await page.getByRole('button', { name: 'Create policy' }).click();
    await expect.poll(() => page.locator('#policy-errors').textContent()).toMatch(/\/name/);
    expect(await page.locator('#policy-form .form-error').textContent()).toMatch(/invalid_input/);
    await definition.fill(JSON.stringify({ name: 'read-only', deny_tools: ['@writes'] }));
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.getByRole('heading', { level: 1, name: 'Policy read-only' }).waitFor();
    const edited = JSON.parse(await definition.inputValue()) as Record<string, unknown>;
    expect(edited).toMatchObject({ name: 'read-only', deny_tools: ['@writes'] });
    expect(edited).not.toHaveProperty('id');
    await definition.fill(JSON.stringify({ ...edited, description: 'edited in the dashboard' }));
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => page.locator('.card.details').textContent()).toContain('edited in the dashboard');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete policy' }).click();
    await page.getByRole('heading', { level: 1, name: 'Policies' }).waitFor();
    expect((await t.api('/api/v1/policies/read-only')).status).toBe(404);
  });

  it('approves a pending approval, seeing its exact input', async () => {
    await go('/approvals', 'Approvals');
    const card = page.locator('article.approval').first();
    expect(await card.locator('pre').textContent()).toContain('"event_id"');
    await card.getByLabel(/^Reason/).fill('checked by hand');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Approve' }).click();
    await page.locator('#no-approvals').waitFor();
    const approvals = await json(await t.api('/api/v1/approvals?status=approved'));
    expect(approvals.data).toEqual([
      expect.objectContaining({ status: 'approved', reason: 'checked by hand' }),
    ]);
  });

  it('opens a failed execution: its problem and field errors, input, links', async () => {
    await go('/executions', 'Executions');
    await page.getByLabel('Identifier').fill(IDENTIFIER);
    await page.getByLabel('Tool').fill('calendar_create_event');
    await page.getByLabel('Status').selectOption('error');
    await page.getByLabel('From').fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.url()).toMatch(/status=error/);
    expect(page.url()).toMatch(/identifier=walker/);
    expect(page.url()).toMatch(/since=2020-01-01T/);
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await page.locator('tbody tr a').first().click();
    await page.getByRole('heading', { level: 1, name: /^Execution exec_/ }).waitFor();
    expect(await page.locator('#execution-error-code').textContent()).toBe('invalid_input');
    expect(await page.locator('#execution-error-detail').textContent()).toMatch(/start_datetime/);
    expect(await page.locator('#execution-field-errors').textContent()).toMatch(/start_datetime/);
    expect(await page.locator('#execution-input').textContent()).toContain('next tuesday');
    // Refused before any account was chosen: no account, no provider status.
    expect(await page.locator('#execution-account').textContent()).toBe('—');
    expect(await page.locator('#execution-upstream-status').textContent()).toBe('—');

    // A call that ran: its account and connection are links.
    await go('/executions?status=success&tool_name=calendar_create_event', 'Executions');
    await page.locator('tbody tr a').first().click();
    await page.getByRole('heading', { level: 1, name: /^Execution exec_/ }).waitFor();
    expect(await page.locator('#execution-problem').count()).toBe(0);
    expect(await page.locator('#execution-account a').getAttribute('href')).toBe(`#/accounts/${accountId}`);
    await page.locator('#execution-connection a').click();
    await page.getByRole('heading', { level: 1, name: connection }).waitFor();
  });

  it('gives a viewer no control that changes something', async () => {
    await go('/admins', 'Dashboard accounts');
    await page.getByLabel('Username').fill('watcher');
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Add account' }).click();
    const password = (await page.locator('#new-admin-password').textContent())!;
    expect(password.length).toBeGreaterThan(11);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Username').waitFor();
    // The sign-in page too, at both widths.
    for (const size of [PHONE, DESKTOP]) {
      await page.setViewportSize(size);
      expect(await axe(), `sign-in at ${size.width} px`).toEqual([]);
      expect(await overflow()).toBeLessThanOrEqual(1);
    }
    await signIn('watcher', password);
    expect(await page.locator('#who').textContent()).toContain('viewer');
    for (const [hash, heading] of [
      ['/webhooks', 'Webhooks'],
      ['/connections', 'Connections'],
      ['/clients', 'Gateway clients'],
      ['/tokens', 'Tokens'],
      ['/policies', 'Policies'],
      ['/toolsets', 'Toolsets'],
      [`/accounts?connection_name=${connection}`, 'Connected accounts'],
      ['/tools/calendar_create_event', 'calendar_create_event'],
    ] as const) {
      await go(hash, heading);
      await page.waitForLoadState('networkidle');
      const controls = await page
        .locator('#view')
        .getByRole('button', {
          name: /^(Delete|Revoke|Create|Add|Mint|Run|Generate|Import|Save|Approve|Deny)/,
        })
        .count();
      expect(controls, hash).toBe(0);
      expect(await page.locator('#view form:not([role="search"]) button[type="submit"]').count(), hash).toBe(
        0,
      );
    }
    await go('/settings', 'Settings');
    expect(await page.locator('#branding-form input').first().isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(t.gateway.bootstrapAdmin!.username, t.gateway.bootstrapAdmin!.password);
  });
});
