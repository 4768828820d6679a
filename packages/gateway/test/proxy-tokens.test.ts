import { APIErrorCode, APIResponseError, Client, collectPaginatedAPI, LogLevel } from '@notionhq/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { REQUEST_PATH_READS, startTestGateway, type TestGateway } from './helpers/gateway.js';

interface Minted {
  id: string;
  token: string;
  connection_name: string;
  identifier: string;
  expires_at: string;
}

describe.each(BACKENDS)('proxy tokens on $name', (backend) => {
  let t: TestGateway;
  const ID = 'ppt-user';
  const OTHER = 'ppt-other';
  let notion: string;
  let drive: string;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    notion = (await sandboxAccount(t, { provider: 'notion', identifier: ID })).connection;
    await sandboxAccount(t, { provider: 'notion', identifier: OTHER });
    drive = (await sandboxAccount(t, { provider: 'google_drive', identifier: ID })).connection;
  });
  afterAll(async () => {
    await t?.close();
  });

  const mint = async (body: Record<string, unknown>) => {
    const res = await t.api('/api/v1/proxy/tokens', { method: 'POST', json: body });
    return {
      status: res.status,
      headers: res.headers,
      body: (await res.json()) as Minted & Record<string, unknown>,
    };
  };
  const withToken = (path: string, token: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/proxy${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });

  it('mints a token shown once, lists it without the token, and revokes it', async () => {
    const minted = await mint({ connection_name: notion, identifier: ID, expires_in: 3600 });
    expect(minted.status).toBe(201);
    expect(minted.headers.get('cache-control')).toBe('no-store');
    expect(minted.body.token).toMatch(/^ppt_[A-Za-z0-9]{43}$/);
    expect(minted.body).toMatchObject({ connection_name: notion, identifier: ID });
    const expiresIn = Date.parse(minted.body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(3500_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);

    // Stored hashed: the token's text is nowhere in the store.
    const stored = await t.db.query<Record<string, unknown>>('SELECT * FROM proxy_tokens WHERE id = $1', [
      minted.body.id,
    ]);
    expect(JSON.stringify(stored)).not.toContain(minted.body.token);

    const list = (await (await t.api(`/api/v1/proxy/tokens?identifier=${ID}`)).json()) as {
      data: Array<Record<string, unknown>>;
    };
    const listed = list.data.find((row) => row.id === minted.body.id);
    expect(listed).toMatchObject({ connection_name: notion, identifier: ID });
    expect(listed).not.toHaveProperty('token');
    const others = (await (await t.api(`/api/v1/proxy/tokens?identifier=${OTHER}`)).json()) as {
      data: unknown[];
    };
    expect(others.data.some((row) => (row as { id: string }).id === minted.body.id)).toBe(false);

    expect((await t.api(`/api/v1/proxy/tokens/${minted.body.id}`, { method: 'DELETE' })).status).toBe(204);
    const again = await t.api(`/api/v1/proxy/tokens/${minted.body.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe('proxy_token_not_found');
  });

  it('refuses an unknown connection and bad input', async () => {
    expect((await mint({ connection_name: 'no-such-connection', identifier: ID })).status).toBe(404);
    expect((await mint({ connection_name: notion })).status).toBe(400);
    expect((await mint({ connection_name: notion, identifier: ID, expires_in: 1 })).status).toBe(400);
    expect((await mint({ connection_name: notion, identifier: ID, extra: 1 })).status).toBe(400);
    const anonymous = await t.api('/api/v1/proxy/tokens', { method: 'GET', token: null });
    expect(anonymous.status).toBe(401);
  });

  it('routes a proxied call by the token alone, and takes the hot path once verified', async () => {
    const { body } = await mint({ connection_name: notion, identifier: ID });
    const first = await withToken('/v1/users/me', body.token);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { object: string }).object).toBe('user');

    // Matching routing headers are fine.
    const matching = await withToken('/v1/users/me', body.token, { connection_name: notion, identifier: ID });
    expect(matching.status).toBe(200);
    await matching.arrayBuffer();

    // Verified once: later calls read no token, client or account row.
    const before = t.queries(REQUEST_PATH_READS);
    const tokenReads = t.queries(/proxy_tokens/);
    for (let i = 0; i < 3; i++) {
      const res = await withToken('/v1/users/me', body.token);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(t.queries(REQUEST_PATH_READS)).toBe(before);
    expect(t.queries(/proxy_tokens/)).toBe(tokenReads);
  });

  it('refuses routing headers that contradict the token with a 403 problem', async () => {
    const { body } = await mint({ connection_name: notion, identifier: ID });
    const contradicting: Array<Record<string, string>> = [
      { identifier: OTHER },
      { 'x-identifier': OTHER },
      { connection_name: drive },
      { 'x-connection-name': drive },
    ];
    for (const headers of contradicting) {
      // Twice: the full check, then with the token cached (the hot path must refuse too).
      for (let i = 0; i < 2; i++) {
        const res = await withToken('/v1/users/me', body.token, headers);
        expect(res.status).toBe(403);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(((await res.json()) as { code: string }).code).toBe('proxy_token_scope');
      }
      // Warm the cache between rounds.
      await (await withToken('/v1/users/me', body.token)).arrayBuffer();
    }
  });

  it('stops working at once when revoked, with a 401 and WWW-Authenticate', async () => {
    const { body } = await mint({ connection_name: notion, identifier: ID });
    expect((await withToken('/v1/users/me', body.token)).status).toBe(200);
    expect((await t.api(`/api/v1/proxy/tokens/${body.id}`, { method: 'DELETE' })).status).toBe(204);
    const res = await withToken('/v1/users/me', body.token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="portico", error="invalid_token"/);
    expect(((await res.json()) as { code: string }).code).toBe('unauthenticated');
  });

  it('refuses an expired token and an unknown one', async () => {
    const { body } = await mint({ connection_name: notion, identifier: ID });
    await t.db.query(`UPDATE proxy_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      body.id,
    ]);
    const expired = await withToken('/v1/users/me', body.token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('invalid_token');
    const listed = (await (await t.api(`/api/v1/proxy/tokens?identifier=${ID}`)).json()) as {
      data: Array<{ id: string }>;
    };
    expect(listed.data.some((row) => row.id === body.id)).toBe(false);

    const unknown = await withToken('/v1/users/me', `ppt_${'x'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    // Nor is a proxy token a gateway token for the API.
    expect((await t.api('/api/v1/connections', { token: body.token })).status).toBe(401);
  });

  it('dies with the gateway client that minted it', async () => {
    const created = await t.api('/api/v1/clients', { method: 'POST', json: { name: 'ppt-minter' } });
    expect(created.status).toBe(201);
    const client = (await created.json()) as { client_id: string; client_secret: string };
    const tokenRes = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    });
    const access = ((await tokenRes.json()) as { access_token: string }).access_token;
    const res = await t.api('/api/v1/proxy/tokens', {
      method: 'POST',
      json: { connection_name: notion, identifier: ID },
      token: access,
    });
    const minted = (await res.json()) as Minted;
    expect((await withToken('/v1/users/me', minted.token)).status).toBe(200);
    expect((await t.api(`/api/v1/clients/${client.client_id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await withToken('/v1/users/me', minted.token)).status).toBe(401);
  });

  it('serves @notionhq/client with only its auth option', async () => {
    const { body } = await mint({ connection_name: notion, identifier: ID });
    const client = new Client({ auth: body.token, baseUrl: `${t.url}/proxy`, logLevel: LogLevel.ERROR });
    const me = await client.users.me({});
    expect(me.object).toBe('user');
    const search = await client.search({ page_size: 5 });
    expect(search.object).toBe('list');
  });

  it("@notionhq/client 4.x: writes, its own paginator, archive, and Notion's errors as APIResponseError", async () => {
    const { body } = await mint({ connection_name: notion, identifier: ID });
    const client = new Client({ auth: body.token, baseUrl: `${t.url}/proxy`, logLevel: LogLevel.ERROR });
    const pages = await client.search({ filter: { property: 'object', value: 'page' }, page_size: 1 });
    const parent = pages.results[0]!.id;
    const page = await client.pages.create({
      parent: { page_id: parent },
      properties: { title: { title: [{ text: { content: 'Through the proxy' } }] } },
    });
    await client.blocks.children.append({
      block_id: page.id,
      children: Array.from({ length: 7 }, (_, i) => ({
        paragraph: { rich_text: [{ text: { content: `line ${i}` } }] },
      })),
    });
    const blocks = await collectPaginatedAPI(client.blocks.children.list, {
      block_id: page.id,
      page_size: 3,
    });
    expect(blocks).toHaveLength(7);
    const archived = await client.pages.update({ page_id: page.id, archived: true });
    expect((archived as { archived?: boolean }).archived).toBe(true);
    const error = await client.pages
      .retrieve({ page_id: '00000000-0000-4000-8000-000000000000' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIResponseError);
    expect((error as APIResponseError).code).toBe(APIErrorCode.ObjectNotFound);
  });
});
