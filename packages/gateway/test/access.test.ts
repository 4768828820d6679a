import { Code, type ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectedAccountService, ConnectionService, ToolService } from '../src/grpc/descriptors.js';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { gatewayToken } from './helpers/token.js';

/**
 * A client limited to some connections reaches only those, however it asks: records by id, lists,
 * tokens it mints, MCP OAuth grants it approves, and every gRPC method (auth/access.ts).
 */
describe.each(BACKENDS)('what a limited client may reach on $name', (backend) => {
  let t: TestGateway;
  const ID = 'reach-user';
  let notion: string;
  let calendar: string;
  let calendarAccount: string;
  let limited: string;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    notion = (await sandboxAccount(t, { provider: 'notion', identifier: ID })).connection;
    const cal = await sandboxAccount(t, { provider: 'google_calendar', identifier: ID });
    calendar = cal.connection;
    calendarAccount = cal.accountId;
    // One execution on each connection, for the list and the record by id.
    expect(
      (await executeTool(t, { tool_name: 'calendar_list_calendars', identifier: ID, tool_input: {} })).status,
    ).toBe(200);
    expect(
      (await executeTool(t, { tool_name: 'notes_user_list', identifier: ID, tool_input: { page_size: 1 } }))
        .status,
    ).toBe(200);
    limited = await client({
      name: 'notion only',
      scopes: ['runtime', 'accounts'],
      connection_names: [notion],
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function client(body: Record<string, unknown>): Promise<string> {
    const res = await t.api('/api/v1/clients', { method: 'POST', json: body });
    const created = (await res.json()) as Record<string, string>;
    expect(res.status, JSON.stringify(created)).toBe(201);
    return gatewayToken(t.url, created.client_id!, created.client_secret!);
  }
  const as = (token: string, path: string, init: { method?: string; json?: unknown } = {}) =>
    t.api(path, { ...init, token });
  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

  it('lists show only its connections: accounts, executions, connections, the summary', async () => {
    const accounts = (await json(await as(limited, '/api/v1/connected-accounts'))).data as Array<{
      connection_name: string;
    }>;
    expect(accounts.length).toBeGreaterThan(0);
    expect(new Set(accounts.map((a) => a.connection_name))).toEqual(new Set([notion]));
    const executions = (await json(await as(limited, '/api/v1/executions'))).data as Array<{
      connection_name: string;
    }>;
    expect(executions.length).toBeGreaterThan(0);
    expect(new Set(executions.map((e) => e.connection_name))).toEqual(new Set([notion]));
    const connections = (await json(await as(limited, '/api/v1/connections'))).data as Array<{
      name: string;
    }>;
    expect(connections.map((c) => c.name)).toEqual([notion]);
    const summary = await json(await as(limited, '/api/v1/connected-accounts/summary'));
    expect(
      (summary.by_connection as Array<{ connection_name: string }>).map((c) => c.connection_name),
    ).toEqual([notion]);
    const filtered = await as(limited, `/api/v1/connected-accounts?connection_name=${calendar}`);
    expect(filtered.status).toBe(403);
    // The unlimited client still sees both.
    const all = (await json(await t.api('/api/v1/executions'))).data as Array<{ connection_name: string }>;
    expect(new Set(all.map((e) => e.connection_name))).toEqual(new Set([notion, calendar]));
  });

  it('records of other connections found by id answer as missing, and are not disconnected', async () => {
    const get = await as(limited, `/api/v1/connected-accounts/${calendarAccount}`);
    expect(get.status).toBe(404);
    expect((await json(get)).code).toBe('account_not_found');
    const del = await as(limited, `/api/v1/connected-accounts/${calendarAccount}`, { method: 'DELETE' });
    expect(del.status).toBe(404);
    const still = await json(await t.api(`/api/v1/connected-accounts/${calendarAccount}`));
    expect(still.status).toBe('ACTIVE');
    const all = (await json(await t.api('/api/v1/executions'))).data as Array<{
      id: string;
      connection_name: string;
    }>;
    const other = all.find((e) => e.connection_name === calendar)!;
    expect((await as(limited, `/api/v1/executions/${other.id}`)).status).toBe(404);
    const mine = all.find((e) => e.connection_name === notion)!;
    expect((await as(limited, `/api/v1/executions/${mine.id}`)).status).toBe(200);
  });

  it('an MCP token it mints never exceeds it, and a client without tools cannot mint one', async () => {
    const minted = await as(limited, '/api/v1/mcp/tokens', { method: 'POST', json: { identifier: ID } });
    expect(minted.status).toBe(201);
    expect((await json(minted)).connection_names).toEqual([notion]);
    const wider = await as(limited, '/api/v1/mcp/tokens', {
      method: 'POST',
      json: { identifier: ID, connection_names: [notion, calendar] },
    });
    expect(wider.status).toBe(403);
    expect((await json(wider)).code).toBe('insufficient_scope');
    const tokensOnly = await client({ name: 'tokens only', scopes: ['tokens'] });
    const refused = await as(tokensOnly, '/api/v1/mcp/tokens', { method: 'POST', json: { identifier: ID } });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ code: 'insufficient_scope', required_scope: 'tools' });
    // An MCP OAuth approval is held to the same line before the request is even looked up.
    const approve = await as(limited, '/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: 'mcpr_unknown', identifier: ID, connection_names: [calendar] },
    });
    expect(approve.status).toBe(403);
    expect((await json(approve)).code).toBe('insufficient_scope');
    // The runtime preset mints tokens but does not choose where every MCP user signs in.
    const settings = await as(limited, '/api/v1/mcp/oauth/settings', {
      method: 'PUT',
      json: { sign_in_url: 'https://attacker.example/sign-in' },
    });
    expect(settings.status).toBe(403);
    expect(await json(settings)).toMatchObject({ code: 'insufficient_scope', required_scope: 'environment' });
  });

  it('gRPC holds the same line: ExecuteTool, ListConnectedAccounts, magic links, connections', async () => {
    const transport = createGrpcTransport({ baseUrl: t.url });
    const headers = { authorization: `Bearer ${limited}` };
    const tools = createClient(ToolService, transport);
    const accounts = createClient(ConnectedAccountService, transport);
    const connections = createClient(ConnectionService, transport);
    const code = async (p: Promise<unknown>) =>
      (
        (await p.then(
          () => undefined,
          (e: unknown) => e,
        )) as ConnectError
      )?.code;

    expect(
      await code(
        tools.executeTool(
          { toolName: 'calendar_list_calendars', identifier: ID, connector: calendar },
          { headers },
        ),
      ),
    ).toBe(Code.PermissionDenied);
    expect(
      await code(
        tools.executeTool(
          { toolName: 'calendar_list_calendars', connectedAccountId: calendarAccount },
          { headers },
        ),
      ),
    ).toBe(Code.NotFound);
    // Without a connector the engine itself refuses the other connection's tool.
    expect(
      await code(tools.executeTool({ toolName: 'calendar_list_calendars', identifier: ID }, { headers })),
    ).toBe(Code.PermissionDenied);
    const ran = await tools.executeTool(
      { toolName: 'notes_user_list', identifier: ID, params: { page_size: 1 } },
      { headers },
    );
    expect(ran.executionId).toMatch(/^exec_/);

    const listed = await accounts.listConnectedAccounts({}, { headers });
    expect(new Set(listed.connectedAccounts.map((a) => a.connector))).toEqual(new Set([notion]));
    expect(await code(accounts.listConnectedAccounts({ connector: calendar }, { headers }))).toBe(
      Code.PermissionDenied,
    );
    expect(await code(accounts.getConnectedAccountAuth({ id: calendarAccount }, { headers }))).toBe(
      Code.NotFound,
    );
    expect(
      await code(accounts.getConnectedAccountAuth({ connector: calendar, identifier: ID }, { headers })),
    ).toBe(Code.PermissionDenied);
    expect(
      await code(
        accounts.getMagicLinkForConnectedAccount({ connector: calendar, identifier: ID }, { headers }),
      ),
    ).toBe(Code.PermissionDenied);
    expect(await code(accounts.getMagicLinkForConnectedAccount({ id: calendarAccount }, { headers }))).toBe(
      Code.NotFound,
    );
    expect(await code(accounts.deleteConnectedAccount({ id: calendarAccount }, { headers }))).toBe(
      Code.NotFound,
    );
    const apps = await connections.listAppConnections({}, { headers });
    expect(apps.connections.map((c) => c.keyId)).toEqual([notion]);
  });

  it('a client without links creates no account for a new end user, on any interface', async () => {
    const noLinks = await client({ name: 'no links', scopes: ['tools', 'proxy', 'tokens', 'accounts:read'] });
    const NEW = 'never-seen-user';
    const refused = (body: Record<string, unknown>) => {
      expect(body).toMatchObject({
        code: 'account_not_found_links_required',
        required_scope: 'links',
        identifier: NEW,
      });
      expect(body).not.toHaveProperty('authorization_link');
    };
    // REST tools, with and without the connection named.
    for (const named of [{ connection_name: notion }, {}]) {
      const res = await as(noLinks, '/api/v1/tools/execute', {
        method: 'POST',
        json: { tool_name: 'notes_user_list', identifier: NEW, tool_input: {}, ...named },
      });
      expect(res.status).toBe(403);
      refused(await json(res));
    }
    // The proxy.
    const proxied = await t.api('/proxy/v1/users/me', {
      token: noLinks,
      headers: { connection_name: notion, identifier: NEW },
    });
    expect(proxied.status).toBe(403);
    refused(await json(proxied));
    // gRPC.
    const tools = createClient(ToolService, createGrpcTransport({ baseUrl: t.url }));
    const grpc = (await tools
      .executeTool(
        { toolName: 'notes_user_list', identifier: NEW, connector: notion },
        { headers: { authorization: `Bearer ${noLinks}` } },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as ConnectError;
    expect(grpc.code).toBe(Code.PermissionDenied);
    expect(grpc.message).toContain('"links" scope');
    // MCP, with the client's own token and with an MCP token it mints: no tool call and no
    // portico_authorize hands out a link.
    const minted = await json(
      await as(noLinks, '/api/v1/mcp/tokens', { method: 'POST', json: { identifier: NEW } }),
    );
    for (const headers of <Record<string, string>[]>[
      { authorization: `Bearer ${noLinks}`, identifier: NEW },
      { authorization: `Bearer ${minted.token as string}` },
    ]) {
      const mcp = new Client({ name: 'access-test', version: '1.0.0' });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } }),
      );
      try {
        const call = (await mcp.callTool({ name: 'notes_user_list', arguments: {} })) as CallToolResult;
        expect(call.isError).toBe(true);
        expect((call.content[0] as { text: string }).text).toContain('account_not_found_links_required');
        const link = (await mcp.callTool({
          name: 'portico_authorize',
          arguments: { connection_name: notion },
        })) as CallToolResult;
        expect(link.isError).toBe(true);
        expect((link.content[0] as { text: string }).text).toContain('insufficient_scope');
      } finally {
        await mcp.close();
      }
    }
    // A client with links but limited to notion creates nothing on the calendar connection either.
    const outside = await as(limited, '/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'calendar_list_calendars', identifier: NEW, tool_input: {} },
    });
    expect(outside.status).toBe(403);
    expect((await json(outside)).code).toBe('insufficient_scope');
    // Nothing was created for the new user.
    const listed = await json(await t.api(`/api/v1/connected-accounts?identifier=${NEW}`));
    expect(listed.data).toEqual([]);
    // A client with links still gets the account created, and the link that authorizes it.
    const runtime = await client({ name: 'runtime', scopes: ['runtime'] });
    const linked = await as(runtime, '/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_user_list', identifier: NEW, tool_input: {}, connection_name: notion },
    });
    expect(linked.status).toBe(409);
    expect(await json(linked)).toMatchObject({
      code: 'account_not_active',
      authorization_link: { link: expect.any(String) },
    });
  });
});
