import {
  Client,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, createSandboxConnection, openLink, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const ADA = 'ada@example.com';
const REVISION = '2026-07-28';
const CALLBACK = 'http://127.0.0.1:53682/callback';

/** A v2 client's OAuth state, in memory: what a desktop agent would keep on disk. */
class MemoryProvider implements OAuthClientProvider {
  info: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier: string | undefined;
  authorizationUrl: URL | undefined;

  get redirectUrl(): string {
    return CALLBACK;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Agent (2026-07-28)',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return 'the-state';
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.info = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier!;
  }
}

/** The newest protocol revision, through the official v2 client pinned to it (no fallback). */
describe.each(BACKENDS)('MCP %s revision ($name)'.replace('%s', REVISION), (backend) => {
  let t: TestGateway;
  let token: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: ADA, connection: 'notes' });
    await createSandboxConnection(t, 'calendar', 'google_calendar');
    token = await mint(ADA);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await t?.close();
  });

  async function mint(identifier: string): Promise<string> {
    const minted = await t.api('/api/v1/mcp/tokens', { method: 'POST', json: { identifier } });
    expect(minted.status).toBe(201);
    return ((await minted.json()) as { token: string }).token;
  }

  async function connect(bearer = token, path = '/mcp'): Promise<Client> {
    const client = new Client(
      { name: 'portico-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: REVISION } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    );
    clients.push(client);
    return client;
  }

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

  it('connects on the pinned revision, lists tools and calls one', async () => {
    const client = await connect();
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect(client.getInstructions()).toContain(ADA);
    const names = await allTools(client);
    expect(names.slice(0, 2)).toEqual(['portico_authorize', 'portico_run_approved']);
    expect(names).toContain('notes_user_list');
    expect(names).not.toContain('calendar_create_event');

    const result = await client.callTool({ name: 'notes_user_list', arguments: { page_size: 1 } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ execution_id: expect.stringMatching(/^exec_/) });
    const record = await t.api(
      `/api/v1/executions/${(result.structuredContent as { execution_id: string }).execution_id}`,
    );
    expect(record.status).toBe(200);
  });

  it("serves a toolset's MCP URL and search mode on the pinned revision too", async () => {
    const created = await t.api('/api/v1/toolsets', {
      method: 'POST',
      json: { name: 'one-tool', tools: ['notes_user_list'] },
    });
    expect(created.status).toBe(201);
    const toolset = await connect(token, '/mcp/t/one-tool');
    expect(await allTools(toolset)).toEqual(['portico_authorize', 'portico_run_approved', 'notes_user_list']);
    const refused = await toolset.callTool({ name: 'notes_page_create', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('tool_not_allowed');

    const searching = await connect(token, '/mcp?mode=search');
    expect(await allTools(searching)).toEqual([
      'portico_authorize',
      'portico_run_approved',
      'portico_search_tools',
      'portico_call_tool',
    ]);
  });

  it('answers an unknown tool with a -32602 protocol error, as on the 2025-era revisions', async () => {
    const client = await connect();
    const error = await client.callTool({ name: 'notes_user_lst', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as { code?: number; data?: unknown },
    );
    expect(error?.code).toBe(-32602);
    expect(error?.data).toMatchObject({ code: 'unknown_tool', did_you_mean: 'notes_user_list' });
  });

  it('sends notifications/tools/list_changed on the subscriptions/listen stream once the user authorizes, to that user only', async () => {
    // Another user's stream, open all along, must hear nothing of Ada's accounts.
    const other = await connect(await mint('bob@example.com'));
    let othersChanges = 0;
    other.setNotificationHandler('notifications/tools/list_changed', async () => {
      othersChanges++;
    });
    const othersSubscription = await other.listen({ toolsListChanged: true });

    const client = await connect();
    let changes = 0;
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler('notifications/tools/list_changed', async () => {
        changes++;
        resolve();
      }),
    );
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });

    const result = await client.callTool({
      name: 'portico_authorize',
      arguments: { connection_name: 'calendar' },
    });
    const { link } = result.structuredContent as { link: string };
    const start = await openLink(link);
    const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    expect(done.status).toBe(200);
    await changed;
    expect(changes).toBe(1);
    expect(await allTools(client)).toContain('calendar_create_event');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(othersChanges).toBe(0);
    await subscription.close();
    expect(await subscription.closed).toBe('local');
    await othersSubscription.close();
  });

  it("answers a 2026-07-28 request without the revision's envelope in JSON-RPC, naming what is missing", async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': REVISION,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { id: unknown; error: { code: number; message: string } };
    expect(body).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(body.error.message).toMatch(/missing the required per-request envelope key.*_meta/);
  });

  it("takes a pinned client that knows only the URL from a 401 through OAuth to its user's tools", async () => {
    const settings = await t.api('/api/v1/mcp/oauth/settings', {
      method: 'PUT',
      json: { sign_in_url: 'https://app.example.com/mcp/sign-in' },
    });
    expect(settings.status).toBe(200);
    const provider = new MemoryProvider();
    const url = new URL(`${t.url}/mcp`);
    const options = { versionNegotiation: { mode: { pin: REVISION } } } as const;
    const first = new Client({ name: 'oauth-test', version: '1.0.0' }, options);
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toThrow(UnauthorizedError);
    expect(provider.info?.client_id).toMatch(/^mcpc_/);
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(`${t.url}/mcp`);

    const browser = await fetch(provider.authorizationUrl!, { redirect: 'manual' });
    expect(browser.status).toBe(302);
    const requestId = new URL(browser.headers.get('location')!).searchParams.get('mcp_auth_request_id');
    const approved = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: requestId, identifier: ADA },
    });
    expect(approved.status).toBe(200);
    const callback = new URL(((await approved.json()) as { redirect_url: string }).redirect_url);
    // The whole callback, so the client checks its issuer (RFC 9207) as the v2 SDK does.
    await transport.finishAuth(callback.searchParams);
    expect(provider.saved?.access_token).toMatch(/^pmt_/);

    const client = new Client({ name: 'oauth-test', version: '1.0.0' }, options);
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    expect(client.getProtocolEra()).toBe('modern');
    expect(await allTools(client)).toContain('notes_user_list');
  });

  it('keeps 2025-era clients on the revisions they negotiate', async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1.0.0' },
        },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ result: { protocolVersion: '2025-11-25' } });
  });
});
