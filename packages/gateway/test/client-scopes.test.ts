import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { gatewayToken } from './helpers/token.js';

describe.each(BACKENDS)('scoped gateway clients on $name', (backend) => {
  let t: TestGateway;
  const ID = 'scoped-user';
  let notion: string;
  let calendar: string;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    notion = (await sandboxAccount(t, { provider: 'notion', identifier: ID })).connection;
    calendar = (await sandboxAccount(t, { provider: 'google_calendar', identifier: ID })).connection;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function client(body: Record<string, unknown>) {
    const res = await t.api('/api/v1/clients', { method: 'POST', json: body });
    const created = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(created)).toBe(201);
    const token = await gatewayToken(t.url, created.client_id as string, created.client_secret as string);
    return { created, token };
  }
  const as = (
    token: string,
    path: string,
    init: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
  ) => t.api(path, { ...init, token });

  it('a runtime client runs tools, links and the proxy, and is refused administration with the scope named', async () => {
    const { created, token } = await client({ name: 'agent runtime', scopes: ['runtime'] });
    expect(created.scopes).toEqual(expect.arrayContaining(['links', 'tools', 'proxy', 'accounts:read']));
    expect(created.scopes).not.toContain('clients');
    const tool = await as(token, '/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_user_list', identifier: ID, tool_input: { page_size: 1 } },
    });
    expect(tool.status).toBe(200);
    const link = await as(token, '/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: notion, identifier: 'someone-new' },
    });
    expect(link.status).toBeLessThan(300);
    const proxied = await as(token, '/proxy/v1/users/me', {
      headers: { connection_name: notion, identifier: ID },
    });
    expect(proxied.status).toBe(200);
    // Twice: the second takes the proxy's fast path, which must hold the same line.
    expect(
      (await as(token, '/proxy/v1/users/me', { headers: { connection_name: notion, identifier: ID } }))
        .status,
    ).toBe(200);

    for (const [method, path, scope] of [
      ['GET', '/api/v1/clients', 'clients'],
      ['POST', '/api/v1/connections', 'connections'],
      ['GET', '/api/v1/webhooks', 'webhooks'],
      ['GET', '/api/v1/policies', 'policies'],
    ] as const) {
      const refused = await as(
        token,
        path,
        method === 'POST' ? { method, json: { name: 'x', provider: 'notion' } } : { method },
      );
      expect(refused.status, path).toBe(403);
      const problem = (await refused.json()) as Record<string, string>;
      expect(problem).toMatchObject({ code: 'insufficient_scope', required_scope: scope });
      expect(problem.detail).toContain(`"${scope}"`);
    }
  });

  it('a client cannot revoke a wider one, or give a new client more than it has', async () => {
    const { token: limited } = await client({ name: 'limited', scopes: ['tools', 'clients'] });
    // The bootstrap client has every scope: a narrower client cannot revoke it.
    const revoke = await as(limited, `/api/v1/clients/${t.clientId}`, { method: 'DELETE' });
    expect(revoke.status).toBe(403);
    expect(((await revoke.json()) as { code: string }).code).toBe('insufficient_scope');
    const wider = await as(limited, '/api/v1/clients', {
      method: 'POST',
      json: { name: 'wider', scopes: ['admin'] },
    });
    expect(wider.status).toBe(403);
    expect(((await wider.json()) as { code: string }).code).toBe('insufficient_scope');
    const narrower = await as(limited, '/api/v1/clients', {
      method: 'POST',
      json: { name: 'narrower', scopes: ['tools'] },
    });
    expect(narrower.status).toBe(201);
    const { client_id: narrowerId } = (await narrower.json()) as { client_id: string };
    expect((await as(limited, `/api/v1/clients/${narrowerId}`, { method: 'DELETE' })).status).toBe(204);
    const unknown = await as(limited, '/api/v1/clients', {
      method: 'POST',
      json: { name: 'typo', scopes: ['tool'] },
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('/scopes/0');
    // The bootstrap client still works.
    expect((await t.api('/api/v1/clients')).status).toBe(200);
  });

  it('a client limited to some connections reaches only those, by tools, links and the proxy', async () => {
    const { token } = await client({ name: 'notion only', scopes: ['runtime'], connection_names: [notion] });
    const allowed = await as(token, '/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_user_list', identifier: ID, tool_input: { page_size: 1 } },
    });
    expect(allowed.status).toBe(200);
    const tool = await as(token, '/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'calendar_list_calendars', identifier: ID, tool_input: {} },
    });
    expect(tool.status).toBe(403);
    expect(await tool.json()).toMatchObject({ code: 'insufficient_scope', allowed_connections: [notion] });
    const link = await as(token, '/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: calendar, identifier: ID },
    });
    expect(link.status).toBe(403);
    for (let i = 0; i < 2; i++) {
      const proxied = await as(token, '/calendar/v3/users/me/calendarList'.replace(/^/, '/proxy'), {
        headers: { connection_name: calendar, identifier: ID },
      });
      expect(proxied.status).toBe(403);
    }
    // The bootstrap client (created before scopes) still does everything.
    expect(
      (await executeTool(t, { tool_name: 'calendar_list_calendars', identifier: ID, tool_input: {} })).status,
    ).toBe(200);
  });
});
