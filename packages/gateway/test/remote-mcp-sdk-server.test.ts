import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, authorize, executeTool } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

type Request = IncomingMessage & { body?: unknown; auth?: AuthInfo };

function refuse(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * A remote MCP server Portico did not write: one built only from the official TypeScript SDK,
 * its OAuth included (the SDK's authorization router, its demo provider, its bearer middleware
 * and protected-resource metadata). Portico has to find the authorization server from the 401,
 * register itself, send user_42 through the SDK's authorize endpoint, and run both tools.
 */
async function startSdkServer() {
  const items: string[] = [];
  const seen: AuthInfo[] = [];
  const app = createMcpExpressApp();
  const http: Server = await new Promise((resolve) => {
    const listening: Server = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const mcpUrl = new URL(`${base}/mcp`);
  // Strict audience: a code is exchanged only for a token bound to this server (RFC 8707).
  const provider = new DemoInMemoryAuthProvider((resource) => resource?.href === mcpUrl.href);
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpUrl,
      scopesSupported: ['mcp:tools'],
      resourceName: 'SDK items',
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    expectedResource: mcpUrl,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });

  const build = () => {
    const server = new McpServer({ name: 'sdk-items', version: '1.0.0' });
    server.registerTool(
      'echo',
      {
        description: 'Answers with the text it was given.',
        inputSchema: { text: z.string() },
        annotations: { readOnlyHint: true },
      },
      async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
    );
    server.registerTool(
      'add_item',
      {
        description: 'Appends an item to the list this server keeps.',
        inputSchema: { item: z.string() },
        outputSchema: { count: z.number() },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      },
      async ({ item }) => {
        items.push(item);
        return {
          content: [{ type: 'text', text: `added ${item}` }],
          structuredContent: { count: items.length },
        };
      },
    );
    return server;
  };

  // Stateful streamable HTTP, as the SDK's own examples serve it: a transport per session.
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  app.all('/mcp', bearer, async (req: Request, res: ServerResponse) => {
    seen.push(req.auth!);
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      if (typeof sid === 'string') return refuse(res, 404, -32001, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        return refuse(res, 400, -32000, 'No session: initialize first');
      }
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          sessions.set(id, fresh);
        },
      });
      fresh.onclose = () => {
        if (fresh.sessionId) sessions.delete(fresh.sessionId);
      };
      await build().connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res, req.body);
  });

  return {
    url: mcpUrl.href,
    base,
    items,
    seen,
    provider,
    async close() {
      for (const transport of sessions.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe.each(BACKENDS)('a remote MCP server built from the official SDK on $name', (backend) => {
  let t: TestGateway;
  let sdk: Awaited<ReturnType<typeof startSdkServer>>;
  const ID = 'user_42';

  beforeAll(async () => {
    sdk = await startSdkServer();
    // The SDK server listens on loopback http: the operator allows that for this provider.
    t = await startTestGateway(
      backend,
      { PORTICO_OUTBOUND_ALLOW_PRIVATE: 'sdk_items' },
      { awaitSandbox: false },
    );
  });
  afterAll(async () => {
    await t?.close();
    await sdk?.close();
  });

  it("connects by the server's URL, authorizes user_42 through the SDK's OAuth and runs both tools", async () => {
    // The server is protected: without a token it answers 401 and points at its metadata.
    const refused = await fetch(sdk.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(
      `resource_metadata="${sdk.base}/.well-known/oauth-protected-resource/mcp"`,
    );

    const registered = await t.api('/api/v1/providers', {
      method: 'POST',
      json: {
        key: 'sdk_items',
        display_name: 'SDK items',
        docs_url: 'https://github.com/modelcontextprotocol/typescript-sdk',
        auth: { kind: 'mcp' },
        mcp: { url: sdk.url },
        api: { base_url: sdk.base },
      },
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const created = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'items', provider: 'sdk_items' },
    });
    const connection = (await created.json()) as Record<string, unknown>;
    expect(created.status, JSON.stringify(connection)).toBe(201);
    expect(connection.mcp_server).toEqual({
      url: sdk.url,
      resource: sdk.url,
      issuer: `${sdk.base}/`,
      registration: 'dynamic',
    });
    expect(connection.scopes).toEqual(['mcp:tools']);
    // Portico registered itself at the SDK's registration endpoint, with the connection's callback.
    const client = await sdk.provider.clientsStore.getClient(connection.client_id as string);
    expect(client?.redirect_uris).toEqual([connection.redirect_uri]);

    const {
      accountId,
      authorizeUrl: sentTo,
      callbackUrl: callback,
      response: done,
    } = await authorize(t, {
      connection: 'items',
      identifier: ID,
      // The SDK's demo provider approves at once and redirects back to Portico's callback.
      consent: async (url) => {
        const approved = await fetch(url, { redirect: 'manual' });
        expect(approved.status).toBe(302);
        return approved.headers.get('location')!;
      },
    });
    const authorizeUrl = new URL(sentTo);
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${sdk.base}/authorize`);
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('resource')).toBe(sdk.url);
    expect(callback.startsWith(connection.redirect_uri as string)).toBe(true);
    expect(done.status, await done.clone().text()).toBe(200);
    expect((await accountOf(t, accountId)).status).toBe('ACTIVE');

    const listedRes = await t.api('/api/v1/tools?connection=items');
    expect(listedRes.status).toBe(200);
    const listed = ((await listedRes.json()) as { data: Array<Record<string, unknown>> }).data;
    const byName = new Map(listed.map((tool) => [String(tool.name), tool]));
    expect([...byName.keys()].sort()).toEqual(['items__add_item', 'items__echo']);
    expect(byName.get('items__echo')).toMatchObject({
      provider: 'sdk_items',
      annotations: { read_only: true },
      input_schema: { type: 'object', required: ['text'] },
    });
    expect(byName.get('items__add_item')).toMatchObject({
      annotations: { read_only: false, destructive: false },
      input_schema: { type: 'object', required: ['item'] },
    });

    const echoed = await executeTool(t, {
      tool_name: 'items__echo',
      identifier: ID,
      tool_input: { text: 'hello SDK' },
    });
    expect(echoed.status, JSON.stringify(echoed.body)).toBe(200);
    expect(JSON.stringify(echoed.body.data)).toContain('echo: hello SDK');
    expect(sdk.items).toEqual([]);

    const added = await executeTool(t, {
      tool_name: 'items__add_item',
      identifier: ID,
      tool_input: { item: 'from Portico' },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.data).toMatchObject({ structured_content: { count: 1 } });
    // The side effect, read back at the SDK server itself.
    expect(sdk.items).toEqual(['from Portico']);

    // Every MCP request reached the tools with a Bearer token the SDK's provider issued, for this
    // server, to the client Portico registered.
    expect(sdk.seen.length).toBeGreaterThan(0);
    for (const auth of sdk.seen) {
      expect(auth.clientId).toBe(connection.client_id);
      expect(auth.resource?.href).toBe(sdk.url);
      expect((await sdk.provider.verifyAccessToken(auth.token)).clientId).toBe(connection.client_id);
    }
  });
});
