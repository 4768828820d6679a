import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ERROR_CODES } from '../../gateway/src/errors/problem.js';
import { BACKENDS } from '../../gateway/test/helpers/backends.js';
import { openLink, sandboxAccount } from '../../gateway/test/helpers/flow.js';
import { startTestGateway, type TestGateway } from '../../gateway/test/helpers/gateway.js';
import { emulatorControl } from '../../gateway/test/helpers/tools.js';
import { anthropic } from '../src/adapters/anthropic.js';
import * as sdk from '../src/index.js';
import {
  AccountNotActiveError,
  AccountNotFoundError,
  AmbiguousAccountError,
  ConnectionExistsError,
  ConnectionNotFoundError,
  ERROR_CLASSES,
  ExecutionNotFoundError,
  errorClassName,
  InvalidClientError,
  InvalidInputError,
  InvalidPathError,
  Portico,
  PorticoConnectionError,
  PorticoError,
  PROBLEM_CODES,
  type ProblemCode,
  problemError,
  ServiceUnavailableError,
  UnknownToolError,
  UpstreamNotFoundError,
  UpstreamRateLimitedError,
} from '../src/index.js';

/** The error a call is expected to fail with. */
function failure<E>(call: PromiseLike<unknown>): Promise<E> {
  return Promise.resolve(call).then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as E,
  );
}

/** A fetch that records what the SDK sent and what came back, passing everything to the real fetch. */
function recordingFetch() {
  const calls: Array<{ method: string; path: string; status: number }> = [];
  const impl: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    calls.push({ method: init?.method ?? 'GET', path: new URL(String(input)).pathname, status: res.status });
    return res;
  };
  return {
    calls,
    impl,
    tokenFetches: () => calls.filter((c) => c.path === '/oauth/token').length,
    refused: () => calls.filter((c) => c.status === 401).length,
  };
}

describe('the error classes', () => {
  it('know every problem code of the gateway, with its status and retryability', () => {
    expect(Object.keys(PROBLEM_CODES).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      const known = PROBLEM_CODES[code as ProblemCode];
      expect(known, code).toEqual({ status: info.status, retryable: 'retryable' in info && info.retryable });
      // Exported under its own name, and what a problem with that code is thrown as.
      const name = errorClassName(code as ProblemCode);
      const Class = (sdk as unknown as Record<string, unknown>)[name];
      expect(Class, name).toBe(ERROR_CLASSES[code as ProblemCode]);
      const error = problemError(info.status, { code, detail: `a ${code}`, request_id: 'req_1' });
      expect(error).toBeInstanceOf(Class as typeof PorticoError);
      expect(error).toBeInstanceOf(PorticoError);
      expect(error).toMatchObject({
        name,
        code,
        status: info.status,
        detail: `a ${code}`,
        requestId: 'req_1',
      });
    }
  });

  it('carry a code this SDK does not know yet as a PorticoError', () => {
    const error = problemError(418, { code: 'teapot', detail: 'short and stout', retryable: false });
    expect(error.constructor).toBe(PorticoError);
    expect(error).toMatchObject({ code: 'teapot', status: 418, detail: 'short and stout' });
  });
});

describe('configuration', () => {
  it('comes from PORTICO_ENV_URL, PORTICO_CLIENT_ID and PORTICO_CLIENT_SECRET when not passed', () => {
    vi.stubEnv('PORTICO_ENV_URL', 'http://gateway.test:8080/');
    vi.stubEnv('PORTICO_CLIENT_ID', 'cli_x');
    vi.stubEnv('PORTICO_CLIENT_SECRET', 'pcs_x');
    try {
      expect(new Portico().envUrl).toBe('http://gateway.test:8080');
      vi.stubEnv('PORTICO_CLIENT_SECRET', '');
      expect(() => new Portico()).toThrow('pass `clientSecret` or set PORTICO_CLIENT_SECRET');
      expect(() => new Portico({ envUrl: 'localhost', clientId: 'a', clientSecret: 'b' })).toThrow(
        'envUrl must be an absolute URL',
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reports an unreachable gateway as a connection error', async () => {
    const portico = new Portico({ envUrl: 'http://127.0.0.1:9', clientId: 'a', clientSecret: 'b' });
    await expect(portico.connections.list()).rejects.toBeInstanceOf(PorticoConnectionError);
  });
});

describe.each(BACKENDS)('the SDK against a gateway on $name', (backend) => {
  let t: TestGateway;
  let portico: Portico;
  const user = 'sdk_user';
  let notion: string;

  beforeAll(async () => {
    // The shortest token lifetime the gateway allows, so expiry can be reached by moving the clock.
    t = await startTestGateway(backend, { PORTICO_ACCESS_TOKEN_TTL: '60' });
    portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    ({ connection: notion } = await sandboxAccount(t, { provider: 'notion', identifier: user }));
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const client = (fetchImpl?: typeof fetch, extra: Partial<sdk.PorticoOptions> = {}) =>
    new Portico({
      envUrl: t.url,
      clientId: t.clientId,
      clientSecret: t.clientSecret,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
      ...extra,
    });

  describe('connections', () => {
    it('creates, lists page by page, gets, updates and deletes', async () => {
      const created = await portico.connections.create({
        name: 'sdk-crm',
        provider: 'hubspot',
        sandbox: true,
      });
      expect(created).toMatchObject({ name: 'sdk-crm', provider: 'hubspot', sandbox: true });
      expect(created.id).toMatch(/^conn_/);
      expect(created.redirectUri).toContain(`/sso/v1/oauth/${created.id}/callback`);
      await portico.connections.create({ name: 'sdk-cal', provider: 'google_calendar', sandbox: true });

      const first = await portico.connections.list({ pageSize: 1 });
      expect(first.data).toHaveLength(1);
      expect(first.nextPageToken).toEqual(expect.any(String));
      const names: string[] = [];
      for await (const c of portico.connections.list({ pageSize: 1 })) names.push(c.name);
      expect(names).toEqual(expect.arrayContaining(['sdk-crm', 'sdk-cal', notion]));
      expect((await portico.connections.list({ provider: 'hubspot' }).toArray()).map((c) => c.name)).toEqual([
        'sdk-crm',
      ]);

      expect(await portico.connections.get('sdk-crm')).toEqual(created);
      const updated = await portico.connections.update('sdk-crm', { displayName: 'CRM (sandbox)' });
      expect(updated.displayName).toBe('CRM (sandbox)');

      await portico.connections.delete('sdk-cal');
      const missing = await failure<ConnectionNotFoundError>(portico.connections.get('sdk-cal'));
      expect(missing).toBeInstanceOf(ConnectionNotFoundError);
      expect((missing as ConnectionNotFoundError).status).toBe(404);
      expect((missing as ConnectionNotFoundError).detail).toContain('sdk-cal');

      const duplicate = await failure(
        portico.connections.create({ name: 'sdk-crm', provider: 'hubspot', sandbox: true }),
      );
      expect(duplicate).toBeInstanceOf(ConnectionExistsError);
    });

    it('throws InvalidInputError with the field errors for a bad body', async () => {
      const error = await failure<InvalidInputError>(
        portico.connections.create({ name: 'bad name!', provider: 'notion', sandbox: true }),
      );
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.errors.some((e) => e.path === '/name')).toBe(true);
      expect(error.requestId).toEqual(expect.any(String));
    });
  });

  describe('authorization links and connected accounts', () => {
    it('makes an authorization link', async () => {
      const link = await portico.getAuthorizationLink({
        connectionName: notion,
        identifier: 'sdk_link_user',
        redirectUrl: 'https://app.example.com/done',
        state: 'xyz',
      });
      expect(link.link.startsWith(`${t.url}/connect/`)).toBe(true);
      expect(link.connectedAccountId).toMatch(/^ca_/);
      expect(Date.parse(link.expiresAt)).toBeGreaterThan(Date.now());
    });

    it('gets or creates an account, with a link only when it is not active', async () => {
      const fresh = await portico.getOrCreateConnectedAccount({
        connectionName: notion,
        identifier: 'sdk_new',
      });
      expect(fresh.account).toMatchObject({
        identifier: 'sdk_new',
        status: 'PENDING_AUTH',
        connectionName: notion,
      });
      expect(fresh.authorizationLink?.connectedAccountId).toBe(fresh.account.id);
      const again = await portico.getOrCreateConnectedAccount({
        connectionName: notion,
        identifier: 'sdk_new',
      });
      expect(again.account.id).toBe(fresh.account.id);

      const active = await portico.getOrCreateConnectedAccount({ connectionName: notion, identifier: user });
      expect(active.account.status).toBe('ACTIVE');
      expect(active.authorizationLink).toBeUndefined();
    });

    it('lists accounts with async iteration over pages, gets and deletes one', async () => {
      for (const id of ['sdk_page_1', 'sdk_page_2', 'sdk_page_3']) {
        await portico.getAuthorizationLink({ connectionName: notion, identifier: id });
      }
      const listing = portico.connectedAccounts.list({
        connectionName: notion,
        status: 'PENDING_AUTH',
        pageSize: 1,
      });
      let pages = 0;
      for await (const page of listing.pages()) {
        pages++;
        expect(page.data.length).toBeLessThanOrEqual(1);
      }
      const identifiers: string[] = [];
      for await (const account of listing) identifiers.push(account.identifier);
      expect(identifiers).toEqual(expect.arrayContaining(['sdk_page_1', 'sdk_page_2', 'sdk_page_3']));
      expect(pages).toBe(identifiers.length);

      const [account] = (await portico.connectedAccounts.list({ identifier: 'sdk_page_2' })).data;
      expect(await portico.connectedAccounts.get(account!.id)).toEqual(account);
      const deleted = await portico.connectedAccounts.delete(account!.id);
      expect(deleted.status).toBe('DISCONNECTED');
      await expect(portico.connectedAccounts.get('ca_missing')).rejects.toBeInstanceOf(AccountNotFoundError);
    });
  });

  describe('tools and executions', () => {
    it('lists the catalog in every format and gets one tool', async () => {
      const tools = await portico.tools.list();
      expect(tools).toHaveLength(45);
      const fetchTool = tools.find((tool) => tool.name === 'notes_data_fetch')!;
      expect(fetchTool).toMatchObject({
        provider: 'notion',
        annotations: { readOnly: true, destructive: false },
        inputSchema: { type: 'object' },
        versions: ['1'],
      });
      expect(
        (await portico.tools.list({ provider: 'hubspot' })).every((tool) => tool.provider === 'hubspot'),
      ).toBe(true);
      const openai = await portico.tools.list({ provider: 'notion', format: 'openai' });
      expect(openai[0]).toMatchObject({ type: 'function', function: { name: expect.any(String) } });
      const anthropic = await portico.tools.list({ format: 'anthropic' });
      expect(anthropic[0]).toHaveProperty('input_schema');
      const mcp = await portico.tools.list({ format: 'mcp' });
      expect(mcp[0]).toHaveProperty('annotations.openWorldHint', true);

      expect(await portico.tools.get('notes_data_fetch')).toEqual(fetchTool);
      expect(await portico.tools.get('notes_data_fetch', { format: 'mcp' })).toHaveProperty('inputSchema');
      await expect(portico.tools.get('no_such_tool')).rejects.toBeInstanceOf(UnknownToolError);
    });

    it('searches the catalog by a task in plain words, with filters and pages', async () => {
      const first = await portico.tools.search('find contacts in the CRM by last name', { pageSize: 3 });
      expect(first.data).toHaveLength(3);
      expect(first.data.map((t) => t.name)).toContain('crm_contacts_search');
      expect(first.data[0]!.score).toBeGreaterThanOrEqual(first.data[2]!.score);
      expect(first.data[0]!.tags).toContain('specification');
      expect(typeof first.nextPageToken).toBe('string');
      const every = await portico.tools
        .search('find contacts in the CRM by last name', { pageSize: 3 })
        .toArray();
      expect(new Set(every.map((t) => t.name)).size).toBe(every.length);
      expect(every.length).toBeGreaterThan(3);
      const reads = await portico.tools.search('calendar events', { readOnly: true, tags: ['calendar'] });
      expect(reads.data.length).toBeGreaterThan(0);
      expect(reads.data.every((t) => t.annotations.readOnly && t.provider === 'google_calendar')).toBe(true);
      expect(
        (await portico.tools.list({ tags: ['destructive'], provider: 'notion' })).map((t) => t.name),
      ).toContain('notes_block_delete');
      const bad = await failure<InvalidInputError>(portico.tools.search('mail', { tags: ['nope'] }));
      expect(bad).toBeInstanceOf(InvalidInputError);
      expect(bad.detail).toMatch(/tags are: /);
    });

    it('manages toolsets, and lists, searches and builds tool sets within one', async () => {
      const created = await portico.toolsets.create({
        name: 'sdk-notes-readers',
        providers: ['notion'],
        tags: ['read-only'],
        mcpMode: 'search',
      });
      expect(created).toMatchObject({ name: 'sdk-notes-readers', mcpMode: 'search' });
      expect(created.mcpUrl).toMatch(/\/mcp\/t\/sdk-notes-readers$/);
      await expect(
        portico.toolsets.create({ name: 'sdk-notes-readers', tools: ['notes_user_list'] }),
      ).rejects.toBeInstanceOf(sdk.ToolsetExistsError);
      expect((await portico.toolsets.list().toArray()).map((t) => t.name)).toContain('sdk-notes-readers');
      const inside = await portico.tools.list({ toolset: 'sdk-notes-readers' });
      expect(inside.length).toBeGreaterThan(2);
      expect(inside.every((t) => t.provider === 'notion' && t.annotations.readOnly)).toBe(true);
      const found = await portico.tools.search('create a page', { toolset: 'sdk-notes-readers' });
      expect(found.data.map((t) => t.name)).not.toContain('notes_page_create');
      const changed = await portico.toolsets.update('sdk-notes-readers', {
        tags: null,
        tools: ['notes_user_list'],
      });
      expect(changed.tags).toBeUndefined();
      const { definitions } = await portico.tools.for(anthropic, {
        identifier: user,
        toolset: 'sdk-notes-readers',
      });
      expect(definitions.some((d) => d.name === 'notes_page_create')).toBe(true);
      expect(definitions.every((d) => d.name.startsWith('notes_') || d.name === 'portico_authorize')).toBe(
        true,
      );
      await portico.toolsets.delete('sdk-notes-readers');
      await expect(portico.toolsets.get('sdk-notes-readers')).rejects.toBeInstanceOf(
        sdk.ToolsetNotFoundError,
      );
    });

    it('executes a tool and reads its execution record', async () => {
      const result = await portico.executeTool<{ results: unknown[] }>({
        toolName: 'notes_data_fetch',
        identifier: user,
        toolInput: { page_size: 2 },
      });
      expect(Array.isArray(result.data.results)).toBe(true);
      expect(result.executionId).toMatch(/^exec_/);
      const execution = await portico.executions.get(result.executionId);
      expect(execution).toMatchObject({
        id: result.executionId,
        toolName: 'notes_data_fetch',
        identifier: user,
        status: 'success',
        errorCode: null,
        error: null,
        input: { page_size: 2 },
        upstreamStatus: 200,
        attempts: 1,
        tokenRefreshed: false,
        outputSummary: { type: 'object', hasNextPage: expect.any(Boolean) },
        timings: { totalMs: expect.any(Number) },
      });
      expect(execution.links.connection).toMatch(/^\/api\/v1\/connections\//);
      const listed = await portico.executions.list({ toolName: 'notes_data_fetch', status: 'success' });
      expect(listed.data.map((e) => e.id)).toContain(result.executionId);
      await expect(portico.executions.get('exec_missing')).rejects.toBeInstanceOf(ExecutionNotFoundError);
    });

    it('throws each tool refusal as its own class, with what the caller needs to act on it', async () => {
      const invalid = await failure<InvalidInputError>(
        portico.executeTool({
          toolName: 'notes_data_fetch',
          identifier: user,
          toolInput: { page_size: 'ten' },
        }),
      );
      expect(invalid).toBeInstanceOf(InvalidInputError);
      expect(invalid.errors).toContainEqual(expect.objectContaining({ path: '/tool_input/page_size' }));

      await expect(
        portico.executeTool({ toolName: 'no_such_tool', identifier: user, toolInput: {} }),
      ).rejects.toBeInstanceOf(UnknownToolError);
      // A never-seen end user: the authorization to give, with its link.
      const newcomer = await failure<AccountNotActiveError>(
        portico.executeTool({ toolName: 'notes_data_fetch', identifier: 'nobody', toolInput: {} }),
      );
      expect(newcomer).toBeInstanceOf(AccountNotActiveError);
      expect(newcomer.authorizationLink?.link.startsWith(`${t.url}/connect/`)).toBe(true);

      const notFound = await failure<UpstreamNotFoundError>(
        portico.executeTool({
          toolName: 'notes_page_get',
          identifier: user,
          toolInput: { page_id: '00000000-0000-4000-8000-000000000000' },
        }),
      );
      expect(notFound).toBeInstanceOf(UpstreamNotFoundError);
      expect(notFound.upstream?.status).toBe(404);

      // A provider asking for a wait longer than the SDK waits: thrown at once, with the wait.
      const control = emulatorControl(t);
      control.addFault({
        emulator: 'notion',
        path: '^/notion/v1/search',
        status: 429,
        headers: { 'retry-after': '30' },
        body: { object: 'error', status: 429, code: 'rate_limited', message: 'Slow down.' },
        times: 5,
      });
      try {
        const limited = await failure<UpstreamRateLimitedError>(
          portico.executeTool({ toolName: 'notes_data_fetch', identifier: user, toolInput: {} }),
        );
        expect(limited).toBeInstanceOf(UpstreamRateLimitedError);
        expect(limited.retryable).toBe(true);
        expect(limited.retryAfterMs).toBe(30_000);
      } finally {
        control.clearFaults();
      }
    });

    it('throws AmbiguousAccountError when the identifier has two accounts for the provider', async () => {
      await sandboxAccount(t, { provider: 'google_docs', identifier: 'sdk_two', connection: 'sdk-docs-a' });
      await sandboxAccount(t, { provider: 'google_docs', identifier: 'sdk_two', connection: 'sdk-docs-b' });
      const error = await failure<AmbiguousAccountError>(
        portico.executeTool({
          toolName: 'docs_read_document',
          identifier: 'sdk_two',
          toolInput: { document_id: '1Pq7Yh3xKc2eN0dVfWmBzRtL9sAaJgU4oHiE5nX6yC8w' },
        }),
      );
      expect(error).toBeInstanceOf(AmbiguousAccountError);
      expect(error.detail).toContain('sdk-docs-a');
    });

    it('throws AccountNotActiveError carrying a working authorization link', async () => {
      await sandboxAccount(t, { provider: 'hubspot', identifier: 'sdk_revoked', connection: 'sdk-revoked' });
      const revoke = await t.api('/api/v1/sandbox/connections/sdk-revoked/revoke-grants', { method: 'POST' });
      expect(revoke.status).toBe(200);
      const error = await failure<AccountNotActiveError>(
        portico.executeTool({ toolName: 'crm_contacts_list', identifier: 'sdk_revoked', toolInput: {} }),
      );
      expect(error).toBeInstanceOf(AccountNotActiveError);
      expect(error.status).toBe(409);
      expect(error.authorizationLink?.link.startsWith(`${t.url}/connect/`)).toBe(true);
      const opened = await openLink(error.authorizationLink!.link);
      expect(opened.status).toBe(303);
    });
  });

  describe('request (the proxy)', () => {
    it('returns the provider answer as JSON, text or bytes, with query parameters and a JSON body', async () => {
      const me = await portico.request({ connectionName: notion, identifier: user, path: '/v1/users/me' });
      expect(me.status).toBe(200);
      expect(me.headers.get('content-type')).toContain('application/json');
      expect(await me.json()).toMatchObject({ object: 'user' });

      const users = await portico.request({
        connectionName: notion,
        identifier: user,
        path: '/v1/users',
        queryParams: { page_size: 1 },
      });
      const text = await users.text();
      expect(JSON.parse(text).results).toHaveLength(1);

      const search = await portico.request({
        connectionName: notion,
        identifier: user,
        method: 'POST',
        path: '/v1/search',
        formData: { page_size: 1 },
      });
      expect(search.status).toBe(200);
      const bytes = await search.bytes();
      expect(JSON.parse(new TextDecoder().decode(bytes)).object).toBe('list');

      const uploaded = await portico.request({
        connectionName: notion,
        identifier: user,
        method: 'POST',
        path: '/v1/search',
        headers: { 'content-type': 'application/json' },
        formData: new Blob([JSON.stringify({ page_size: 1 })]),
      });
      expect(((await uploaded.json()) as { results: unknown[] }).results).toHaveLength(1);
    });

    it('gives the provider’s own errors back as responses and throws the gateway’s', async () => {
      const missing = await portico.request({
        connectionName: notion,
        identifier: user,
        path: '/v1/pages/00000000000000000000000000000000',
      });
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ object: 'error', status: 404 });

      await expect(
        portico.request({ connectionName: notion, identifier: user, path: '/v1/%252e%252e/admin' }),
      ).rejects.toBeInstanceOf(InvalidPathError);
      // A dot segment would be resolved by the URL before the gateway saw it: refused in the SDK.
      const outside = await failure<InvalidPathError>(
        portico.request({ connectionName: notion, identifier: user, path: '/../api/v1/connections' }),
      );
      expect(outside).toBeInstanceOf(InvalidPathError);
      expect(outside.detail).toContain('".."');
      await expect(
        portico.request({ connectionName: notion, identifier: 'nobody', path: '/v1/users/me' }),
      ).rejects.toBeInstanceOf(AccountNotActiveError);
      await expect(
        portico.request({ connectionName: 'nope', identifier: user, path: '/v1/users/me' }),
      ).rejects.toBeInstanceOf(ConnectionNotFoundError);
    });
  });

  describe('the gateway token', () => {
    it('is fetched once and reused', async () => {
      const rec = recordingFetch();
      const p = client(rec.impl);
      for (let i = 0; i < 5; i++) await p.connections.list();
      expect(rec.tokenFetches()).toBe(1);
    });

    it('refuses wrong client credentials with InvalidClientError', async () => {
      const p = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: 'pcs_wrong' });
      const error = await failure<InvalidClientError>(p.connections.list());
      expect(error).toBeInstanceOf(InvalidClientError);
      expect(error.status).toBe(401);
      expect(error.message).not.toContain('pcs_wrong');
    });

    it('is renewed before it expires, once for concurrent calls', async () => {
      vi.useFakeTimers({ toFake: ['Date', 'performance'], shouldAdvanceTime: true });
      const rec = recordingFetch();
      const p = client(rec.impl);
      await p.connections.list();
      expect(rec.tokenFetches()).toBe(1);
      // Past the 60 s lifetime on both clocks: the SDK renews first, so the gateway never refuses.
      vi.advanceTimersByTime(61_000);
      await Promise.all(Array.from({ length: 8 }, () => p.connections.list()));
      expect(rec.tokenFetches()).toBe(2);
      expect(rec.refused()).toBe(0);
    });

    it('is renewed once after the gateway refuses it, and the refused calls are replayed', async () => {
      const rec = recordingFetch();
      const p = client(rec.impl);
      await p.connections.list();
      // Only the wall clock moves: the gateway sees the token expired while the SDK still holds it.
      vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
      vi.setSystemTime(Date.now() + 61_000);
      const pages = await Promise.all(Array.from({ length: 8 }, () => p.connections.list()));
      expect(pages.every((page) => page.data.length > 0)).toBe(true);
      expect(rec.refused()).toBe(8);
      expect(rec.tokenFetches()).toBe(2);
    });
  });

  describe('retries', () => {
    /** A real HTTP server in front of the gateway that answers canned problems first, then passes through. */
    async function front(canned: Array<{ status: number; code: string; retry_after_ms?: number }>) {
      let apiCalls = 0;
      const server = http.createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        if (req.url?.startsWith('/api/')) {
          apiCalls++;
          const next = canned.shift();
          if (next) {
            res.writeHead(next.status, { 'content-type': 'application/problem+json' });
            res.end(
              JSON.stringify({
                ...next,
                type: 'https://portico.dev/problems/x',
                detail: 'canned',
                retryable: next.status >= 500 || next.status === 429,
              }),
            );
            return;
          }
        }
        const upstream = await fetch(`${t.url}${req.url}`, {
          method: req.method!,
          headers: Object.fromEntries(
            Object.entries(req.headers).filter(
              ([k]) => !['host', 'connection', 'content-length'].includes(k),
            ),
          ) as Record<string, string>,
          ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
        });
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'text/plain',
        });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        apiCalls: () => apiCalls,
        close: () => new Promise<void>((r) => server.close(() => r())),
      };
    }

    it('retries a retryable problem with backoff, up to the limit', async () => {
      const f = await front([
        { status: 503, code: 'service_unavailable' },
        { status: 503, code: 'service_unavailable', retry_after_ms: 20 },
      ]);
      try {
        const p = new Portico({ envUrl: f.url, clientId: t.clientId, clientSecret: t.clientSecret });
        const page = await p.connections.list();
        expect(page.data.length).toBeGreaterThan(0);
        expect(f.apiCalls()).toBe(3);
      } finally {
        await f.close();
      }
      // The retries are bounded: maxRetries 1 makes two attempts, then the problem is thrown.
      const g = await front([1, 2, 3].map(() => ({ status: 503, code: 'service_unavailable' })));
      try {
        const p = new Portico({
          envUrl: g.url,
          clientId: t.clientId,
          clientSecret: t.clientSecret,
          maxRetries: 1,
        });
        await expect(p.connections.list()).rejects.toBeInstanceOf(ServiceUnavailableError);
        expect(g.apiCalls()).toBe(2);
      } finally {
        await f.close();
      }
    });

    it('does not retry a problem that is not retryable, nor wait out a long Retry-After', async () => {
      const f = await front([
        { status: 404, code: 'connection_not_found' },
        { status: 429, code: 'rate_limited', retry_after_ms: 60_000 },
      ]);
      try {
        const p = new Portico({ envUrl: f.url, clientId: t.clientId, clientSecret: t.clientSecret });
        await expect(p.connections.get('x')).rejects.toBeInstanceOf(ConnectionNotFoundError);
        expect(f.apiCalls()).toBe(1);
        const started = Date.now();
        const limited = await failure<PorticoError>(p.connections.list());
        expect(limited).toBeInstanceOf(sdk.RateLimitedError);
        expect(limited.retryAfterMs).toBe(60_000);
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(f.apiCalls()).toBe(2);
      } finally {
        await f.close();
      }
    });
  });
});
