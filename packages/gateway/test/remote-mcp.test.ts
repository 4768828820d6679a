import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { ScalekitClient } from '@scalekit-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Portico } from '../../sdk/src/index.js';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, authorize, executeTool } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * A remote MCP server as a connection, end to end: Portico discovers its authorization server
 * from the 401, registers itself (dynamically, or with the operator's client), sends the end user
 * through the ordinary authorization link (PKCE S256, resource indicator), and serves the
 * server's tools as its own for user_42, through the token lifecycle and the guardrails.
 */
describe.each(BACKENDS)('remote MCP servers as connections on $name', (backend) => {
  let t: TestGateway;
  let emu: RunningEmulators;
  const ID = 'user_42';
  const notesOf = async (variant: string, user = 'mcp-user-1') =>
    ((await (await fetch(`${emu.urls.mcp}/${variant}/_notes/${user}`)).json()) as { notes: unknown[] }).notes;
  const provider = (key: string, variant: string) =>
    t.api('/api/v1/providers', {
      method: 'POST',
      json: {
        key,
        display_name: `Notes MCP (${variant})`,
        docs_url: 'https://modelcontextprotocol.io/specification/2025-06-18/basic/authorization',
        auth: { kind: 'mcp' },
        mcp: { url: `${emu.urls.mcp}/${variant}/mcp` },
        api: { base_url: emu.url },
      },
    });
  const connect = async (json: Record<string, unknown>) => {
    const res = await t.api('/api/v1/connections', { method: 'POST', json });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const tools = async () =>
    ((await (await t.api('/api/v1/tools')).json()) as { data: Array<Record<string, unknown>> }).data;

  beforeAll(async () => {
    emu = await startEmulators({ modules: ['mcp'] });
    // The emulated servers listen on loopback http: the operator allows that for these providers.
    t = await startTestGateway(
      backend,
      {
        PORTICO_OUTBOUND_ALLOW_PRIVATE:
          'notes_dcr,notes_preregistered,notes_stepup,notes_down,notes_open,notes_sse',
      },
      { awaitSandbox: false },
    );
    for (const variant of ['dcr', 'preregistered', 'stepup', 'open']) {
      expect((await provider(`notes_${variant}`, variant)).status).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.close();
    await emu?.close();
  });

  it('discovers the server from its 401 and registers Portico dynamically', async () => {
    const created = await connect({ name: 'notes', provider: 'notes_dcr' });
    expect(created.status).toBe(201);
    expect(created.body.mcp_server).toEqual({
      url: `${emu.urls.mcp}/dcr/mcp`,
      resource: `${emu.urls.mcp}/dcr/mcp`,
      issuer: `${emu.urls.mcp}/dcr`,
      registration: 'dynamic',
    });
    expect(created.body.scopes).toEqual(['notes:read', 'notes:write']);
    // The client the server registered holds the connection's redirect URI and nothing else.
    const registered = emu.control.clients('mcp').find((c) => c.clientId === created.body.client_id);
    expect(registered?.redirectUris).toEqual([created.body.redirect_uri]);
    expect(JSON.stringify(created.body)).not.toContain(registered!.clientSecret);
    // No end user has connected: the server lists its tools to no one yet.
    expect((await tools()).some((tool) => String(tool.name).startsWith('notes__'))).toBe(false);
  });

  it("runs the server's tools for user_42 after the ordinary authorization link", async () => {
    const flow = await authorize(t, { connection: 'notes', identifier: ID });
    expect(flow.response.status).toBe(200);
    const asked = new URL(flow.authorizeUrl);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('resource')).toBe(`${emu.urls.mcp}/dcr/mcp`);
    expect((await accountOf(t, flow.accountId)).status).toBe('ACTIVE');

    const listed = await tools();
    const names = listed.map((tool) => tool.name).filter((n) => String(n).startsWith('notes__'));
    expect(names.sort()).toEqual([
      'notes__delete-note',
      'notes__notes_create',
      'notes__notes_list',
      'notes__slow_echo',
    ]);
    const create = listed.find((tool) => tool.name === 'notes__notes_create')!;
    expect(create).toMatchObject({
      provider: 'notes_dcr',
      annotations: { read_only: false, destructive: false, idempotent: false },
      input_schema: { type: 'object', required: ['title'] },
    });
    expect(listed.find((tool) => tool.name === 'notes__delete-note')!.annotations).toMatchObject({
      destructive: true,
    });
    const anthropic = (await (await t.api('/api/v1/tools/notes__notes_list?format=anthropic')).json()) as {
      name: string;
      input_schema: { type: string };
    };
    expect(anthropic).toMatchObject({ name: 'notes__notes_list', input_schema: { type: 'object' } });

    const made = await executeTool(t, {
      tool_name: 'notes__notes_create',
      identifier: ID,
      tool_input: { title: 'From Portico', body: 'via a remote MCP server' },
    });
    expect(made.status).toBe(200);
    const note = (made.body.data as { structured_content: { note: { id: string; title: string } } })
      .structured_content.note;
    expect(note.title).toBe('From Portico');
    // The side effect, read back at the server itself.
    expect(await notesOf('dcr')).toEqual([
      { id: note.id, title: 'From Portico', body: 'via a remote MCP server' },
    ]);

    // The input is validated against the server's schema before any call reaches it.
    const invalid = await executeTool(t, {
      tool_name: 'notes__notes_create',
      identifier: ID,
      tool_input: {},
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('invalid_input');
    expect(await notesOf('dcr')).toHaveLength(1);

    const record = (await (
      await t.api(`/api/v1/executions/${made.body.execution_id as string}`)
    ).json()) as Record<string, unknown>;
    expect(record).toMatchObject({
      tool_name: 'notes__notes_create',
      status: 'success',
      connection_name: 'notes',
    });
  });

  it("runs the server's tools for user_42 through the TypeScript SDK and its OpenAI adapter's format", async () => {
    const portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    const listed = await portico.tools.list({ connection: 'notes' });
    expect(listed.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['notes__notes_create', 'notes__notes_list']),
    );
    const openai = await portico.tools.list({ connection: 'notes', format: 'openai' });
    expect(openai).toContainEqual(
      expect.objectContaining({
        type: 'function',
        function: expect.objectContaining({ name: 'notes__notes_list' }),
      }),
    );
    const made = await portico.tools.execute<{ structured_content: { note: { id: string } } }>({
      toolName: 'notes__notes_create',
      identifier: ID,
      toolInput: { title: 'From the SDK', body: 'typed' },
    });
    expect(made.executionId).toMatch(/^exec_/);
    expect(await notesOf('dcr')).toContainEqual({
      id: made.data.structured_content.note.id,
      title: 'From the SDK',
      body: 'typed',
    });
  });

  it("serves the server's tools through Portico's MCP endpoint and over gRPC, as its own", async () => {
    const client = new Client({ name: 'remote-tools', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${await t.token()}`, identifier: ID } },
      }),
    );
    try {
      const { tools: listed } = await client.listTools();
      const create = listed.find((tool) => tool.name === 'notes__notes_create');
      expect(create?.inputSchema).toMatchObject({ type: 'object', required: ['title'] });
      expect(listed.find((tool) => tool.name === 'notes__delete-note')?.annotations).toMatchObject({
        destructiveHint: true,
      });
      const made = (await client.callTool({
        name: 'notes__notes_create',
        arguments: { title: 'Through MCP' },
      })) as CallToolResult;
      expect(made.isError).toBeFalsy();
      expect(JSON.stringify(made.structuredContent)).toContain('Through MCP');
    } finally {
      await client.close();
    }
    expect((await notesOf('dcr')).map((n) => (n as { title: string }).title)).toContain('Through MCP');

    const sk = new ScalekitClient(t.url, t.clientId, t.clientSecret);
    const viaGrpc = await sk.actions.executeTool({
      toolName: 'notes__notes_list',
      identifier: ID,
      toolInput: {},
    });
    expect(JSON.stringify(viaGrpc.data)).toContain('Through MCP');
  });

  it("refreshes the list when the server says notifications/tools/list_changed, and tells Portico's MCP clients", async () => {
    const client = new Client({ name: 'list-changes', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${await t.token()}`, identifier: ID } },
      }),
    );
    try {
      const told = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()),
      );
      const mcpNames = async () => (await client.listTools()).tools.map((tool) => tool.name);
      expect(await mcpNames()).not.toContain('notes__notes_archive');
      // The server grows its list; Portico's kept listing does not know yet.
      const added = await fetch(`${emu.urls.mcp}/dcr/_tools/notes.archive`, { method: 'POST' });
      expect(added.status).toBe(200);
      expect((await tools()).map((tool) => tool.name)).not.toContain('notes__notes_archive');

      // The server says so in the event stream of the next answer, a tool call's.
      expect((await executeTool(t, { tool_name: 'notes__notes_list', identifier: ID })).status).toBe(200);
      await told;
      const archive = (await tools()).find((tool) => tool.name === 'notes__notes_archive');
      expect(archive).toMatchObject({
        provider: 'notes_dcr',
        annotations: { read_only: false, destructive: false, idempotent: true },
        input_schema: { type: 'object', required: ['id'] },
      });
      expect(await mcpNames()).toContain('notes__notes_archive');

      const note = ((await notesOf('dcr')) as Array<{ id: string }>)[0]!;
      const archived = (await client.callTool({
        name: 'notes__notes_archive',
        arguments: { id: note.id },
      })) as CallToolResult;
      expect(archived.isError).toBeFalsy();
      expect(((await notesOf('dcr')) as Array<{ id: string }>).map((n) => n.id)).not.toContain(note.id);
    } finally {
      await client.close();
    }
  });

  it('refreshes an expired token and marks the account EXPIRED once the grant is revoked', async () => {
    expect(emu.control.expireAccessTokens('mcp')).toBeGreaterThan(0);
    const listed = await executeTool(t, { tool_name: 'notes__notes_list', identifier: ID });
    expect(listed.status).toBe(200);
    expect(
      (listed.body.data as { structured_content: { notes: unknown[] } }).structured_content.notes,
    ).toEqual(await notesOf('dcr'));

    emu.control.revokeGrants('mcp');
    emu.control.expireAccessTokens('mcp');
    const refused = await executeTool(t, { tool_name: 'notes__notes_list', identifier: ID });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const accounts = (await (await t.api(`/api/v1/connected-accounts?identifier=${ID}`)).json()) as {
      data: Array<{ id: string; connection_name: string; status: string }>;
    };
    expect(accounts.data.find((a) => a.connection_name === 'notes')?.status).toBe('EXPIRED');

    // Authorizing again brings the account back.
    const again = await authorize(t, { connection: 'notes', identifier: ID });
    expect(again.response.status).toBe(200);
    expect((await executeTool(t, { tool_name: 'notes__notes_list', identifier: ID })).status).toBe(200);
  });

  it('holds a destructive remote tool for approval, as a built-in one', async () => {
    const policy = await t.api('/api/v1/policies', {
      method: 'POST',
      json: { name: 'notes-guard', connection_name: 'notes' },
    });
    expect(policy.status).toBe(201);
    const notes = (await notesOf('dcr')) as Array<{ id: string }>;
    const note = notes[0];
    const held = await executeTool(t, {
      tool_name: 'notes__delete-note',
      identifier: ID,
      tool_input: { id: note!.id },
    });
    expect(held.status).toBe(403);
    expect(held.body.code).toBe('approval_required');
    expect(await notesOf('dcr')).toEqual(notes);
    // A read-only tool is not held.
    expect((await executeTool(t, { tool_name: 'notes__notes_list', identifier: ID })).status).toBe(200);
  });

  it("needs the operator's client where the server takes no dynamic registration", async () => {
    const refused = await connect({ name: 'notes-pre', provider: 'notes_preregistered' });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('invalid_input');
    expect(refused.body.detail).toContain('client_id');
    const created = await connect({
      name: 'notes-pre',
      provider: 'notes_preregistered',
      client_id: 'operator-client',
      client_secret: 'operator-secret',
    });
    expect(created.status).toBe(201);
    expect((created.body.mcp_server as { registration: string }).registration).toBe('pre_registered');
    emu.control.registerClient('mcp', {
      clientId: 'operator-client',
      clientSecret: 'operator-secret',
      redirectUris: [created.body.redirect_uri as string],
    });
    expect((await authorize(t, { connection: 'notes-pre', identifier: ID })).response.status).toBe(200);
    const made = await executeTool(t, {
      tool_name: 'notes-pre__notes_create',
      identifier: ID,
      tool_input: { title: 'Pre-registered' },
    });
    expect(made.status).toBe(200);
    expect(await notesOf('preregistered')).toMatchObject([{ title: 'Pre-registered' }]);
  });

  it('asks for step-up when the server answers insufficient_scope, and runs once it is granted', async () => {
    const created = await connect({ name: 'notes-step', provider: 'notes_stepup', scopes: ['notes:read'] });
    expect(created.status).toBe(201);
    expect((await authorize(t, { connection: 'notes-step', identifier: ID })).response.status).toBe(200);
    const refused = await executeTool(t, {
      tool_name: 'notes-step__notes_create',
      identifier: ID,
      tool_input: { title: 'Needs write' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ step_up: true, required_scopes: ['notes:read', 'notes:write'] });
    expect(await notesOf('stepup')).toEqual([]);

    const patched = await t.api('/api/v1/connections/notes-step', {
      method: 'PATCH',
      json: { scopes: ['notes:read', 'notes:write'] },
    });
    expect(patched.status).toBe(200);
    expect((await authorize(t, { connection: 'notes-step', identifier: ID })).response.status).toBe(200);
    const made = await executeTool(t, {
      tool_name: 'notes-step__notes_create',
      identifier: ID,
      tool_input: { title: 'Needs write' },
    });
    expect(made.status).toBe(200);
    expect(await notesOf('stepup')).toMatchObject([{ title: 'Needs write' }]);
  });

  it('connects to a server that asks for no authorization: the link asks nothing, and its tools run per user', async () => {
    const refused = await connect({ name: 'notes-open', provider: 'notes_open', client_id: 'mine' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('asks for no authorization');
    const created = await connect({ name: 'notes-open', provider: 'notes_open' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      client_id: '',
      scopes: [],
      mcp_server: { url: `${emu.urls.mcp}/open/mcp`, issuer: '', registration: 'none' },
    });
    // No consent screen: the trip goes straight back to Portico's callback, in the same browser.
    const {
      accountId,
      callbackUrl,
      response: done,
    } = await authorize(t, { connection: 'notes-open', identifier: ID, consent: async (url) => url });
    expect(callbackUrl.startsWith(`${t.url}/sso/v1/oauth/`)).toBe(true);
    expect(done.status).toBe(200);
    expect(await accountOf(t, accountId)).toMatchObject({ status: 'ACTIVE', connection_name: 'notes-open' });

    expect((await tools()).map((tool) => tool.name)).toContain('notes-open__notes_create');
    const made = await executeTool(t, {
      tool_name: 'notes-open__notes_create',
      identifier: ID,
      tool_input: { title: 'No authorization' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(await notesOf('open', 'anonymous')).toMatchObject([{ title: 'No authorization' }]);
    // The guardrails hold as for any server: a destructive tool waits for approval.
    const policy = await t.api('/api/v1/policies', {
      method: 'POST',
      json: { name: 'open-guard', connection_name: 'notes-open' },
    });
    expect(policy.status).toBe(201);
    const held = await executeTool(t, {
      tool_name: 'notes-open__delete-note',
      identifier: ID,
      tool_input: { id: 'any' },
    });
    expect(held.body.code).toBe('approval_required');
  });

  it('falls back to the older HTTP+SSE transport when the server refuses the POST', async () => {
    const defined = await t.api('/api/v1/providers', {
      method: 'POST',
      json: {
        key: 'notes_sse',
        display_name: 'Notes MCP (HTTP+SSE)',
        auth: { kind: 'mcp' },
        mcp: { url: `${emu.urls.mcp}/sse/sse` },
        api: { base_url: emu.url },
      },
    });
    expect(defined.status).toBe(201);
    const created = await connect({ name: 'notes-sse', provider: 'notes_sse' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.mcp_server).toEqual({
      url: `${emu.urls.mcp}/sse/sse`,
      resource: `${emu.urls.mcp}/sse`,
      issuer: `${emu.urls.mcp}/sse`,
      registration: 'dynamic',
      transport: 'sse',
    });
    expect((await authorize(t, { connection: 'notes-sse', identifier: ID })).response.status).toBe(200);
    const names = (await tools()).map((tool) => String(tool.name)).filter((n) => n.startsWith('notes-sse__'));
    expect(names.sort()).toEqual([
      'notes-sse__delete-note',
      'notes-sse__notes_create',
      'notes-sse__notes_list',
      'notes-sse__slow_echo',
    ]);
    const made = await executeTool(t, {
      tool_name: 'notes-sse__notes_create',
      identifier: ID,
      tool_input: { title: 'Over HTTP+SSE' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(await notesOf('sse')).toMatchObject([{ title: 'Over HTTP+SSE' }]);
    const listed = await executeTool(t, { tool_name: 'notes-sse__notes_list', identifier: ID });
    expect(JSON.stringify(listed.body.data)).toContain('Over HTTP+SSE');
  });

  it('sends no discovery request to a private address the operator has not allowed', async () => {
    // The same loopback server, under a provider PORTICO_OUTBOUND_ALLOW_PRIVATE does not name.
    expect((await provider('notes_unlisted', 'dcr')).status).toBe(201);
    const before = emu.control.clients('mcp').length;
    const refused = await connect({ name: 'notes-unlisted', provider: 'notes_unlisted' });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('upstream_validation');
    expect(String(refused.body.detail)).toContain('PORTICO_OUTBOUND_ALLOW_PRIVATE');
    expect(emu.control.clients('mcp')).toHaveLength(before);
  });

  it('answers a server that is down with a retryable problem', async () => {
    const down = await t.api('/api/v1/providers', {
      method: 'POST',
      json: {
        key: 'notes_down',
        display_name: 'Down MCP',
        auth: { kind: 'mcp' },
        mcp: { url: 'http://127.0.0.1:9/mcp' },
        api: { base_url: 'http://127.0.0.1:9' },
      },
    });
    expect(down.status).toBe(201);
    const refused = await connect({ name: 'notes-down', provider: 'notes_down' });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'upstream_unavailable', retryable: true });
  });
});
