import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { gatewayToken } from './helpers/token.js';

const USER = 'user_42';
const OTHER = 'user_7';
const SIGN_IN = 'https://app.example.com/mcp/sign-in?from=portico';
const CALLBACK = 'http://127.0.0.1:53682/callback';

/** An MCP client's OAuth state, in memory: what a desktop agent would keep on disk. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier: string | undefined;
  authorizationUrl: URL | undefined;

  constructor(private readonly extra: Partial<OAuthClientMetadata> = {}) {}

  get redirectUrl(): string {
    return CALLBACK;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Agent',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.extra,
    };
  }

  state(): string {
    return 'the-state';
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
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

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe.each(BACKENDS)('MCP OAuth ($name)', (backend) => {
  let t: TestGateway;
  let documents: http.Server;
  let documentsUrl: string;
  /** Client ID metadata documents the loopback server answers, by path. */
  const served = new Map<string, unknown>();
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_MCP_CLIENT_METADATA_ALLOW_PRIVATE: 'true' });
    await sandboxAccount(t, { provider: 'notion', identifier: USER, connection: 'notes' });
    await sandboxAccount(t, { provider: 'hubspot', identifier: OTHER, connection: 'crm' });
    documents = http.createServer((req, res) => {
      const document = served.get(req.url ?? '');
      if (document === undefined) {
        res.writeHead(404).end();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(typeof document === 'string' ? document : JSON.stringify(document));
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await new Promise((resolve) => documents?.close(resolve));
    await t?.close();
  });

  async function setSignInUrl(url: string | null): Promise<Response> {
    return t.api('/api/v1/mcp/oauth/settings', { method: 'PUT', json: { sign_in_url: url } });
  }

  async function register(
    body: Record<string, unknown>,
  ): Promise<{ status: number; body: Record<string, string> }> {
    const res = await fetch(`${t.url}/mcp/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  async function tokenRequest(
    params: Record<string, string>,
    headers: Record<string, string> = {},
    endpoint = 'token',
  ): Promise<{ status: number; body: Record<string, string>; headers: Headers }> {
    const res = await fetch(`${t.url}/mcp/oauth/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(params).toString(),
    });
    const raw = await res.text();
    return { status: res.status, body: raw ? JSON.parse(raw) : {}, headers: res.headers };
  }

  /** Opens the authorization URL as a browser would; answers where it was sent. */
  async function openAuthorize(
    params: Record<string, string>,
  ): Promise<{ status: number; location: URL | null; body: string }> {
    const res = await fetch(`${t.url}/mcp/oauth/authorize?${new URLSearchParams(params)}`, {
      redirect: 'manual',
    });
    const location = res.headers.get('location');
    return { status: res.status, location: location ? new URL(location) : null, body: await res.text() };
  }

  /** Authorizes `clientId` up to the code, the application approving for `identifier`. */
  async function approvedCode(
    clientId: string,
    opts: {
      identifier?: string;
      redirectUri?: string;
      resource?: string;
      approve?: Record<string, unknown>;
    } = {},
  ): Promise<{ code: string; verifier: string; redirectUri: string }> {
    const { verifier, challenge } = pkce();
    const redirectUri = opts.redirectUri ?? CALLBACK;
    const opened = await openAuthorize({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's1',
      resource: opts.resource ?? `${t.url}/mcp`,
    });
    expect(opened.status, opened.body).toBe(302);
    const id = opened.location!.searchParams.get('mcp_auth_request_id')!;
    const approved = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: id, identifier: opts.identifier ?? USER, ...opts.approve },
    });
    expect(approved.status, await approved.clone().text()).toBe(200);
    const redirect = new URL(((await approved.json()) as { redirect_url: string }).redirect_url);
    expect(redirect.searchParams.get('state')).toBe('s1');
    return { code: redirect.searchParams.get('code')!, verifier, redirectUri };
  }

  async function exchange(clientId: string, grant: { code: string; verifier: string; redirectUri: string }) {
    return tokenRequest({
      grant_type: 'authorization_code',
      client_id: clientId,
      code: grant.code,
      code_verifier: grant.verifier,
      redirect_uri: grant.redirectUri,
    });
  }

  async function publicClient(): Promise<string> {
    const registered = await register({
      client_name: 'Raw client',
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
    });
    expect(registered.status).toBe(201);
    return registered.body.client_id!;
  }

  /** Status of a tools/list sent to `path` with this bearer token. */
  async function mcpStatus(token: string, path = '/mcp'): Promise<number> {
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await res.body?.cancel();
    return res.status;
  }

  it('is off until the application sets a sign-in URL, which is checked like a redirect URL', async () => {
    expect(await (await t.api('/api/v1/mcp/oauth/settings')).json()).toEqual({
      sign_in_url: null,
      mcp_url: null,
    });
    const { location } = await openAuthorize({
      response_type: 'code',
      client_id: await publicClient(),
      redirect_uri: CALLBACK,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    // Refused with a page, not sent back to the client (whose redirect URI anyone may register).
    expect(location).toBeNull();
    for (const bad of [
      'ftp://app.example.com/x',
      '/relative',
      'https://user:pw@app.example.com/',
      'https://a b.com',
    ]) {
      const res = await setSignInUrl(bad);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(await res.json()).toMatchObject({ code: 'invalid_input', errors: [{ path: '/sign_in_url' }] });
    }
    expect((await setSignInUrl(SIGN_IN)).status).toBe(200);
    expect(await (await t.api('/api/v1/mcp/oauth/settings')).json()).toEqual({
      sign_in_url: SIGN_IN,
      mcp_url: `${t.url}/mcp`,
    });
  });

  it('publishes protected resource and authorization server metadata, and names them in a 401', async () => {
    const unauthenticated = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize' }),
    });
    expect(unauthenticated.status).toBe(401);
    const challenge = unauthenticated.headers.get('www-authenticate')!;
    // No credential at all: no error code (RFC 6750 §3.1), and the scope to ask for.
    expect(challenge).toMatch(/^Bearer realm="portico", scope="mcp"/);
    expect(challenge).not.toContain('error=');
    expect(challenge).toContain(`resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`);

    const resource = {
      resource: `${t.url}/mcp`,
      authorization_servers: [t.url],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp'],
      resource_name: 'Portico',
    };
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      expect(await (await fetch(`${t.url}${path}`)).json()).toEqual(resource);
    }
    const server = await (await fetch(`${t.url}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      issuer: t.url,
      authorization_endpoint: `${t.url}/mcp/oauth/authorize`,
      token_endpoint: `${t.url}/mcp/oauth/token`,
      registration_endpoint: `${t.url}/mcp/oauth/register`,
      revocation_endpoint: `${t.url}/mcp/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
      client_id_metadata_document_supported: true,
      scopes_supported: ['mcp'],
    });
    // The gateway's own client_credentials endpoint is untouched.
    const gateway = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: t.clientId,
        client_secret: t.clientSecret,
      }),
    });
    expect(gateway.status).toBe(200);
  });

  it('takes an MCP client that knows only the URL from a 401 to tools for the user the application signed in', async () => {
    const provider = new MemoryProvider();
    const url = new URL(`${t.url}/mcp`);
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toThrow(UnauthorizedError);
    // Discovered, registered dynamically, and sent its user's browser to the authorization endpoint.
    expect(provider.info?.client_id).toMatch(/^mcpc_/);
    const authorizationUrl = provider.authorizationUrl!;
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${t.url}/mcp/oauth/authorize`);
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${t.url}/mcp`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

    // The browser lands on the application's sign-in page with the request's id.
    const browser = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(browser.status).toBe(302);
    const signIn = new URL(browser.headers.get('location')!);
    expect(`${signIn.origin}${signIn.pathname}`).toBe('https://app.example.com/mcp/sign-in');
    expect(signIn.searchParams.get('from')).toBe('portico');
    expect(signIn.searchParams.get('client_name')).toBe('Test Agent');
    expect(signIn.searchParams.get('redirect_host')).toBe('127.0.0.1:53682');
    const requestId = signIn.searchParams.get('mcp_auth_request_id')!;

    // The application signs its user in and approves for user_42.
    const approved = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: requestId, identifier: USER },
    });
    expect(approved.status).toBe(200);
    const callback = new URL(((await approved.json()) as { redirect_url: string }).redirect_url);
    expect(`${callback.origin}${callback.pathname}`).toBe(CALLBACK);
    expect(callback.searchParams.get('state')).toBe('the-state');
    expect(callback.searchParams.get('iss')).toBe(t.url);
    // Approval works once.
    const again = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: requestId, identifier: OTHER },
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'mcp_auth_request_used' });

    await transport.finishAuth(callback.searchParams.get('code')!);
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', scope: 'mcp', expires_in: 3600 });
    expect(provider.saved!.access_token).toMatch(/^pmt_/);
    expect(provider.saved!.refresh_token).toMatch(/^pmr_/);

    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('notes_user_list');
    // user_7's HubSpot account is not this user's: no CRM tools, and a CRM call finds no account.
    expect(names.some((name) => name.startsWith('crm_'))).toBe(false);
    const result = (await client.callTool({
      name: 'notes_user_list',
      arguments: { page_size: 1 },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const executionId = (result.structuredContent as { execution_id: string }).execution_id;
    const record = await t.api(`/api/v1/executions/${executionId}`);
    expect(await record.json()).toMatchObject({
      tool_name: 'notes_user_list',
      identifier: USER,
      status: 'success',
    });
    const crm = (await client.callTool({ name: 'crm_contacts_search', arguments: {} })) as CallToolResult;
    expect(crm.isError).toBe(true);
    expect(JSON.parse(text(crm)).code).toMatch(/^account_not_(active|found)$/);
    // Once the access token has expired, the client refreshes by itself (a new pair) and carries on.
    const before = provider.saved!;
    await t.db.query(`UPDATE mcp_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [
      createHash('sha256').update(before.access_token).digest('hex'),
    ]);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('notes_user_list');
    expect(provider.saved!.access_token).not.toBe(before.access_token);
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
    // The access token is a per-user MCP token for user_42, listed with the application's tokens.
    const listed = (await (await t.api(`/api/v1/mcp/tokens?identifier=${USER}`)).json()) as {
      data: unknown[];
    };
    expect(listed.data.length).toBeGreaterThan(0);
    const others = (await (await t.api(`/api/v1/mcp/tokens?identifier=${OTHER}`)).json()) as {
      data: unknown[];
    };
    expect(others.data).toEqual([]);
  });

  it('narrows a grant to the connections and tools the application approves', async () => {
    const clientId = await publicClient();
    const refused = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: 'mcpar_nope', identifier: USER, connection_names: ['nope'] },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: 'invalid_input',
      errors: [{ path: '/connection_names/0' }],
    });
    const grant = await approvedCode(clientId, {
      approve: { connection_names: ['notes'], tools: ['notes_user_list'] },
    });
    const { body } = await exchange(clientId, grant);
    const client = new Client({ name: 'narrow', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${body.access_token}` } },
      }),
    );
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'notes_user_list',
      'portico_authorize',
      'portico_run_approved',
    ]);
  });

  it('rotates refresh tokens, and a rotated one presented again revokes the whole family', async () => {
    const clientId = await publicClient();
    const first = await exchange(clientId, await approvedCode(clientId));
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const refresh = (token: string) =>
      tokenRequest({
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: token,
        resource: `${t.url}/mcp`,
      });
    const second = await refresh(first.body.refresh_token!);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ token_type: 'Bearer', scope: 'mcp', expires_in: 3600 });
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect(await mcpStatus(second.body.access_token!)).toBe(200);
    // The access token issued beside the rotated refresh token is replaced too.
    expect(await mcpStatus(first.body.access_token!)).toBe(401);
    // Another client cannot use it.
    const stranger = await publicClient();
    expect(
      (
        await tokenRequest({
          grant_type: 'refresh_token',
          client_id: stranger,
          refresh_token: second.body.refresh_token!,
        })
      ).body.error,
    ).toBe('invalid_grant');

    const replayed = await refresh(first.body.refresh_token!);
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe('invalid_grant');
    // The family is gone: the newest refresh token and every access token it issued.
    expect((await refresh(second.body.refresh_token!)).body.error).toBe('invalid_grant');
    expect(await mcpStatus(second.body.access_token!)).toBe(401);
    expect(await mcpStatus(first.body.access_token!)).toBe(401);
  });

  it('refuses a wrong PKCE verifier, a wrong redirect_uri, a used code (revoking its tokens) and unknown grants', async () => {
    const clientId = await publicClient();
    const grant = await approvedCode(clientId);
    const wrongVerifier = await exchange(clientId, { ...grant, verifier: pkce().verifier });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('code_verifier'),
    });
    expect(wrongVerifier.headers.get('content-type')).toContain('application/json');
    const wrongRedirect = await exchange(clientId, { ...grant, redirectUri: 'http://127.0.0.1:53682/other' });
    expect(wrongRedirect.body.error).toBe('invalid_grant');
    const wrongResource = await tokenRequest({
      grant_type: 'authorization_code',
      client_id: clientId,
      code: grant.code,
      code_verifier: grant.verifier,
      redirect_uri: grant.redirectUri,
      resource: 'https://elsewhere.example.com/mcp',
    });
    expect(wrongResource.body.error).toBe('invalid_target');

    const ok = await exchange(clientId, grant);
    expect(ok.status).toBe(200);
    expect(await mcpStatus(ok.body.access_token!)).toBe(200);
    const reused = await exchange(clientId, grant);
    expect(reused.body.error).toBe('invalid_grant');
    expect(await mcpStatus(ok.body.access_token!)).toBe(401);
    expect(
      (
        await tokenRequest({
          grant_type: 'refresh_token',
          client_id: clientId,
          refresh_token: ok.body.refresh_token!,
        })
      ).body.error,
    ).toBe('invalid_grant');

    expect((await tokenRequest({ grant_type: 'password', client_id: clientId })).body.error).toBe(
      'unsupported_grant_type',
    );
    expect((await tokenRequest({ grant_type: 'authorization_code', client_id: clientId })).body.error).toBe(
      'invalid_request',
    );
    expect(
      (
        await tokenRequest({
          grant_type: 'authorization_code',
          client_id: clientId,
          code: 'pmc_forged',
          code_verifier: pkce().verifier,
          redirect_uri: CALLBACK,
        })
      ).body.error,
    ).toBe('invalid_grant');
  });

  it('refuses unknown clients, bad redirect URIs and malformed authorization requests', async () => {
    const { challenge } = pkce();
    const base = {
      response_type: 'code',
      redirect_uri: CALLBACK,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
    };
    const unknown = await openAuthorize({ ...base, client_id: 'mcpc_unknown' });
    expect(unknown.status).toBe(400);
    expect(unknown.location).toBeNull();
    expect(unknown.body).toContain('data-code="invalid_client"');
    const token = await tokenRequest({
      grant_type: 'refresh_token',
      client_id: 'mcpc_unknown',
      refresh_token: 'pmr_x',
    });
    expect(token.status).toBe(401);
    expect(token.body.error).toBe('invalid_client');

    const clientId = await publicClient();
    // An unregistered redirect URI is never redirected to.
    const elsewhere = await openAuthorize({
      ...base,
      client_id: clientId,
      redirect_uri: 'https://evil.example.com/cb',
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.location).toBeNull();
    expect(elsewhere.body).toContain('data-code="invalid_request"');
    // A loopback redirect URI may come back on another port (RFC 8252).
    const otherPort = await openAuthorize({
      ...base,
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:40000/callback',
    });
    expect(otherPort.location?.origin).toBe('https://app.example.com');

    // Mistakes after the redirect URI is known do not go back to the client either: a client that
    // registered itself could otherwise send people anywhere through the gateway (an open
    // redirect). The browser gets a page naming the error.
    const cases: Array<[Record<string, string>, string]> = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge: '' }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'short' }, 'invalid_request'],
      [{ resource: 'https://elsewhere.example.com/mcp' }, 'invalid_target'],
      [{ resource: `${t.url}/mcp/e/env_unknown` }, 'invalid_target'],
    ];
    for (const [change, error] of cases) {
      const res = await openAuthorize({ ...base, client_id: clientId, ...change });
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.location, JSON.stringify(change)).toBeNull();
      expect(res.body, JSON.stringify(change)).toContain(`data-code="${error}"`);
    }

    for (const [body, error] of [
      [{ redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example.com/cb#frag'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [
        { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/${i}`) },
        'invalid_redirect_uri',
      ],
      [
        { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'private_key_jwt' },
        'invalid_client_metadata',
      ],
      [{ redirect_uris: [CALLBACK], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      [{ redirect_uris: [CALLBACK], client_name: 'x'.repeat(201) }, 'invalid_client_metadata'],
    ] as const) {
      const res = await register(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error).toBe(error);
    }
    const huge = await fetch(`${t.url}/mcp/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CALLBACK], client_name: 'x'.repeat(20_000) }),
    });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('authenticates confidential clients by their secret, in the header or the body', async () => {
    const registered = await register({
      client_name: 'Confidential',
      redirect_uris: ['https://agent.example.com/callback'],
    });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret_expires_at: 0,
    });
    const { client_id: clientId, client_secret: secret } = registered.body as {
      client_id: string;
      client_secret: string;
    };
    expect(secret).toMatch(/^pmcs_/);
    const row = await t.db.query<{ secret_hash: string }>(
      'SELECT secret_hash FROM mcp_oauth_clients WHERE id = $1',
      [clientId],
    );
    expect(row[0]!.secret_hash).not.toContain(secret);

    const grant = await approvedCode(clientId, { redirectUri: 'https://agent.example.com/callback' });
    const params = {
      grant_type: 'authorization_code',
      code: grant.code,
      code_verifier: grant.verifier,
      redirect_uri: grant.redirectUri,
    };
    const basic = (s: string) => ({
      authorization: `Basic ${Buffer.from(`${clientId}:${s}`).toString('base64')}`,
    });
    const wrong = await tokenRequest(params, basic('pmcs_wrong'));
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await tokenRequest({ ...params, client_id: clientId })).status).toBe(401);
    const ok = await tokenRequest(params, basic(secret));
    expect(ok.status).toBe(200);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: ok.body.refresh_token!,
      client_id: clientId,
      client_secret: secret,
    });
    expect(refreshed.status).toBe(200);
  });

  it('accepts a client ID metadata document as client_id, checked against its URL', async () => {
    const clientId = `${documentsUrl}/clients/agent.json`;
    served.set('/clients/agent.json', {
      client_id: clientId,
      client_name: 'Document Agent',
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
    });
    const { verifier, challenge } = pkce();
    const opened = await openAuthorize({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(opened.status, opened.body).toBe(302);
    expect(opened.location!.searchParams.get('client_name')).toBe('Document Agent');
    const approved = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: opened.location!.searchParams.get('mcp_auth_request_id'), identifier: USER },
    });
    const code = new URL(((await approved.json()) as { redirect_url: string }).redirect_url).searchParams.get(
      'code',
    )!;
    const tokens = await tokenRequest({
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: CALLBACK,
    });
    expect(tokens.status).toBe(200);
    expect(await mcpStatus(tokens.body.access_token!)).toBe(200);

    const refusedDocuments: Array<[string, unknown]> = [
      ['/clients/liar.json', { client_id: `${documentsUrl}/clients/other.json`, redirect_uris: [CALLBACK] }],
      [
        '/clients/secret.json',
        {
          client_id: `${documentsUrl}/clients/secret.json`,
          redirect_uris: [CALLBACK],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      [
        '/clients/bad-redirect.json',
        {
          client_id: `${documentsUrl}/clients/bad-redirect.json`,
          redirect_uris: ['http://evil.example.com/cb'],
        },
      ],
      [
        '/clients/huge.json',
        { client_id: `${documentsUrl}/clients/huge.json`, redirect_uris: [CALLBACK], pad: 'x'.repeat(6000) },
      ],
      ['/clients/not-json.json', 'not json'],
      ['/clients/missing.json', undefined],
    ];
    for (const [path, document] of refusedDocuments) {
      if (document !== undefined) served.set(path, document);
      const res = await openAuthorize({
        response_type: 'code',
        client_id: `${documentsUrl}${path}`,
        redirect_uri: CALLBACK,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      expect(res.status, path).toBe(400);
      expect(res.body, path).toContain('data-code="invalid_client"');
    }
  });

  it('refuses client ID metadata documents on private addresses unless allowed', async () => {
    const strict = await startTestGateway(backend, {}, { awaitSandbox: false });
    try {
      expect(
        (await strict.api('/api/v1/mcp/oauth/settings', { method: 'PUT', json: { sign_in_url: SIGN_IN } }))
          .status,
      ).toBe(200);
      for (const clientId of [
        `${documentsUrl}/clients/agent.json`,
        'https://127.0.0.1/clients/agent.json',
        'https://localhost/x.json',
      ]) {
        const res = await fetch(
          `${strict.url}/mcp/oauth/authorize?${new URLSearchParams({
            response_type: 'code',
            client_id: clientId,
            redirect_uri: CALLBACK,
            code_challenge: pkce().challenge,
            code_challenge_method: 'S256',
          })}`,
          { redirect: 'manual' },
        );
        expect(res.status, clientId).toBe(400);
        expect(await res.text()).toContain('data-code="invalid_client"');
      }
    } finally {
      await strict.close();
    }
  });

  it('sends a denied request back with access_denied, and refuses unknown, expired and answered requests', async () => {
    const clientId = await publicClient();
    const opened = await openAuthorize({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 'st',
    });
    const id = opened.location!.searchParams.get('mcp_auth_request_id')!;
    const denied = await t.api('/api/v1/mcp/oauth/deny', { method: 'POST', json: { auth_request_id: id } });
    expect(denied.status).toBe(200);
    const redirect = new URL(((await denied.json()) as { redirect_url: string }).redirect_url);
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    expect(redirect.searchParams.get('state')).toBe('st');
    expect(redirect.searchParams.get('code')).toBeNull();
    const late = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: id, identifier: USER },
    });
    expect(late.status).toBe(409);
    expect(late.headers.get('content-type')).toContain('application/problem+json');
    expect(await late.json()).toMatchObject({ code: 'mcp_auth_request_used' });

    const unknown = await t.api('/api/v1/mcp/oauth/deny', {
      method: 'POST',
      json: { auth_request_id: 'mcpar_nope' },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'mcp_auth_request_not_found' });

    const another = await openAuthorize({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    const expiring = another.location!.searchParams.get('mcp_auth_request_id')!;
    await t.db.query(`UPDATE mcp_oauth_requests SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      expiring,
    ]);
    const expired = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: expiring, identifier: USER },
    });
    expect(expired.status).toBe(410);
    expect(await expired.json()).toMatchObject({ code: 'mcp_auth_request_expired' });
    const missingIdentifier = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: id },
    });
    expect(missingIdentifier.status).toBe(400);
    expect(await missingIdentifier.json()).toMatchObject({ code: 'invalid_input' });
  });

  it('revokes a refresh token with its grant, and an access token alone (RFC 7009)', async () => {
    const clientId = await publicClient();
    const first = await exchange(clientId, await approvedCode(clientId));
    const revokedAccess = await tokenRequest(
      { token: first.body.access_token!, client_id: clientId },
      {},
      'revoke',
    );
    expect(revokedAccess.status).toBe(200);
    expect(await mcpStatus(first.body.access_token!)).toBe(401);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: first.body.refresh_token!,
    });
    expect(refreshed.status).toBe(200);

    // Another client's revocation does nothing; unknown tokens are fine.
    const stranger = await publicClient();
    expect(
      (await tokenRequest({ token: refreshed.body.refresh_token!, client_id: stranger }, {}, 'revoke'))
        .status,
    ).toBe(200);
    expect(await mcpStatus(refreshed.body.access_token!)).toBe(200);
    expect((await tokenRequest({ token: 'pmr_unknown', client_id: clientId }, {}, 'revoke')).status).toBe(
      200,
    );

    expect(
      (await tokenRequest({ token: refreshed.body.refresh_token!, client_id: clientId }, {}, 'revoke'))
        .status,
    ).toBe(200);
    expect(await mcpStatus(refreshed.body.access_token!)).toBe(401);
    expect(
      (
        await tokenRequest({
          grant_type: 'refresh_token',
          client_id: clientId,
          refresh_token: refreshed.body.refresh_token!,
        })
      ).body.error,
    ).toBe('invalid_grant');
    expect((await tokenRequest({ token: 'x' }, {}, 'revoke')).body.error).toBe('invalid_client');
  });

  it('ends a grant with the application client that approved it', async () => {
    const created = await t.api('/api/v1/clients', { method: 'POST', json: { name: 'approver' } });
    const approver = (await created.json()) as { client_id: string; client_secret: string };
    const approverToken = await gatewayToken(t.url, approver.client_id, approver.client_secret);
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const opened = await openAuthorize({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const approved = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      token: approverToken,
      json: { auth_request_id: opened.location!.searchParams.get('mcp_auth_request_id'), identifier: USER },
    });
    const code = new URL(((await approved.json()) as { redirect_url: string }).redirect_url).searchParams.get(
      'code',
    )!;
    const tokens = await exchange(clientId, { code, verifier, redirectUri: CALLBACK });
    expect(await mcpStatus(tokens.body.access_token!)).toBe(200);
    expect((await t.api(`/api/v1/clients/${approver.client_id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await mcpStatus(tokens.body.access_token!)).toBe(401);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: tokens.body.refresh_token!,
    });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it("serves an environment's own MCP URL, /mcp/e/{environment_id}, to its tokens", async () => {
    const environmentId = ((await (await t.api('/api/v1/environment')).json()) as { id: string }).id;
    const own = `${t.url}/mcp/e/${environmentId}`;
    expect(
      await (await fetch(`${t.url}/.well-known/oauth-protected-resource/mcp/e/${environmentId}`)).json(),
    ).toMatchObject({
      resource: own,
      authorization_servers: [t.url],
    });
    const missing = await fetch(`${t.url}/.well-known/oauth-protected-resource/mcp/e/env_unknown`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    const unauthenticated = await fetch(own, { method: 'POST' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toContain(
      `resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp/e/${environmentId}"`,
    );

    const provider = new MemoryProvider();
    const transport = new StreamableHTTPClientTransport(new URL(own), { authProvider: provider });
    await expect(new Client({ name: 'env', version: '1.0.0' }).connect(transport)).rejects.toThrow(
      UnauthorizedError,
    );
    expect(provider.authorizationUrl!.searchParams.get('resource')).toBe(own);
    const signIn = new URL(
      (await fetch(provider.authorizationUrl!, { redirect: 'manual' })).headers.get('location')!,
    );
    const approved = await t.api('/api/v1/mcp/oauth/approve', {
      method: 'POST',
      json: { auth_request_id: signIn.searchParams.get('mcp_auth_request_id'), identifier: USER },
    });
    const code = new URL(((await approved.json()) as { redirect_url: string }).redirect_url).searchParams.get(
      'code',
    )!;
    await transport.finishAuth(code);
    const client = new Client({ name: 'env', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(own), { authProvider: provider }));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('notes_user_list');
    expect(await mcpStatus(provider.saved!.access_token, `/mcp/e/env_other`)).toBe(401);
  });
});
