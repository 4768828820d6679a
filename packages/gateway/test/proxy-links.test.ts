import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_REWRITE_MAX_BYTES, type LinkBases, rewriteLinks, upstreamBases } from '../src/proxy/links.js';
import type { UpstreamResponse } from '../src/upstream/http.js';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { freePort, startTestGateway, type TestGateway } from './helpers/gateway.js';

const BASES: LinkBases = {
  upstream: upstreamBases(['https://graph.microsoft.com', 'https://api.example.com/v2/']),
  caller: 'https://portico.example.com/proxy',
};

const json = (body: unknown, headers: Record<string, string> = {}): UpstreamResponse => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: Buffer.from(JSON.stringify(body)),
});

const bodyOf = async (response: UpstreamResponse): Promise<Buffer> => {
  if (Buffer.isBuffer(response.body)) return response.body;
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

describe('links in answers, turned back to the proxy', () => {
  it('moves next-page links under the API base, and only those', async () => {
    const answer = await rewriteLinks(
      json({
        '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#users',
        '@odata.nextLink': 'https://graph.microsoft.com/v1.0/users?$skiptoken=abc',
        paging: { next: { link: 'https://api.example.com/v2/contacts?after=10' } },
        elsewhere: 'https://graph.microsoft.com.evil.test/v1.0/users',
        outside: 'https://api.example.com/v20/contacts',
        web: 'https://www.example.com/page',
        sentence: 'see https://graph.microsoft.com/v1.0/users',
        list: ['https://api.example.com/v2/a'],
      }),
      BASES,
    );
    const body = JSON.parse((await bodyOf(answer)).toString()) as Record<string, unknown>;
    expect(body['@odata.nextLink']).toBe('https://portico.example.com/proxy/v1.0/users?$skiptoken=abc');
    expect(body.paging).toEqual({ next: { link: 'https://portico.example.com/proxy/contacts?after=10' } });
    expect(body.list).toEqual(['https://portico.example.com/proxy/a']);
    // Not links to the API: another host, another base path, a web page, text, OData's metadata.
    expect(body.elsewhere).toBe('https://graph.microsoft.com.evil.test/v1.0/users');
    expect(body.outside).toBe('https://api.example.com/v20/contacts');
    expect(body.web).toBe('https://www.example.com/page');
    expect(body.sentence).toBe('see https://graph.microsoft.com/v1.0/users');
    expect(body['@odata.context']).toBe('https://graph.microsoft.com/v1.0/$metadata#users');
    expect(answer.headers['content-length']).toBe(String((await bodyOf(answer)).length));
  });

  it('never moves pre-authenticated URLs', async () => {
    const answer = await rewriteLinks(
      json({
        '@microsoft.graph.downloadUrl': 'https://graph.microsoft.com/download?tempauth=x',
        uploadUrl: 'https://graph.microsoft.com/upload?session=y',
        '@odata.nextLink': 'https://graph.microsoft.com/v1.0/next',
      }),
      BASES,
    );
    const body = JSON.parse((await bodyOf(answer)).toString()) as Record<string, string>;
    expect(body['@microsoft.graph.downloadUrl']).toBe('https://graph.microsoft.com/download?tempauth=x');
    expect(body.uploadUrl).toBe('https://graph.microsoft.com/upload?session=y');
    expect(body['@odata.nextLink']).toBe('https://portico.example.com/proxy/v1.0/next');
  });

  it('moves Location on a created resource or a session, never on a redirect', async () => {
    const created = await rewriteLinks(
      {
        statusCode: 200,
        headers: { location: 'https://api.example.com/v2/upload?id=1' },
        body: Buffer.alloc(0),
      },
      BASES,
    );
    expect(created.headers.location).toBe('https://portico.example.com/proxy/upload?id=1');
    const redirect = await rewriteLinks(
      {
        statusCode: 302,
        headers: { location: 'https://graph.microsoft.com/dl?tempauth=z' },
        body: Buffer.alloc(0),
      },
      BASES,
    );
    expect(redirect.headers.location).toBe('https://graph.microsoft.com/dl?tempauth=z');
  });

  it('moves the URLs of a Link header', async () => {
    const answer = await rewriteLinks(
      {
        statusCode: 200,
        headers: {
          link: '<https://api.example.com/v2/issues?page=2>; rel="next", <https://other.test/x>; rel="help"',
        },
        body: Buffer.alloc(0),
      },
      BASES,
    );
    expect(answer.headers.link).toBe(
      '<https://portico.example.com/proxy/issues?page=2>; rel="next", <https://other.test/x>; rel="help"',
    );
  });

  it('reads compressed and escaped JSON, and sends the rewritten body uncompressed', async () => {
    const text = '{"next":"https:\\/\\/api.example.com\\/v2\\/items?page=3"}';
    const answer = await rewriteLinks(
      {
        statusCode: 200,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', etag: '"1"' },
        body: gzipSync(text),
      },
      BASES,
    );
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers.etag).toBeUndefined();
    expect(JSON.parse((await bodyOf(answer)).toString())).toEqual({
      next: 'https://portico.example.com/proxy/items?page=3',
    });
  });

  it('leaves answers without links untouched: the same object, the same bytes', async () => {
    const plain = json({ id: 1, name: 'no links here' });
    expect(await rewriteLinks(plain, BASES)).toBe(plain);
    const graphItem = json({
      '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#drives/$entity',
      '@microsoft.graph.downloadUrl': 'https://graph.microsoft.com/dl?tempauth=1',
      name: 'report.pdf',
    });
    expect(await rewriteLinks(graphItem, BASES)).toBe(graphItem);
    const binary: UpstreamResponse = {
      statusCode: 200,
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from('https://api.example.com/v2/x'),
    };
    expect(await rewriteLinks(binary, BASES)).toBe(binary);
  });

  it('rewrites a streamed JSON answer, and passes a larger one through whole', async () => {
    const streamed = await rewriteLinks(
      {
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        body: Readable.from([Buffer.from('{"next":"https://api.exa'), Buffer.from('mple.com/v2/p?2"}')]),
      },
      BASES,
    );
    expect(JSON.parse((await bodyOf(streamed)).toString())).toEqual({
      next: 'https://portico.example.com/proxy/p?2',
    });
    const large = Buffer.from(
      JSON.stringify({ next: 'https://api.example.com/v2/p', pad: 'x'.repeat(LINK_REWRITE_MAX_BYTES) }),
    );
    const chunks = Array.from({ length: Math.ceil(large.length / 65536) }, (_, i) =>
      large.subarray(i * 65536, (i + 1) * 65536),
    );
    const passed = await rewriteLinks(
      { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Readable.from(chunks) },
      BASES,
    );
    expect((await bodyOf(passed)).equals(large)).toBe(true);
  });
});

describe.each(BACKENDS)('links through the gateway on $name', (backend) => {
  let t: TestGateway;
  let origin: string;
  const ID = 'links-user';

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestGateway(backend, {
      PORTICO_PUBLIC_URL: 'http://localhost:{port}',
      PORTICO_PROXY_PORT: String(port),
    });
    origin = `http://127.0.0.1:${port}`;
    await sandboxAccount(t, { provider: 'hubspot', identifier: ID });
    for (let i = 0; i < 7; i++) {
      const created = await proxy(`${t.url}/proxy`, '/crm/v3/objects/contacts', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ properties: { email: `links-${i}@example.com`, firstname: `L${i}` } }),
      });
      expect(created.status).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const proxy = async (base: string, path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${await t.token()}`,
        connection_name: 'sandbox-hubspot',
        identifier: ID,
        ...init.headers,
      },
    });

  /** Follows `paging.next.link` from the first page to the last; every link as it came. */
  async function walk(base: string, first: string): Promise<{ ids: string[]; links: string[] }> {
    const ids: string[] = [];
    const links: string[] = [];
    let next: string | undefined = `${base}${first}`;
    while (next) {
      const page = await proxy('', next.replace('//localhost:', '//127.0.0.1:'));
      expect(page.status).toBe(200);
      const body = (await page.json()) as {
        results: Array<{ id: string }>;
        paging?: { next?: { link: string } };
      };
      ids.push(...body.results.map((r) => r.id));
      next = body.paging?.next?.link;
      if (next) links.push(next);
    }
    return { ids, links };
  }

  it("follows HubSpot's paging.next.link at the public URL, under /proxy", async () => {
    const { ids, links } = await walk(t.url, '/proxy/crm/v3/objects/contacts?limit=2');
    expect(ids.length).toBeGreaterThanOrEqual(7);
    expect(new Set(ids).size).toBe(ids.length);
    expect(links.length).toBeGreaterThanOrEqual(3);
    const publicProxy = `http://localhost:${new URL(t.url).port}/proxy/crm/v3/objects/contacts?`;
    expect(links.every((link) => link.startsWith(publicProxy))).toBe(true);
  });

  it('gives links to the proxy origin to callers of the proxy origin', async () => {
    const { ids, links } = await walk(origin, '/crm/v3/objects/contacts?limit=3');
    expect(ids.length).toBeGreaterThanOrEqual(7);
    expect(links.every((link) => link.startsWith(`${origin}/crm/v3/objects/contacts?`))).toBe(true);
  });
});
