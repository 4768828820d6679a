import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

type Json = Record<string, unknown>;
const USER = 'toolset_user';

describe.each(BACKENDS)('toolsets ($name)', (backend) => {
  let t: TestGateway;
  let calendar: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_MCP_PAGE_SIZE: '2' });
    ({ connection: calendar } = await sandboxAccount(t, { provider: 'google_calendar', identifier: USER }));
    await sandboxAccount(t, { provider: 'notion', identifier: USER });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await t?.close();
  });

  async function call(method: string, path: string, json?: unknown): Promise<{ status: number; body: Json }> {
    const res = await t.api(path, { method, ...(json === undefined ? {} : { json }) });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  async function mcp(path: string): Promise<Client> {
    const client = new Client({ name: 'portico-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${await t.token()}`, identifier: USER } },
      }),
    );
    clients.push(client);
    return client;
  }

  /** Every tool of an MCP client's list, page after page. */
  async function allTools(client: Client): Promise<string[]> {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor);
    return names;
  }

  it('creates, reads, lists, changes and deletes toolsets, checking what they name', async () => {
    const created = await call('POST', '/api/v1/toolsets', {
      name: 'calendar-readers',
      description: 'Read the calendar, change nothing',
      providers: ['google_calendar'],
      tags: ['read-only'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      name: 'calendar-readers',
      mcp_mode: 'full',
      mcp_url: `${t.url}/mcp/t/calendar-readers`,
    });
    expect(
      (await call('POST', '/api/v1/toolsets', { name: 'calendar-readers', tools: ['notes_user_list'] })).body
        .code,
    ).toBe('toolset_exists');
    expect((await call('GET', '/api/v1/toolsets/calendar-readers')).body).toMatchObject({
      tags: ['read-only'],
    });

    const bad = await call('POST', '/api/v1/toolsets', {
      name: 'typos',
      tools: ['notes_user_lst'],
      tags: ['readonly'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/\/tools\/0 is no tool's name \(did you mean "notes_user_list"\?\)/);
    expect(bad.body.detail).toMatch(/\/tags\/0 is no tool's tag/);
    expect((await call('POST', '/api/v1/toolsets', { name: 'empty' })).body.detail).toMatch(
      /at least one of/,
    );
    expect((await call('POST', '/api/v1/toolsets', { name: 'gone', connections: ['nope'] })).body.code).toBe(
      'connection_not_found',
    );
    expect(
      (await call('POST', '/api/v1/toolsets', { name: 'Bad Name', tools: ['notes_user_list'] })).status,
    ).toBe(400);

    for (const name of ['notes-and-one', 'scratch']) {
      expect(
        (
          await call('POST', '/api/v1/toolsets', {
            name,
            patterns: ['notes_page_*'],
            tools: ['calendar_list_events'],
            mcp_mode: 'search',
          })
        ).status,
      ).toBe(201);
    }
    const first = await call('GET', '/api/v1/toolsets?page_size=2');
    expect((first.body.data as Json[]).map((d) => d.name)).toEqual(['calendar-readers', 'notes-and-one']);
    const second = await call('GET', `/api/v1/toolsets?page_size=2&page_token=${first.body.next_page_token}`);
    expect((second.body.data as Json[]).map((d) => d.name)).toEqual(['scratch']);
    expect(second.body.next_page_token).toBeNull();

    const changed = await call('PATCH', '/api/v1/toolsets/scratch', { tools: null, connections: [calendar] });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).not.toHaveProperty('tools');
    expect(changed.body).toMatchObject({ patterns: ['notes_page_*'], connections: [calendar] });
    expect((await call('DELETE', '/api/v1/toolsets/scratch')).status).toBe(204);
    const missing = await call('GET', '/api/v1/toolsets/calendar-reader');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'toolset_not_found' });
    expect(missing.body.detail).toMatch(/did you mean/);
  });

  it('every listing takes a toolset: the whole list, a search, any format', async () => {
    const listed = await call('GET', '/api/v1/tools?toolset=calendar-readers');
    const names = (listed.body.data as Json[]).map((d) => d.name as string).sort();
    expect(names).toEqual(['calendar_get_event_by_id', 'calendar_list_calendars', 'calendar_list_events']);
    const searched = await call(
      'GET',
      '/api/v1/tools?toolset=notes-and-one&query=create+a+page&format=openai',
    );
    const found = (searched.body.data as Array<{ function: { name: string } }>).map((d) => d.function.name);
    expect(found[0]).toBe('notes_page_create');
    expect(found.every((n) => n.startsWith('notes_page_') || n === 'calendar_list_events')).toBe(true);
    expect((await call('GET', '/api/v1/tools?toolset=nope')).body.code).toBe('toolset_not_found');
  });

  it("serves an MCP server per toolset: only the toolset's tools, paginated; a call outside it is refused", async () => {
    const client = await mcp('/mcp/t/calendar-readers');
    const first = await client.listTools();
    expect(first.tools).toHaveLength(2);
    expect(first.nextCursor).toBeDefined();
    const names = await allTools(client);
    expect(names.sort()).toEqual(
      [
        'calendar_get_event_by_id',
        'calendar_list_calendars',
        'calendar_list_events',
        'portico_authorize',
        'portico_run_approved',
      ].sort(),
    );
    const inside = (await client.callTool({
      name: 'calendar_list_calendars',
      arguments: {},
    })) as CallToolResult;
    expect(inside.isError, JSON.stringify(inside.content)).toBeFalsy();
    // The user has a Notion account, but Notion is not in the toolset; nor is creating an event.
    for (const name of ['notes_user_list', 'calendar_create_event']) {
      const outside = (await client.callTool({ name, arguments: {} })) as CallToolResult;
      expect(outside.isError).toBe(true);
      const problem = JSON.parse((outside.content[0] as { text: string }).text) as Json;
      expect(problem.code).toBe('tool_not_allowed');
      expect(problem.detail).toContain(`${name} is not in the toolset "calendar-readers"`);
    }
    // The same server without a toolset offers more.
    expect((await allTools(await mcp('/mcp'))).length).toBeGreaterThan(names.length);
  });

  it("a toolset in search mode searches only its own tools; an unknown toolset's URL is 404", async () => {
    const client = await mcp('/mcp/t/notes-and-one');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
      'portico_authorize',
      'portico_run_approved',
    ]);
    expect(await allTools(client)).toContain('portico_search_tools');
    const found = (await client.callTool({
      name: 'portico_search_tools',
      arguments: { query: 'list the users of the workspace', limit: 20 },
    })) as CallToolResult;
    const matches = (found.structuredContent as { tools: Array<{ name: string }> }).tools.map((m) => m.name);
    expect(matches.length).toBeGreaterThan(0);
    expect(matches.every((n) => n.startsWith('notes_page_') || n === 'calendar_list_events')).toBe(true);
    const refused = (await client.callTool({
      name: 'portico_call_tool',
      arguments: { name: 'notes_user_list', arguments: {} },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(/tool_not_allowed/);

    const res = await fetch(`${t.url}/mcp/t/nope`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await t.token()}`,
        identifier: USER,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).code).toBe('toolset_not_found');
  });

  it('records toolset changes in the audit log', async () => {
    const { body } = await call('GET', '/api/v1/audit?resource_type=toolset');
    const actions = (body.data as Json[]).map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining(['toolset.created', 'toolset.updated', 'toolset.deleted']),
    );
  });
});
