import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/http/openapi-operations.js';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

interface Session {
  cookie: string;
  csrf: string;
  role: string;
}

/** Every changing API route, its parameters filled in: what a viewer must never get through. */
const CHANGES = Object.keys(OPERATIONS)
  .map((key) => key.split(' ') as [string, string])
  .filter(
    ([method, route]) =>
      ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) &&
      route.startsWith('/api/v1/') &&
      route !== '/api/v1/admin/session',
  )
  .map(([method, route]) => [method, route.replace(/:[a-z_]+/g, 'x_1')] as const);

const READS = [
  '/api/v1/connections',
  '/api/v1/providers',
  '/api/v1/connected-accounts',
  '/api/v1/policies',
  '/api/v1/approvals',
  '/api/v1/clients',
  '/api/v1/webhooks',
  '/api/v1/executions',
  '/api/v1/events',
  '/api/v1/mcp/tokens',
  '/api/v1/audit',
  '/api/v1/admin/admins',
  '/api/v1/environment',
];

describe.each(BACKENDS)('dashboard roles ($name)', (backend) => {
  let t: TestGateway;
  let admin: Session;
  const VIEWER_PASSWORD = 'viewer-password-123456';

  const signIn = async (username: string, password: string): Promise<Session> => {
    const res = await fetch(`${t.url}/api/v1/admin/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { csrf_token: string; role: string };
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrf: body.csrf_token, role: body.role };
  };
  const as = async (s: Session, path: string, init: { method?: string; json?: unknown } = {}) => {
    const headers: Record<string, string> = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${t.url}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: answers are read loosely, field by field
    return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : {}) as any, text };
  };

  beforeAll(async () => {
    t = await startTestGateway(backend);
    admin = await signIn('admin', t.gateway.bootstrapAdmin!.password);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lets an admin create a viewer, and shows roles in the session and the list', async () => {
    expect(admin.role).toBe('admin');
    const created = await as(admin, '/api/v1/admin/admins', {
      method: 'POST',
      json: { username: 'watcher', password: VIEWER_PASSWORD, role: 'viewer' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({ username: 'watcher', role: 'viewer' });
    const generated = await as(admin, '/api/v1/admin/admins', {
      method: 'POST',
      json: { username: 'helper' },
    });
    expect(generated.body).toMatchObject({ username: 'helper', role: 'admin' });
    expect(generated.body.password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const again = await as(admin, '/api/v1/admin/admins', { method: 'POST', json: { username: 'watcher' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('admin_exists');
    const badRole = await as(admin, '/api/v1/admin/admins', {
      method: 'POST',
      json: { username: 'x', role: 'owner' },
    });
    expect(badRole.status).toBe(400);

    const listed = await as(admin, '/api/v1/admin/admins');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        username: 'admin',
        role: 'admin',
        created_at: expect.any(String),
        last_sign_in_at: expect.any(String),
      },
      { username: 'helper', role: 'admin', created_at: expect.any(String), last_sign_in_at: null },
      { username: 'watcher', role: 'viewer', created_at: expect.any(String), last_sign_in_at: null },
    ]);
    expect(listed.text).not.toContain('hash');

    const viewer = await signIn('watcher', VIEWER_PASSWORD);
    expect(viewer.role).toBe('viewer');
    const me = await fetch(`${t.url}/api/v1/admin/session`, { headers: { cookie: viewer.cookie } });
    expect(await me.json()).toMatchObject({ username: 'watcher', role: 'viewer' });
  });

  it('lets a viewer read every page’s lists', async () => {
    const viewer = await signIn('watcher', VIEWER_PASSWORD);
    for (const path of READS) {
      const res = await as(viewer, path);
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
  });

  it('refuses a viewer every changing route, saying a viewer is read-only', async () => {
    const viewer = await signIn('watcher', VIEWER_PASSWORD);
    expect(CHANGES.length).toBeGreaterThan(30);
    for (const [method, path] of CHANGES) {
      const res = await as(viewer, path, { method, json: {} });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
      expect(res.body).toMatchObject({ code: 'insufficient_scope', role: 'viewer' });
      expect(res.body.detail).toContain('viewer is read-only');
    }
    // Signing out is not a change to the gateway: a viewer may.
    const out = await fetch(`${t.url}/api/v1/admin/session`, {
      method: 'DELETE',
      headers: { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf },
    });
    expect(out.status).toBe(204);
  });

  it('keeps gateway clients out of the admins routes', async () => {
    for (const [method, json] of [
      ['GET', undefined],
      ['POST', { username: 'sneaky', password: 'sneaky-password-1234' }],
    ] as const) {
      const res = await t.api('/api/v1/admin/admins', { method, ...(json ? { json } : {}) });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { detail: string }).detail).toContain('dashboard session');
    }
    expect((await t.api('/api/v1/admin/admins/watcher', { method: 'DELETE' })).status).toBe(403);
  });

  it('changes roles at once, never deletes oneself or the last admin', async () => {
    const viewer = await signIn('watcher', VIEWER_PASSWORD);
    const promoted = await as(admin, '/api/v1/admin/admins/watcher', {
      method: 'PATCH',
      json: { role: 'admin' },
    });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.body).toMatchObject({ username: 'watcher', role: 'admin' });
    // The open session has the new role on its next request.
    const made = await as(viewer, '/api/v1/policies', { method: 'POST', json: { name: 'by-watcher' } });
    expect(made.status, made.text).toBe(201);

    const self = await as(admin, '/api/v1/admin/admins/admin', { method: 'DELETE' });
    expect(self.status).toBe(400);
    expect(self.body.detail).toContain('your own');
    expect((await as(admin, '/api/v1/admin/admins/nobody', { method: 'DELETE' })).status).toBe(404);
    expect((await as(admin, '/api/v1/admin/admins/helper', { method: 'DELETE' })).status).toBe(204);
    // watcher (now an admin) deletes the first admin; then it is the last one.
    expect((await as(viewer, '/api/v1/admin/admins/admin', { method: 'DELETE' })).status).toBe(204);
    const demote = await as(viewer, '/api/v1/admin/admins/watcher', {
      method: 'PATCH',
      json: { role: 'viewer' },
    });
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe('last_admin');
    const listed = await as(viewer, '/api/v1/admin/admins');
    expect(listed.body.data).toEqual([expect.objectContaining({ username: 'watcher', role: 'admin' })]);
    // The deleted admin's session is gone with it.
    expect((await as(admin, '/api/v1/policies')).status).toBe(401);

    // A viewer made now cannot leave the environment without an admin either.
    await as(viewer, '/api/v1/admin/admins', {
      method: 'POST',
      json: { username: 'reader', password: VIEWER_PASSWORD, role: 'viewer' },
    });
    const reader = await signIn('reader', VIEWER_PASSWORD);
    expect((await as(reader, '/api/v1/admin/admins/watcher', { method: 'DELETE' })).status).toBe(403);
  });

  it('records every account change in the audit log, with the admin who made it', async () => {
    const watcher = await signIn('watcher', VIEWER_PASSWORD);
    const entries = (await as(watcher, '/api/v1/audit?action=admin.&page_size=200')).body.data as Array<
      Record<string, unknown>
    >;
    const made = entries.map((e) => [e.action, e.resource_id, e.actor_id]);
    expect(made).toEqual(
      expect.arrayContaining([
        ['admin.created', 'watcher', 'admin'],
        ['admin.created', 'helper', 'admin'],
        ['admin.role_changed', 'watcher', 'admin'],
        ['admin.deleted', 'helper', 'admin'],
        ['admin.deleted', 'admin', 'watcher'],
        ['admin.created', 'reader', 'watcher'],
        ['admin.signed_in', 'watcher', 'watcher'],
      ]),
    );
    const changed = entries.find((e) => e.action === 'admin.role_changed');
    expect(changed).toMatchObject({ actor_type: 'admin', credential: 'session', details: { role: 'admin' } });
    expect(JSON.stringify(entries)).not.toContain(VIEWER_PASSWORD);
    // Refused changes are not changes: nothing recorded for the viewer's attempts.
    expect(entries.some((e) => e.actor_id === 'reader' && e.action !== 'admin.signed_in')).toBe(false);
  });
});
