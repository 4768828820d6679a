import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, createSandboxConnection, openLink, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const ADA = 'ada@example.com';
const PAGE_SIZE = 7;

/** The MCP endpoint by the book: origins, CORS, JSON-RPC error codes, 401s, schemas, pages, list changes. */
describe.each(BACKENDS)('MCP protocol details ($name)', (backend) => {
  let t: TestGateway;
  let token: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_MCP_PAGE_SIZE: String(PAGE_SIZE) });
    await sandboxAccount(t, { provider: 'notion', identifier: ADA, connection: 'notes' });
    await createSandboxConnection(t, 'calendar', 'google_calendar');
    token = await t.token();
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await t?.close();
  });

  async function connect(identifier = ADA): Promise<Client> {
    const client = new Client({ name: 'portico-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}`, identifier } },
      }),
    );
    clients.push(client);
    return client;
  }

  /** A raw POST to /mcp as Ada, for what the SDK client would never send. */
  async function post(body: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      body,
      headers: {
        authorization: `Bearer ${token}`,
        identifier: ADA,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
    });
    const text = await res.text();
    return { res, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  }

  it('refuses a foreign Origin with 403 and answers CORS to allowed origins only', async () => {
    const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    const foreign = await post(list, { origin: 'http://evil.example' });
    expect(foreign.res.status).toBe(403);
    expect(foreign.json).toMatchObject({ code: 'origin_not_allowed' });
    expect(String(foreign.json?.detail)).toContain('PORTICO_MCP_ALLOWED_ORIGINS');
    expect(foreign.res.headers.get('access-control-allow-origin')).toBeNull();

    // The public URL's origin and loopback on any port are allowed by default.
    for (const origin of [new URL(t.url).origin, 'http://localhost:6274']) {
      const allowed = await post(list, { origin });
      expect(allowed.res.status, origin).toBe(200);
      expect(allowed.res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(allowed.res.headers.get('access-control-expose-headers')).toContain('www-authenticate');
    }
    const preflight = await fetch(`${t.url}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const refused = await fetch(`${t.url}/mcp`, { method: 'OPTIONS', headers: { origin: 'null' } });
    expect(refused.status).toBe(403);

    // The OAuth metadata is public: CORS for allowed origins, none (but still an answer) for others.
    const metadata = `${t.url}/.well-known/oauth-protected-resource/mcp`;
    const fromLoopback = await fetch(metadata, { headers: { origin: 'http://127.0.0.1:6274' } });
    expect(fromLoopback.status).toBe(200);
    expect(fromLoopback.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:6274');
    const fromElsewhere = await fetch(metadata, { headers: { origin: 'http://evil.example' } });
    expect(fromElsewhere.status).toBe(200);
    expect(fromElsewhere.headers.get('access-control-allow-origin')).toBeNull();
    const server = await fetch(`${t.url}/.well-known/oauth-authorization-server`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'GET' },
    });
    expect(server.status).toBe(204);
    expect(server.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
  });

  it('answers unparseable JSON with a JSON-RPC -32700, not an HTTP problem', async () => {
    const { res, json } = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('answers a malformed JSON-RPC object with -32600, echoing a usable id', async () => {
    const noMethod = await post('{"jsonrpc":"2.0","id":7,"params":{}}');
    expect(noMethod.res.status).toBe(400);
    expect(noMethod.json).toMatchObject({ id: 7, error: { code: -32600 } });
    const notJsonRpc = await post('{"foo":1}');
    expect(notJsonRpc.json).toMatchObject({ id: null, error: { code: -32600 } });
    const emptyBatch = await post('[]');
    expect(emptyBatch.json).toMatchObject({ error: { code: -32600 } });
  });

  it('answers invalid tools/call params with -32602', async () => {
    const noName = await post('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}');
    expect(noName.json).toMatchObject({ id: 2, error: { code: -32602 } });
    const badArguments = await post(
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes_user_list","arguments":"x"}}',
    );
    expect(badArguments.json).toMatchObject({ id: 3, error: { code: -32602 } });
  });

  it('answers an unknown tool with a -32602 protocol error and records no execution', async () => {
    const { json } = await post(
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"notes_user_lst","arguments":{}}}',
    );
    expect(json).toMatchObject({
      id: 4,
      error: { code: -32602, data: { code: 'unknown_tool', did_you_mean: 'notes_user_list' } },
    });
    // The message as it stands; the client's own error class adds "MCP error -32602:" once.
    expect(json?.error).toHaveProperty(
      'message',
      expect.stringMatching(/^Unknown tool: notes_user_lst\. Did you mean/),
    );
    expect(JSON.stringify(json)).not.toContain('exec_');
    const records = await t.api('/api/v1/executions?tool_name=notes_user_lst');
    expect(((await records.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('answers a cursor it never issued with -32602', async () => {
    const { json } = await post('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"bogus"}}');
    expect(json).toMatchObject({
      id: 5,
      error: { code: -32602, message: expect.stringMatching(/^Invalid cursor/) },
    });
  });

  it('gives a 401 without credential no error code, the scope and the metadata; a bad token invalid_token', async () => {
    const bare = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(bare.status).toBe(401);
    const challenge = bare.headers.get('www-authenticate')!;
    expect(challenge).not.toContain('error=');
    expect(challenge).toContain('scope="mcp"');
    expect(challenge).toContain('resource_metadata="');
    const body = (await bare.json()) as { detail: string };
    expect(body.detail).not.toMatch(/client_id|client credentials|\/oauth\/token/);

    const wrong = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', authorization: 'Bearer pmt_notatoken' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token".*scope="mcp"/);
  });

  it('pages tools/list with cursors, Portico’s own tools first; schemas without version parameters, with outputSchema', async () => {
    const client = await connect();
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      expect(page.tools.length).toBeLessThanOrEqual(PAGE_SIZE);
      names.push(...page.tools.map((tool) => tool.name));
      for (const tool of page.tools) {
        expect(Object.keys(tool.inputSchema.properties ?? {}), tool.name).not.toEqual(
          expect.arrayContaining(['schema_version']),
        );
        expect(tool.inputSchema.properties ?? {}, tool.name).not.toHaveProperty('tool_version');
        expect(tool.inputSchema.properties ?? {}, tool.name).not.toHaveProperty('upstream_version');
        expect(tool.outputSchema?.type, tool.name).toBe('object');
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(names.slice(0, 2)).toEqual(['portico_authorize', 'portico_run_approved']);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('notes_user_list');

    // Still accepted in the input; the SDK client checks structuredContent against outputSchema.
    const result = (await client.callTool({
      name: 'notes_user_list',
      arguments: { page_size: 1, schema_version: '1', upstream_version: '2022-06-28' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ execution_id: expect.stringMatching(/^exec_/) });
  });

  it('sends notifications/tools/list_changed to a connected client once its user authorizes', async () => {
    const client = await connect();
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()),
    );
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    const result = (await client.callTool({
      name: 'portico_authorize',
      arguments: { connection_name: 'calendar' },
    })) as CallToolResult;
    const { link } = result.structuredContent as { link: string };
    const start = await openLink(link);
    const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    expect(done.status).toBe(200);
    await changed;
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(names).toContain('calendar_create_event');
  });

  it('answers DELETE (no session to end) with 204', async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, identifier: ADA },
    });
    expect(res.status).toBe(204);
  });
});
