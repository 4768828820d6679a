import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeClient } from '../src/auth/gateway-clients.js';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, createSandboxConnection, openLink, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const ADA = 'ada@example.com';
const BOB = 'bob@example.com';

describe.each(BACKENDS)('MCP server ($name)', (backend) => {
  let t: TestGateway;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: ADA, connection: 'notes' });
    await sandboxAccount(t, { provider: 'hubspot', identifier: BOB, connection: 'crm' });
    await createSandboxConnection(t, 'calendar', 'google_calendar');
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await t?.close();
  });

  /** An official MCP client connected to /mcp with these headers. */
  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'portico-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } }),
    );
    clients.push(client);
    return client;
  }

  async function asGateway(identifier: string): Promise<Client> {
    return connect({ authorization: `Bearer ${await t.token()}`, identifier });
  }

  async function mint(body: Record<string, unknown>): Promise<{ id: string; token: string; url: string }> {
    const res = await t.api('/api/v1/mcp/tokens', { method: 'POST', json: body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { id: string; token: string; url: string };
  }

  const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

  it("lists the tools of the user's connected providers, annotated, plus portico_authorize and portico_run_approved", async () => {
    const client = await asGateway(ADA);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toContain('notes_page_create');
    expect(names).toContain('portico_authorize');
    // Ada has no HubSpot or calendar account: those tools would only fail.
    expect(names.some((n) => n.startsWith('crm_') || n.startsWith('calendar_'))).toBe(false);
    const userList = tools.find((tool) => tool.name === 'notes_user_list')!;
    expect(userList.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: true,
    });
    expect(userList.inputSchema.type).toBe('object');
    const authorize = tools.find((tool) => tool.name === 'portico_authorize')!;
    expect(authorize.inputSchema.properties).toMatchObject({
      connection_name: { enum: expect.arrayContaining(['notes', 'crm', 'calendar']) },
    });
  });

  it('runs a tool through the engine as the user and records the execution', async () => {
    const client = await asGateway(ADA);
    const result = (await client.callTool({
      name: 'notes_user_list',
      arguments: { page_size: 2 },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const data = JSON.parse(text(result)) as { results: unknown[] };
    expect(data.results).toHaveLength(2);
    const executionId = (result.structuredContent as { execution_id: string }).execution_id;
    const record = await t.api(`/api/v1/executions/${executionId}`);
    expect(await record.json()).toMatchObject({
      tool_name: 'notes_user_list',
      identifier: ADA,
      status: 'success',
    });
  });

  it('answers a failed call as a result the model can correct from, not a protocol error', async () => {
    const client = await asGateway(ADA);
    const result = (await client.callTool({
      name: 'notes_user_list',
      arguments: { page_size: 1000 },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const problem = JSON.parse(text(result));
    expect(problem).toMatchObject({
      code: 'invalid_input',
      errors: [expect.objectContaining({ path: '/tool_input/page_size' })],
    });
    // A tool no server offers is a protocol error (nothing ran), still with the suggestion.
    await expect(client.callTool({ name: 'notes_user_lst', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      data: { code: 'unknown_tool', did_you_mean: 'notes_user_list' },
    });
  });

  it('gives an authorization link that works, for a missing account and through portico_authorize', async () => {
    const client = await asGateway(ADA);
    const missing = (await client.callTool({ name: 'crm_contacts_search', arguments: {} })) as CallToolResult;
    expect(missing.isError).toBe(true);
    // Never seen on HubSpot: the result is the authorization the user must give, with its link.
    expect(JSON.parse(text(missing))).toMatchObject({
      code: 'account_not_active',
      authorization_link: { link: expect.stringContaining('/connect/') },
    });

    const result = (await client.callTool({
      name: 'portico_authorize',
      arguments: { connection_name: 'calendar' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const { link } = result.structuredContent as { link: string };
    expect(text(result)).toContain(link);
    // The user opens it and consents; the calendar tools then appear.
    const start = await openLink(link);
    expect(start.status).toBe(303);
    const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    expect(done.status).toBe(200);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('calendar_create_event');
    const bad = (await client.callTool({
      name: 'portico_authorize',
      arguments: { connection_name: 'nope' },
    })) as CallToolResult;
    expect(JSON.parse(text(bad))).toMatchObject({ code: 'invalid_input' });
  });

  it('answers an inactive account with a fresh link in the result', async () => {
    const { accountId } = await sandboxAccount(t, {
      provider: 'notion',
      identifier: 'carol',
      connection: 'notes',
    });
    expect((await t.api(`/api/v1/connected-accounts/${accountId}`, { method: 'DELETE' })).status).toBe(200);
    const client = await asGateway('carol');
    const result = (await client.callTool({ name: 'notes_user_list', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    const problem = JSON.parse(text(result));
    expect(problem.code).toBe('account_not_active');
    const start = await openLink(problem.authorization_link.link);
    expect(start.status).toBe(303);
  });

  it('limits a minted token to its identifier, connections and tools', async () => {
    const minted = await mint({ identifier: ADA, connection_names: ['notes'], tools: ['notes_user_list'] });
    expect(minted.token).toMatch(/^pmt_/);
    expect(minted.url).toBe(`${t.url}/mcp`);
    const client = await connect({ authorization: `Bearer ${minted.token}` });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'notes_user_list',
      'portico_authorize',
      'portico_run_approved',
    ]);
    const ok = (await client.callTool({ name: 'notes_user_list', arguments: {} })) as CallToolResult;
    expect(ok.isError).toBeFalsy();
    const outside = (await client.callTool({ name: 'notes_page_create', arguments: {} })) as CallToolResult;
    expect(JSON.parse(text(outside)).code).toBe('tool_not_allowed');
    // Bob's HubSpot account is out of reach: the token acts as Ada, whatever the call says.
    const crm = await mint({ identifier: ADA, tools: ['crm_contacts_search'] });
    const crmClient = await connect({ authorization: `Bearer ${crm.token}` });
    const other = (await crmClient.callTool({
      name: 'crm_contacts_search',
      arguments: {},
    })) as CallToolResult;
    expect(other.isError).toBe(true);
    expect(JSON.parse(text(other))).toMatchObject({
      code: 'account_not_active',
      account_status: 'PENDING_AUTH',
    });
    // A token limited to the notes connection cannot authorize another one.
    const authorize = (await client.callTool({
      name: 'portico_authorize',
      arguments: { connection_name: 'crm' },
    })) as CallToolResult;
    expect(JSON.parse(text(authorize)).code).toBe('invalid_input');
  });

  it('refuses expired and revoked tokens with 401, and lists live ones', async () => {
    const revoked = await mint({ identifier: ADA });
    const expired = await mint({ identifier: ADA, expires_in: 60 });
    const listed = (await (
      await t.api(`/api/v1/mcp/tokens?identifier=${encodeURIComponent(ADA)}`)
    ).json()) as {
      data: { id: string }[];
    };
    expect(listed.data.map((row: { id: string }) => row.id)).toEqual(
      expect.arrayContaining([revoked.id, expired.id]),
    );
    expect(JSON.stringify(listed)).not.toContain(revoked.token);

    expect((await t.api(`/api/v1/mcp/tokens/${revoked.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await t.api(`/api/v1/mcp/tokens/${revoked.id}`, { method: 'DELETE' })).status).toBe(404);
    await t.db.query(`UPDATE mcp_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      expired.id,
    ]);
    for (const token of [revoked.token, expired.token, 'pmt_forged']) {
      await expect(connect({ authorization: `Bearer ${token}` })).rejects.toThrow(/401/);
      const raw = await fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(raw.status).toBe(401);
      expect(raw.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('refuses a gateway token without an identifier, and bad mint requests, with a problem naming the fix', async () => {
    const raw = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await t.token()}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({
      code: 'missing_header',
      detail: expect.stringContaining('identifier'),
    });

    const unknownTool = await t.api('/api/v1/mcp/tokens', {
      method: 'POST',
      json: { identifier: ADA, tools: ['nope'] },
    });
    expect(unknownTool.status).toBe(400);
    expect(await unknownTool.json()).toMatchObject({ code: 'invalid_input', errors: [{ path: '/tools/0' }] });
    const unknownConnection = await t.api('/api/v1/mcp/tokens', {
      method: 'POST',
      json: { identifier: ADA, connection_names: ['nope'] },
    });
    expect(await unknownConnection.json()).toMatchObject({
      code: 'invalid_input',
      errors: [{ path: '/connection_names/0' }],
    });
    const tooLong = await t.api('/api/v1/mcp/tokens', {
      method: 'POST',
      json: { identifier: ADA, expires_in: 10 },
    });
    expect(tooLong.status).toBe(400);
  });

  it("stops a minted token when the application's client is revoked", async () => {
    const created = await t.api('/api/v1/mcp/tokens', { method: 'POST', json: { identifier: ADA } });
    const { token } = (await created.json()) as { token: string };
    await connect({ authorization: `Bearer ${token}` });
    await revokeClient(t.db, t.clientId);
    await expect
      .poll(
        async () =>
          (await fetch(`${t.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }))
            .status,
        {
          timeout: 2000,
        },
      )
      .toBe(401);
  });
});
