import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropic, anthropicToolSearch } from '../../sdk/src/adapters/anthropic.js';
import { openaiChat } from '../../sdk/src/adapters/openai.js';
import { Portico } from '../../sdk/src/index.js';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * An agent that holds only the tools that find tools: it describes its task in words, reads the
 * schema of a tool that the full list would have shown it only past its first page, and calls it,
 * against the sandbox's Google Calendar, through the MCP endpoint (the official SDK's client) and
 * through the OpenAI and Anthropic adapters (the test plays the model's turns).
 */

const USER = 'searcher';
const TASK = 'When is my calendar busy tomorrow between 9am and 5pm?';
const TARGET = 'google_calendar_freebusy_query';
const FREEBUSY_INPUT = {
  body: { timeMin: '2026-03-02T00:00:00Z', timeMax: '2026-03-03T00:00:00Z', items: [{ id: 'primary' }] },
};
const PAGE_SIZE = 20;

type Json = Record<string, unknown>;

describe.each(BACKENDS)('agents find a tool by searching, then call it ($name)', (backend) => {
  let t: TestGateway;
  let portico: Portico;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestGateway(backend, {
      PORTICO_COMPILED_TOOLS: 'true',
      PORTICO_MCP_PAGE_SIZE: String(PAGE_SIZE),
    });
    portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    await sandboxAccount(t, { provider: 'google_calendar', identifier: USER });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await t?.close();
  });

  async function mcp(mode?: string): Promise<Client> {
    const client = new Client({ name: 'portico-test', version: '1.0.0' });
    const url = new URL(`${t.url}/mcp${mode ? `?mode=${mode}` : ''}`);
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${await t.token()}`, identifier: USER } },
      }),
    );
    clients.push(client);
    return client;
  }

  const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

  it('MCP: the full list has the tool past its first page; search mode finds it and calls it', async () => {
    const full = await mcp();
    const firstPage = await full.listTools();
    expect(firstPage.tools).toHaveLength(PAGE_SIZE);
    expect(firstPage.nextCursor).toBeDefined();
    expect(firstPage.tools.map((tool) => tool.name)).not.toContain(TARGET);
    // Not offered outside search mode.
    await expect(full.callTool({ name: 'portico_search_tools', arguments: { query: TASK } })).rejects.toThrow(
      /search mode/,
    );

    const agent = await mcp('search');
    const { tools, nextCursor } = await agent.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'portico_authorize',
      'portico_run_approved',
      'portico_search_tools',
      'portico_call_tool',
    ]);
    expect(nextCursor).toBeUndefined();
    const found = (await agent.callTool({
      name: 'portico_search_tools',
      arguments: { query: TASK, limit: 5 },
    })) as CallToolResult;
    expect(found.isError).toBeFalsy();
    const matches = (found.structuredContent as { tools: Array<{ name: string; inputSchema: Json }> }).tools;
    expect(matches.length).toBeLessThanOrEqual(5);
    const match = matches.find((m) => m.name === TARGET);
    expect(match?.inputSchema).toMatchObject({ type: 'object', properties: { body: expect.any(Object) } });
    // Only the user's connected apps: the user has only a calendar.
    expect(
      matches.every((m) => m.name.startsWith('google_calendar_') || m.name.startsWith('calendar_')),
    ).toBe(true);

    const called = (await agent.callTool({
      name: 'portico_call_tool',
      arguments: { name: TARGET, arguments: FREEBUSY_INPUT },
    })) as CallToolResult;
    expect(called.isError, text(called)).toBeFalsy();
    expect(called.structuredContent).toMatchObject({
      calendars: expect.any(Object),
      execution_id: expect.any(String),
    });

    const typo = (await agent.callTool({
      name: 'portico_call_tool',
      arguments: { name: 'google_calendar_freebusy_qurey', arguments: {} },
    })) as CallToolResult;
    expect(typo.isError).toBe(true);
    expect(text(typo)).toMatch(/"code":"unknown_tool".*google_calendar_freebusy_query/);
    const badQuery = (await agent.callTool({
      name: 'portico_search_tools',
      arguments: {},
    })) as CallToolResult;
    expect(badQuery.isError).toBe(true);
    expect(text(badQuery)).toMatch(/invalid_input/);
  });

  it('refuses a mode the server does not know', async () => {
    const res = await fetch(`${t.url}/mcp?mode=everything`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await t.token()}`,
        identifier: USER,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).detail).toMatch(/mode must be one of: full, search/);
  });

  /** The REST listing's first page: what an application handing the model "the list" would send. */
  async function firstListingPage(): Promise<string[]> {
    const res = await t.api(`/api/v1/tools?page_size=${PAGE_SIZE}`);
    return ((await res.json()) as { data: Json[] }).data.map((d) => d.name as string);
  }

  it('OpenAI adapter: the model searches with portico_search_tools, then calls through portico_call_tool', async () => {
    expect(await firstListingPage()).not.toContain(TARGET);
    const tools = await portico.tools.for(openaiChat, { identifier: USER, mode: 'search' });
    expect(tools.definitions.map((d) => d.function.name)).toEqual([
      'portico_search_tools',
      'portico_call_tool',
      'portico_authorize',
    ]);
    const call = (id: string, name: string, args: unknown): ChatCompletionMessageToolCall => ({
      id,
      type: 'function',
      function: { name, arguments: JSON.stringify(args) },
    });
    const [searched] = await tools.run({ tool_calls: [call('c1', 'portico_search_tools', { query: TASK })] });
    const { tools: matches } = JSON.parse((searched!.content as string).split('\n')[0]!) as {
      tools: Array<{ name: string; input_schema: Json }>;
    };
    expect(matches.map((m) => m.name)).toContain(TARGET);
    const [ran] = await tools.run({
      tool_calls: [call('c2', 'portico_call_tool', { name: TARGET, arguments: FREEBUSY_INPUT })],
    });
    expect(ran!.tool_call_id).toBe('c2');
    expect(JSON.parse(ran!.content as string)).toHaveProperty('calendars');
    // A tool outside what the tool set offers is refused, for the model to correct.
    const [outside] = await tools.run({
      tool_calls: [call('c3', 'portico_call_tool', { name: 'notes_user_list', arguments: {} })],
    });
    expect(outside!.content).toMatch(/invalid_input.*not one of the tools/);
  });

  it('Anthropic adapter: the same two tools, and deferred loading with a tool search tool', async () => {
    const tools = await portico.tools.for(anthropic, { identifier: USER, mode: 'search' });
    const [found] = await tools.results({
      content: [{ type: 'tool_use', id: 'u1', name: 'portico_search_tools', input: { query: TASK } }],
    } as never);
    expect(found!.content as string).toContain(TARGET);
    const [ran] = await tools.results({
      content: [
        {
          type: 'tool_use',
          id: 'u2',
          name: 'portico_call_tool',
          input: { name: TARGET, arguments: FREEBUSY_INPUT },
        },
      ],
    } as never);
    expect(ran!.is_error).toBeUndefined();
    expect(JSON.parse(ran!.content as string)).toHaveProperty('calendars');

    // Deferred loading: every tool deferred behind Anthropic's BM25 tool search tool; the tool the
    // server-side search loads arrives as an ordinary tool_use and runs.
    const deferred = await portico.tools.for(anthropicToolSearch(), { identifier: USER });
    const [searcher, ...rest] = deferred.definitions as unknown as Json[];
    expect(searcher).toEqual({ type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' });
    expect(rest.find((d) => d.name === TARGET)).toMatchObject({ defer_loading: true });
    expect(rest.find((d) => d.name === 'portico_authorize')).not.toHaveProperty('defer_loading');
    const [loaded] = await deferred.results({
      content: [
        { type: 'server_tool_use', id: 'srv1', name: 'tool_search_tool_bm25', input: { query: 'free busy' } },
        { type: 'tool_search_tool_result', tool_use_id: 'srv1', content: {} },
        { type: 'tool_use', id: 'u3', name: TARGET, input: FREEBUSY_INPUT },
      ],
    } as never);
    expect(loaded!.tool_use_id).toBe('u3');
    expect(JSON.parse(loaded!.content as string)).toHaveProperty('calendars');

    // Portico's own search as Anthropic's custom tool search: tool_reference blocks load the matches.
    const custom = await portico.tools.for(anthropicToolSearch({ search: 'portico' }), { identifier: USER });
    expect((custom.definitions[0] as unknown as Json).name).toBe('portico_search_tools');
    const [references] = await custom.results({
      content: [{ type: 'tool_use', id: 'u4', name: 'portico_search_tools', input: { query: TASK } }],
    } as never);
    expect(references!.content).toEqual(
      expect.arrayContaining([{ type: 'tool_reference', tool_name: TARGET }]),
    );
  });
});
