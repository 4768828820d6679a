import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapStore } from '../src/auth/bootstrap.js';
import { AdminService } from '../src/dashboard/admins.js';
import { adminsCommand } from '../src/dashboard/admins-command.js';
import { EVENT_TYPES } from '../src/events/types.js';
import { DASHBOARD_UI } from '../src/http/dashboard/pages.js';
import { migrate } from '../src/store/migrate.js';
import { MIGRATIONS } from '../src/store/migrations.js';
import { VERSION_PARAMETERS } from '../src/tools/versions.js';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { gatewayToken } from './helpers/token.js';

interface Session {
  cookie: string;
  csrf: string;
  setCookie: string;
}

async function signIn(t: TestGateway, username: string, password: string): Promise<Response> {
  return fetch(`${t.url}/api/v1/admin/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function session(t: TestGateway, username: string, password: string): Promise<Session> {
  const res = await signIn(t, username, password);
  expect(res.status).toBe(201);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const body = (await res.json()) as { csrf_token: string };
  return { cookie: setCookie.split(';')[0]!, csrf: body.csrf_token, setCookie };
}

describe.each(BACKENDS)('dashboard sign-in and its API ($name)', (backend) => {
  let t: TestGateway;
  let admin: { username: string; password: string };
  const asAdmin = (s: Session, path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set('cookie', s.cookie);
    headers.set('x-csrf-token', s.csrf);
    if (init.json !== undefined) headers.set('content-type', 'application/json');
    return fetch(`${t.url}${path}`, {
      ...init,
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
  };

  beforeAll(async () => {
    t = await startTestGateway(backend);
    admin = t.gateway.bootstrapAdmin!;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates one admin at first start, with a one-time password', () => {
    expect(admin.username).toBe('admin');
    expect(admin.password).toMatch(/^[A-Za-z0-9_-]{20}$/);
  });

  it('signs in with an HttpOnly, SameSite=Lax session cookie and hands out the CSRF token', async () => {
    const s = await session(t, admin.username, admin.password);
    expect(s.setCookie).toMatch(
      /^portico_session=[A-Za-z0-9_-]{40,}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/,
    );
    const me = await fetch(`${t.url}/api/v1/admin/session`, { headers: { cookie: s.cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ username: 'admin', csrf_token: s.csrf });
  });

  it('accepts the cookie on /api/v1 only together with the CSRF header', async () => {
    const s = await session(t, admin.username, admin.password);
    const ok = await asAdmin(s, '/api/v1/connections');
    expect(ok.status).toBe(200);
    const attempts: Array<Record<string, string>> = [
      { cookie: s.cookie },
      { cookie: s.cookie, 'x-csrf-token': 'forged' },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${t.url}/api/v1/connections`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'csrf-victim', provider: 'notion', sandbox: true }),
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe('csrf_failed');
      expect(problem.detail).toMatch(/X-CSRF-Token/);
    }
    expect((await t.api('/api/v1/connections/csrf-victim')).status).toBe(404);
    // The proxy takes gateway tokens only.
    const proxied = await fetch(`${t.url}/proxy/v1/users/me`, {
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, connection_name: 'x', identifier: 'y' },
    });
    expect(proxied.status).toBe(401);
  });

  it('stores only hashes of the session: the CSRF token is not in the store, nor does its hash pass for it', async () => {
    const s = await session(t, admin.username, admin.password);
    const other = await session(t, admin.username, admin.password);
    const rows = await t.db.query<Record<string, unknown>>('SELECT * FROM admin_sessions');
    expect(JSON.stringify(rows)).not.toContain(s.csrf);
    expect(JSON.stringify(rows)).not.toContain(s.cookie.split('=')[1]);
    expect(rows.map((r) => r.csrf_token_hash)).toContain(sha256(s.csrf));
    for (const csrf of [sha256(s.csrf), other.csrf, `${s.csrf}x`, s.csrf.slice(1)]) {
      const res = await asAdmin({ ...s, csrf }, '/api/v1/connections');
      expect(res.status, csrf).toBe(403);
    }
    // After a reload the page asks for the token again, and gets the same one.
    const me = await fetch(`${t.url}/api/v1/admin/session`, { headers: { cookie: s.cookie } });
    expect(((await me.json()) as { csrf_token: string }).csrf_token).toBe(s.csrf);
    expect((await asAdmin(s, '/api/v1/connections')).status).toBe(200);
  });

  it('refuses a sign-in a cross-site form could send', async () => {
    const res = await fetch(`${t.url}/api/v1/admin/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=admin&password=${encodeURIComponent(admin.password)}`,
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('signs out: the cookie stops working at once', async () => {
    const s = await session(t, admin.username, admin.password);
    const out = await asAdmin(s, '/api/v1/admin/session', { method: 'DELETE' });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    const after = await asAdmin(s, '/api/v1/connections');
    expect(after.status).toBe(401);
    expect(((await after.json()) as { detail: string }).detail).toMatch(/sign in again/);
  });

  it('answers a wrong password with a problem and locks the account after repeated failures', async () => {
    const out = new Writable({ write: (_c, _e, cb) => cb() });
    const chunks: string[] = [];
    out.write = ((chunk: string) => chunks.push(chunk)) as never;
    await adminsCommand(t.db, { sub: 'create', username: 'locked-out' }, out);
    const password = /password: (\S+)/.exec(chunks.join(''))![1]!;
    for (let i = 0; i < 5; i++) {
      const res = await signIn(t, 'locked-out', 'not the password');
      expect(res.status).toBe(401);
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe('invalid_credentials');
      expect(problem.detail).toMatch(/locked/);
    }
    // The fifth failure locked the account (as the README says): a wrong password now gets 429...
    const locked = await signIn(t, 'locked-out', 'not the password');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await locked.json()) as { code: string }).code).toBe('rate_limited');
    // ...but the right one still signs in: a lock must not let a guesser keep the operator out.
    expect((await signIn(t, 'locked-out', password)).status).toBe(201);
    // An unknown user is told the same as a wrong password.
    const unknown = await signIn(t, 'nobody', 'whatever-password');
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { code: string }).code).toBe('invalid_credentials');
  });

  it('portico admins create prints a password that signs in, and refuses a duplicate name', async () => {
    const chunks: string[] = [];
    const out = new Writable({
      write(chunk, _e, cb) {
        chunks.push(String(chunk));
        cb();
      },
    });
    await adminsCommand(t.db, { sub: 'create', username: 'ops@example.com' }, out);
    const password = /password: (\S+)/.exec(chunks.join(''))![1]!;
    expect((await signIn(t, 'ops@example.com', password)).status).toBe(201);
    await expect(
      adminsCommand(t.db, { sub: 'create', username: 'ops@example.com' }, out),
    ).rejects.toMatchObject({
      code: 'admin_exists',
    });
  });

  it('lists, creates (secret once) and revokes gateway clients over HTTP', async () => {
    const s = await session(t, admin.username, admin.password);
    const created = await asAdmin(s, '/api/v1/clients', { method: 'POST', json: { name: 'agent-two' } });
    expect(created.status).toBe(201);
    const client = (await created.json()) as { client_id: string; client_secret: string; revoked_at: null };
    expect(client.client_secret).toMatch(/^pcs_/);
    const token = await gatewayToken(t.url, client.client_id, client.client_secret);
    expect((await t.api('/api/v1/connections', { token })).status).toBe(200);

    const listed = await (await t.api('/api/v1/clients')).text();
    expect(listed).toContain(client.client_id);
    expect(listed).not.toContain(client.client_secret);
    expect(listed).not.toContain('secret');

    expect((await t.api(`/api/v1/clients/${client.client_id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await t.api('/api/v1/connections', { token })).status).toBe(401);
    const again = await t.api(`/api/v1/clients/${client.client_id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe('client_not_found');
    const invalid = await t.api('/api/v1/clients', { method: 'POST', json: { name: '' } });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('/name');
  });

  it('summarises accounts and executions for the overview charts', async () => {
    await sandboxAccount(t, {
      provider: 'notion',
      identifier: 'overview-user',
      connection: 'overview-notion',
    });
    expect((await executeTool(t, { tool_name: 'notes_user_list', identifier: 'overview-user' })).status).toBe(
      200,
    );
    expect(
      (
        await executeTool(t, {
          tool_name: 'notes_user_list',
          identifier: 'overview-user',
          tool_input: { page_size: 0 },
        })
      ).status,
    ).toBe(400);
    // A tool no provider has: an error among the outcomes, no "unknown" provider among the durations.
    expect((await executeTool(t, { tool_name: 'notes_user_lst', identifier: 'overview-user' })).status).toBe(
      404,
    );
    const summary = (await (await t.api('/api/v1/connected-accounts/summary')).json()) as {
      by_status: Record<string, number>;
      by_connection: Array<{ connection_name: string; status: string; count: number }>;
    };
    expect(summary.by_status.ACTIVE).toBe(1);
    expect(summary.by_connection).toContainEqual({
      connection_name: 'overview-notion',
      provider: 'notion',
      status: 'ACTIVE',
      count: 1,
    });
    const stats = (await (await t.api('/api/v1/executions/stats?window=24h')).json()) as {
      hours: Array<{ success: number; error: number }>;
      error_codes: Array<{ error_code: string; count: number }>;
      providers: Array<{ provider: string; count: number; p50_ms: number; p95_ms: number }>;
    };
    expect(stats.hours).toHaveLength(24);
    expect(stats.hours.at(-1)).toMatchObject({ success: 1, error: 2 });
    expect(stats.error_codes).toEqual([
      { error_code: 'invalid_input', count: 1 },
      { error_code: 'unknown_tool', count: 1 },
    ]);
    expect(stats.providers.map((p) => p.provider)).toEqual(['notion']);
    expect(stats.providers[0]).toMatchObject({ provider: 'notion', count: 2 });
    expect(stats.providers[0]!.p95_ms).toBeGreaterThanOrEqual(stats.providers[0]!.p50_ms);
    expect(
      ((await (await t.api('/api/v1/executions/stats?window=7d')).json()) as { hours: unknown[] }).hours,
    ).toHaveLength(168);
    const bad = await t.api('/api/v1/executions/stats?window=1y');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/24h.*7d/);
  });

  it('describes every provider with its scopes and setup steps', async () => {
    const { data } = (await (await t.api('/api/v1/providers')).json()) as {
      data: Array<{ key: string; auth: string; setup: { steps: string[]; scopes: unknown[] } }>;
    };
    // The specification's seven first, in its order, then the rest of the catalog.
    expect(data.slice(0, 7).map((p) => p.key)).toEqual([
      'notion',
      'google_calendar',
      'google_drive',
      'google_sheets',
      'google_docs',
      'hubspot',
      'sharepoint',
    ]);
    expect(data.length).toBeGreaterThanOrEqual(30);
    for (const p of data.filter((x) => x.auth === 'oauth2'))
      expect(
        p.setup.steps.some((s) => s.includes('{redirect_uri}')),
        p.key,
      ).toBe(true);
  });

  it('serves the pages with a strict Content-Security-Policy', async () => {
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/app.js', '/dashboard/vendor/uqr.mjs']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
    expect((await fetch(`${t.url}/dashboard/../package.json`)).status).toBe(404);
  });

  it('sends a browser at / on to the dashboard, and tells anything else where things are', async () => {
    const browser = await fetch(`${t.url}/`, {
      redirect: 'manual',
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/dashboard');
    const client = await fetch(`${t.url}/`);
    expect(client.status).toBe(404);
    const problem = (await client.json()) as { code: string; detail: string };
    expect(problem.code).toBe('not_found');
    expect(problem.detail).toMatch(/\/dashboard\b.*\/docs\b/);
    // Any other unknown path names them too.
    const elsewhere = (await (await fetch(`${t.url}/nothing-here`)).json()) as { detail: string };
    expect(elsewhere.detail).toMatch(/\/docs\b.*\/dashboard\b/);
  });
});

describe.each(BACKENDS)('dashboard sessions across the CSRF-hash upgrade ($name)', (backend) => {
  it('signs out the sessions signed in before it (their plaintext tokens are gone); new ones work', async () => {
    const upgrade = MIGRATIONS.find((m) => m.name === 'admin-session-csrf-hash')!;
    const db = await backend.open();
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < upgrade.version),
      );
      const { environment } = await bootstrapStore(db);
      const admins = new AdminService(db);
      const { password } = await admins.create(environment.id, 'before-upgrade');
      const cookie = 'a-cookie-from-before-the-upgrade';
      await db.query(
        `INSERT INTO admin_sessions (token_hash, admin_id, csrf_token, expires_at)
         SELECT $1, id, 'a-plaintext-csrf-token', now() + interval '1 hour' FROM admin_users WHERE username = 'before-upgrade'`,
        [sha256(cookie)],
      );

      expect((await migrate(db)).applied).toContain(upgrade.version);
      expect(await db.query('SELECT * FROM admin_sessions')).toEqual([]);
      expect(await admins.session(cookie)).toBeUndefined();
      await expect(admins.authenticate(cookie, 'a-plaintext-csrf-token')).rejects.toMatchObject({
        code: 'unauthenticated',
      });
      const signedIn = await admins.signIn('before-upgrade', password, '127.0.0.1');
      await expect(admins.authenticate(signedIn.sessionToken, signedIn.csrfToken)).resolves.toMatchObject({
        username: 'before-upgrade',
      });
    } finally {
      await db.close();
    }
  });
});

describe('dashboard front end', () => {
  it('folds away the version parameters the engine takes, the same list (the static page cannot import it)', () => {
    const tools = readFileSync(path.join(DASHBOARD_UI, 'pages', 'tools.js'), 'utf8');
    const list = /const VERSION_OVERRIDES = \[([^\]]*)\]/.exec(tools)?.[1] ?? '';
    expect([...list.matchAll(/'([^']+)'/g)].map((m) => m[1])).toEqual([...VERSION_PARAMETERS]);
  });

  it('offers the event types the gateway records, the same list (the static page cannot import it)', () => {
    const app = readFileSync(path.join(DASHBOARD_UI, 'pages', 'events.js'), 'utf8');
    const list = /const EVENT_TYPES = \[([^\]]*)\]/.exec(app)?.[1] ?? '';
    expect([...list.matchAll(/'([^']+)'/g)].map((m) => m[1])).toEqual([...EVENT_TYPES]);
  });
});
