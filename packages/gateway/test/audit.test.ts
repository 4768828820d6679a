import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Portico } from '@portico/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeIsListed } from '../src/audit/actions.js';
import { ACTOR_TYPES, auditRow } from '../src/audit/service.js';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/gateway.js';
import { OPERATIONS } from '../src/http/openapi-operations.js';
import { generateMasterKey } from '../src/secrets/keyring.js';
import { insertAuditEntries } from '../src/store/audit.js';
import { type Database, openDatabase } from '../src/store/db.js';
import { BACKENDS, dropSchema, POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runCli, runCliAsync } from './helpers/process.js';

interface Entry {
  id: string;
  at: string;
  actor_type: string;
  actor_id: string;
  credential: string | null;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  status_code: number | null;
  details: Record<string, unknown>;
}

const UA = 'audit-test/1.0';

describe.each(BACKENDS)('audit log ($name)', (backend) => {
  let t: TestGateway;
  /** Every secret the suite hands the gateway or gets back: none may appear in the log. */
  const secrets: string[] = [];
  let calendar: string;
  const ID = 'audited-user';

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true' });
    secrets.push(t.clientSecret, t.gateway.bootstrapAdmin!.password);
    calendar = (await sandboxAccount(t, { provider: 'google_calendar', identifier: ID })).connection;
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = async (p: string, init: { method?: string; json?: unknown; token?: string } = {}) => {
    const res = await t.api(p, { ...init, headers: { 'user-agent': UA } });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: answers are read loosely, field by field
    return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : {}) as any, text };
  };
  const entries = async (query = ''): Promise<Entry[]> => {
    const res = await call(`/api/v1/audit?page_size=200${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body.data as Entry[];
  };
  const find = async (action: string, resourceId?: string): Promise<Entry> => {
    const found = (await entries(`&action=${action}`)).find(
      (e) => resourceId === undefined || e.resource_id === resourceId,
    );
    expect(found, `${action} ${resourceId ?? ''}`).toBeDefined();
    return found!;
  };
  const byClient = (entry: Entry) =>
    expect(entry).toMatchObject({
      actor_type: 'client',
      actor_id: t.clientId,
      credential: t.clientId,
      ip: '127.0.0.1',
      user_agent: UA,
    });

  it('records connection changes with actor, credential, address and resource', async () => {
    const created = await call('/api/v1/connections', {
      method: 'POST',
      json: {
        name: 'audited-notion',
        provider: 'notion',
        client_id: 'audit-id',
        client_secret: 'conn-secret-AAA111',
      },
    });
    expect(created.status, created.text).toBe(201);
    secrets.push('conn-secret-AAA111', 'conn-secret-BBB222');
    const updated = await call('/api/v1/connections/audited-notion', {
      method: 'PATCH',
      json: { client_secret: 'conn-secret-BBB222' },
    });
    expect(updated.status).toBe(200);
    expect((await call('/api/v1/connections/audited-notion', { method: 'DELETE' })).status).toBe(204);

    const entry = await find('connection.created', 'audited-notion');
    byClient(entry);
    expect(entry).toMatchObject({
      resource_type: 'connection',
      status_code: 201,
      details: { provider: 'notion' },
    });
    expect(entry.request_id).toMatch(/^req_/);
    byClient(await find('connection.updated', 'audited-notion'));
    byClient(await find('connection.deleted', 'audited-notion'));
    // Reads and tool calls are not audited.
    expect((await entries()).some((e) => e.action.startsWith('other.'))).toBe(false);
  });

  it('records account imports and deletions', async () => {
    secrets.push('imported-access-token-CCC333');
    const imported = await call('/api/v1/connected-accounts/import', {
      method: 'POST',
      json: {
        connection_name: calendar,
        identifier: 'imported-user',
        access_token: 'imported-access-token-CCC333',
        verify: false,
      },
    });
    expect(imported.status, imported.text).toBe(201);
    const id = imported.body.id as string;
    expect((await call(`/api/v1/connected-accounts/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await find('account.imported', id)).toMatchObject({
      details: { connection_name: calendar, identifier: 'imported-user' },
    });
    byClient(await find('account.deleted', id));
  });

  it('records clients, policies, approvals, webhooks, MCP and proxy tokens', async () => {
    const client = await call('/api/v1/clients', {
      method: 'POST',
      json: { name: 'audited', scopes: ['tools'] },
    });
    expect(client.status).toBe(201);
    secrets.push(client.body.client_secret);
    expect((await call(`/api/v1/clients/${client.body.client_id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await find('client.created', client.body.client_id)).toMatchObject({
      details: { name: 'audited', scopes: ['tools'] },
    });
    await find('client.revoked', client.body.client_id);

    const policy = { name: 'hold-deletes', connection_name: calendar, identifier: ID };
    expect((await call('/api/v1/policies', { method: 'POST', json: policy })).status).toBe(201);
    expect((await call('/api/v1/policies/hold-deletes', { method: 'PUT', json: policy })).status).toBe(200);
    const held = async () =>
      (
        await executeTool(t, {
          tool_name: 'calendar_delete_event',
          identifier: ID,
          tool_input: { event_id: 'audited-event' },
        })
      ).body.approval_id as string;
    const approved = await held();
    const denied = await held();
    expect((await call(`/api/v1/approvals/${approved}/approve`, { method: 'POST', json: {} })).status).toBe(
      200,
    );
    expect((await call(`/api/v1/approvals/${denied}/deny`, { method: 'POST', json: {} })).status).toBe(200);
    // Approving a denied call is refused, and the attempt is recorded.
    const late = await call(`/api/v1/approvals/${denied}/approve`, { method: 'POST', json: {} });
    expect(late.status).toBeGreaterThanOrEqual(400);
    expect((await call('/api/v1/policies/hold-deletes', { method: 'DELETE' })).status).toBe(204);
    await find('policy.created', 'hold-deletes');
    await find('policy.updated', 'hold-deletes');
    await find('policy.deleted', 'hold-deletes');
    byClient(await find('approval.approved', approved));
    byClient(await find('approval.denied', denied));
    expect(await find('approval.approve_refused', denied)).toMatchObject({ status_code: late.status });

    const hook = await call('/api/v1/webhooks', {
      method: 'POST',
      json: { url: 'http://127.0.0.1:9/hooks', events: ['*'] },
    });
    expect(hook.status, hook.text).toBe(201);
    secrets.push(hook.body.secret);
    const rotated = await call(`/api/v1/webhooks/${hook.body.id}/rotate-secret`, { method: 'POST' });
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.secret);
    expect((await call(`/api/v1/webhooks/${hook.body.id}`, { method: 'DELETE' })).status).toBe(204);
    await find('webhook.created', hook.body.id);
    await find('webhook.secret_rotated', hook.body.id);
    await find('webhook.deleted', hook.body.id);

    const mcp = await call('/api/v1/mcp/tokens', { method: 'POST', json: { identifier: ID } });
    expect(mcp.status, mcp.text).toBe(201);
    secrets.push(mcp.body.token);
    expect((await call(`/api/v1/mcp/tokens/${mcp.body.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await find('mcp_token.created', mcp.body.id)).toMatchObject({ details: { identifier: ID } });
    await find('mcp_token.revoked', mcp.body.id);

    const proxy = await call('/api/v1/proxy/tokens', {
      method: 'POST',
      json: { connection_name: calendar, identifier: ID },
    });
    expect(proxy.status, proxy.text).toBe(201);
    secrets.push(proxy.body.token);
    expect((await call(`/api/v1/proxy/tokens/${proxy.body.id}`, { method: 'DELETE' })).status).toBe(204);
    await find('proxy_token.created', proxy.body.id);
    await find('proxy_token.revoked', proxy.body.id);
  });

  it('records dashboard sign-ins, failed ones and sign-outs, with the admin as actor', async () => {
    const admin = t.gateway.bootstrapAdmin!;
    const signIn = (password: string) =>
      fetch(`${t.url}/api/v1/admin/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': UA },
        body: JSON.stringify({ username: admin.username, password }),
      });
    secrets.push('wrong-password-DDD444');
    expect((await signIn('wrong-password-DDD444')).status).toBe(401);
    const ok = await signIn(admin.password);
    expect(ok.status).toBe(201);
    const cookie = ok.headers.get('set-cookie')!.split(';')[0]!;
    const { csrf_token } = (await ok.json()) as { csrf_token: string };
    // A change made in the dashboard names the admin, with "session" as its credential.
    const created = await fetch(`${t.url}/api/v1/policies`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf_token, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'by-admin' }),
    });
    expect(created.status).toBe(201);
    const out = await fetch(`${t.url}/api/v1/admin/session`, {
      method: 'DELETE',
      headers: { cookie, 'x-csrf-token': csrf_token },
    });
    expect(out.status).toBe(204);
    const common = { actor_type: 'admin', actor_id: 'admin', ip: '127.0.0.1', resource_type: 'admin' };
    expect(await find('admin.sign_in_failed')).toMatchObject({ ...common, status_code: 401, user_agent: UA });
    expect(await find('admin.signed_in')).toMatchObject({ ...common, credential: 'password' });
    expect(await find('admin.signed_out')).toMatchObject({ ...common, credential: 'session' });
    expect(await find('policy.created', 'by-admin')).toMatchObject({
      actor_type: 'admin',
      actor_id: 'admin',
      credential: 'session',
    });
  });

  it('filters by actor, action prefix, resource and time, and pages newest first', async () => {
    const all = await entries();
    expect(all.length).toBeGreaterThan(15);
    const times = all.map((e) => e.at);
    expect([...times].sort().reverse()).toEqual(times);
    const connections = await entries('&action=connection.');
    expect(connections.every((e) => e.action.startsWith('connection.'))).toBe(true);
    expect((await entries('&action=connection.&resource_id=audited-notion')).map((e) => e.action)).toEqual([
      'connection.deleted',
      'connection.updated',
      'connection.created',
    ]);
    expect(
      (await entries('&action=connection.created')).every((e) => e.action === 'connection.created'),
    ).toBe(true);
    expect((await entries('&actor_type=admin')).every((e) => e.actor_type === 'admin')).toBe(true);
    // What the first start created by itself is the system's doing.
    expect(
      (await entries('&actor_type=system')).map((e) => [e.action, e.resource_id, e.actor_id]).sort(),
    ).toEqual([
      ['admin.created', 'admin', 'bootstrap'],
      ['client.created', t.clientId, 'bootstrap'],
    ]);
    expect((await entries(`&actor_id=${t.clientId}`)).every((e) => e.actor_id === t.clientId)).toBe(true);
    expect(
      (await entries('&resource_type=policy&resource_id=hold-deletes')).map((e) => e.action).sort(),
    ).toEqual(['policy.created', 'policy.deleted', 'policy.updated']);
    expect(
      await entries(`&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`),
    ).toEqual([]);
    expect(
      (await entries(`&until=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).length,
    ).toBe(all.length);

    const seen: string[] = [];
    let token: string | null = null;
    do {
      const page: { body: { data: Entry[]; next_page_token: string | null } } = await call(
        `/api/v1/audit?page_size=7${token ? `&page_token=${token}` : ''}`,
      );
      expect(page.body.data.length).toBeLessThanOrEqual(7);
      seen.push(...page.body.data.map((e) => e.id));
      token = page.body.next_page_token;
    } while (token);
    expect(seen).toEqual(all.map((e) => e.id));

    const bad = await call('/api/v1/audit?page_token=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_input');
    expect((await call('/api/v1/audit?actor_type=robot')).status).toBe(400);
  });

  it('exports JSON lines, newest first, with the same filters', async () => {
    const res = await t.api('/api/v1/audit/export');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const text = await res.text();
    const lines = text.trimEnd().split('\n');
    const exported = lines.map((line) => JSON.parse(line) as Entry);
    expect(exported.map((e) => e.id)).toEqual((await entries()).map((e) => e.id));
    expect(exported.every((e) => ACTOR_TYPES.includes(e.actor_type as never))).toBe(true);
    const filtered = await (await t.api('/api/v1/audit/export?action=webhook.')).text();
    expect(
      filtered
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as Entry).action),
    ).toEqual(['webhook.deleted', 'webhook.secret_rotated', 'webhook.created']);
    expect(await (await t.api('/api/v1/audit/export?action=nothing.')).text()).toBe('');

    // No secret the suite used or received is anywhere in the log.
    expect(secrets.length).toBeGreaterThan(8);
    for (const secret of secrets) expect(text, 'a secret in the audit log').not.toContain(secret);
  });

  it('is read by the SDK (list, export) and the CLI (audit list, audit export)', async () => {
    const portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    const page = await portico.audit.list({ action: 'webhook.', pageSize: 2 });
    expect(page.data.map((e) => e.action)).toEqual(['webhook.deleted', 'webhook.secret_rotated']);
    expect(page.data[0]).toMatchObject({ actorType: 'client', actorId: t.clientId, resourceType: 'webhook' });
    expect(page.nextPageToken).toBeTruthy();
    const all = [];
    for await (const entry of portico.audit.export({ resourceType: 'policy' })) all.push(entry.action);
    expect(all).toContain('policy.updated');
    expect(all.length).toBe((await entries('&resource_type=policy')).length);

    const env = {
      PORTICO_ENV_URL: t.url,
      PORTICO_CLIENT_ID: t.clientId,
      PORTICO_CLIENT_SECRET: t.clientSecret,
    };
    const listed = await runCliAsync(['audit', 'list', '--action', 'mcp_token.'], env);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/ACTION[\s\S]*mcp_token\.revoked[\s\S]*mcp_token\.created/);
    const exported = await runCliAsync(['audit', 'export', '--action', 'proxy_token.'], env);
    expect(exported.status, exported.stderr).toBe(0);
    const lines = exported.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Entry);
    expect(lines.map((e) => e.action)).toEqual(['proxy_token.revoked', 'proxy_token.created']);
    expect(lines[0]).toMatchObject({ actor_type: 'client', resource_type: 'proxy_token' });
  });

  it('needs the audit:read scope, which runtime clients lack', async () => {
    const runtime = await call('/api/v1/clients', {
      method: 'POST',
      json: { name: 'rt', scopes: ['runtime'] },
    });
    const token = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: runtime.body.client_id,
        client_secret: runtime.body.client_secret,
      }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const refused = await t.api('/api/v1/audit', { token: access_token });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'insufficient_scope', required_scope: 'audit:read' });
  });

  it('names no username no account has on a failed sign-in (a password typed in the wrong field)', async () => {
    const typedPassword = 'Tr0ub4dor&3-in-the-username-field';
    secrets.push(typedPassword);
    const res = await fetch(`${t.url}/api/v1/admin/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': UA },
      body: JSON.stringify({ username: typedPassword, password: 'whatever-it-was' }),
    });
    expect(res.status).toBe(401);
    const failed = (await entries('&action=admin.sign_in_failed')).find(
      (e) => e.actor_id !== t.gateway.bootstrapAdmin!.username,
    );
    expect(failed).toMatchObject({ actor_id: '(unknown username)', resource_id: '(unknown username)' });
    const exported = await (await t.api('/api/v1/audit/export')).text();
    expect(exported).not.toContain(typedPassword);
    expect(exported).not.toContain('whatever-it-was');
  });

  it('lets failed sign-ins go after their retention, and only them', async () => {
    await t.gateway.audit.flush();
    const old = new Date(Date.now() - 31 * 86_400_000);
    const [{ id: environmentId }] = (await t.db.query<{ id: string }>('SELECT id FROM environments')) as [
      { id: string },
    ];
    const entry = (action: string) =>
      auditRow({ environmentId, actorType: 'admin', actorId: 'someone', action, at: old });
    const oldFailure = entry('admin.sign_in_failed');
    const oldChange = entry('connection.created');
    await insertAuditEntries(t.db, [oldFailure, oldChange]);
    const fresh = (await entries('&action=admin.sign_in_failed')).length;
    expect(fresh).toBeGreaterThan(1);
    expect(await t.gateway.audit.pruneFailedSignIns()).toBe(1);
    const ids = (await t.db.query<{ id: string }>('SELECT id FROM audit_log')).map((r) => r.id);
    expect(ids).not.toContain(oldFailure.id);
    expect(ids).toContain(oldChange.id);
    // Recent failures stay; every other entry stays append-only.
    expect((await entries('&action=admin.sign_in_failed')).length).toBe(fresh - 1);
    await expect(t.db.query('DELETE FROM audit_log WHERE id = $1', [oldChange.id])).rejects.toThrow(
      /append-only/,
    );
  });

  it('is append-only: the database refuses UPDATE, DELETE and TRUNCATE', async () => {
    await t.gateway.audit.flush();
    await expect(t.db.query("UPDATE audit_log SET action = 'forged'")).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
    await expect(t.db.query('TRUNCATE audit_log')).rejects.toThrow(/append-only/);
    expect((await entries()).some((e) => e.action === 'forged')).toBe(false);
  });
});

describe('the audit action table', () => {
  it('names every changing API route (recorded, or deliberately not)', () => {
    const unlisted = Object.keys(OPERATIONS)
      .map((key) => key.split(' ') as [string, string])
      .filter(
        ([method, route]) =>
          ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) &&
          route.startsWith('/api/v1/') &&
          route !== '/api/v1/admin/session' &&
          !routeIsListed(method, route),
      );
    expect(unlisted, 'add them to src/audit/actions.ts').toEqual([]);
  });
});

/** CLI commands that open the store record their changes too, with the CLI as actor. */
const STORES = [
  {
    name: 'embedded',
    async env() {
      return { PORTICO_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'portico-audit-')) };
    },
    open: (env: Record<string, string>) =>
      openStore(
        loadConfig({ PORTICO_DATA_DIR: env.PORTICO_DATA_DIR!, PORTICO_MASTER_KEY: env.PORTICO_MASTER_KEY! }),
      ),
    cleanup: async (_env: Record<string, string>) => {},
  },
  ...(postgresAvailable
    ? [
        {
          name: 'postgres',
          async env() {
            const schema = uniqueSchema();
            const db = await openDatabase({ url: POSTGRES_URL, schema });
            await db.close();
            return {
              DATABASE_URL: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
              SCHEMA: schema,
            };
          },
          open: (env: Record<string, string>) => openDatabase({ url: POSTGRES_URL, schema: env.SCHEMA! }),
          cleanup: (env: Record<string, string>) => dropSchema(env.SCHEMA!),
        },
      ]
    : []),
];

describe.each(STORES)('audit log of CLI commands ($name)', (store) => {
  // Five CLI processes in a row, each opening the embedded store: minutes on a loaded machine.
  it('records keys rotate, clients create and revoke, admins create', async () => {
    const env: Record<string, string> = { ...(await store.env()), PORTICO_MASTER_KEY: generateMasterKey() };
    const { SCHEMA: _schema, ...cliEnv } = env;
    try {
      const admin = runCli(['admins', 'create', '--name', 'watcher', '--role', 'viewer'], cliEnv);
      expect(admin.status, admin.stderr).toBe(0);
      const password = /password: (\S+)/.exec(admin.stdout)![1]!;
      const unknownScope = runCli(['clients', 'create', '--scopes', 'runtime,tool'], cliEnv);
      expect(unknownScope.status).toBe(2);
      expect(unknownScope.stderr).toContain('Unknown scope "tool"');
      const client = runCli(
        [
          'clients',
          'create',
          '--name',
          'from-cli',
          '--scopes',
          'runtime,audit:read',
          '--connections',
          'notes',
        ],
        cliEnv,
      );
      expect(client.status, client.stderr).toBe(0);
      const [, clientId, clientSecret] = /client_id:\s+(cli_\w+)\n\s+client_secret:\s+(pcs_\w+)/.exec(
        client.stdout,
      )!;
      expect(runCli(['clients', 'revoke', clientId!], cliEnv).status).toBe(0);
      const rotated = runCli(['keys', 'rotate'], {
        ...cliEnv,
        PORTICO_MASTER_KEY: `${generateMasterKey()},${env.PORTICO_MASTER_KEY}`,
      });
      expect(rotated.status, rotated.stderr).toBe(0);

      const db: Database = await store.open(env);
      try {
        const rows = await db.query<{
          action: string;
          actor_type: string;
          actor_id: string;
          resource_id: string;
          details: unknown;
        }>('SELECT action, actor_type, actor_id, resource_id, details FROM audit_log ORDER BY at, id');
        expect(rows.map((r) => r.action)).toEqual([
          'admin.created',
          'client.created',
          'client.revoked',
          'keys.rotated',
        ]);
        expect(rows.every((r) => r.actor_type === 'cli' && r.actor_id.length > 0)).toBe(true);
        expect(rows[0]).toMatchObject({ resource_id: 'watcher', details: { role: 'viewer' } });
        expect(rows[1]!.resource_id).toBe(clientId);
        const text = JSON.stringify(rows);
        for (const secret of [password, clientSecret!]) expect(text).not.toContain(secret);
        // --scopes and --connections limit the client as the API's would.
        const limited = await db.query<{ scopes: string[]; connection_names: string[]; created_by: string }>(
          'SELECT scopes, connection_names, created_by FROM gateway_clients WHERE id = $1',
          [clientId],
        );
        expect([...limited[0]!.scopes].sort()).toEqual(
          [
            'accounts:read',
            'audit:read',
            'connections:read',
            'executions:read',
            'links',
            'proxy',
            'tokens',
            'tools',
          ].sort(),
        );
        expect(limited[0]).toMatchObject({ connection_names: ['notes'], created_by: 'cli' });
        const role = await db.query<{ role: string }>(
          "SELECT role FROM admin_users WHERE username = 'watcher'",
        );
        expect(role[0]!.role).toBe('viewer');
      } finally {
        await db.close();
      }
    } finally {
      await store.cleanup(env);
    }
  }, 120_000);
});
