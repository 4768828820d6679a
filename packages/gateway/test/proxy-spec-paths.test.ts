import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// The specification's twelve proxy paths (docs/spec/tools.json), each sent as the specification
// writes it, through the gateway to the sandbox providers, on both stores.

interface ProxyPath {
  provider: string;
  method: string;
  path: string;
  query_params?: Record<string, string>;
}
const SPEC = JSON.parse(readFileSync(new URL('../../../docs/spec/tools.json', import.meta.url), 'utf8')) as {
  proxy_paths: ProxyPath[];
};
const PROVIDERS = [...new Set(SPEC.proxy_paths.map((p) => p.provider))];

describe.each(BACKENDS)('the specification’s proxy paths on $name', (backend) => {
  let t: TestGateway;
  const ID = 'spec-proxy-user';
  const conn: Record<string, string> = {};
  /** The paths this suite sent, as the specification writes them (filled in by each test). */
  const sent = new Set<string>();

  beforeAll(async () => {
    t = await startTestGateway(backend);
    for (const provider of PROVIDERS) {
      conn[provider] = (await sandboxAccount(t, { provider, identifier: ID })).connection;
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A proxy request named as the specification names its parts. */
  function request(
    provider: string,
    method: string,
    path: string,
    opts: {
      query_params?: Record<string, string>;
      form_data?: Uint8Array;
      headers?: Record<string, string>;
    } = {},
  ) {
    const query = opts.query_params ? `?${new URLSearchParams(opts.query_params)}` : '';
    return t.api(`/proxy${path}${query}`, {
      method,
      headers: { connection_name: conn[provider]!, identifier: ID, ...opts.headers },
      ...(opts.form_data ? { body: opts.form_data } : {}),
    });
  }
  const mark = (method: string, shape: string) => sent.add(`${method} ${shape}`);

  it('workspace pages: GET /v1/users/me is the authorizing user', async () => {
    const res = await request('notion', 'GET', '/v1/users/me');
    mark('GET', '/v1/users/me');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ object: 'user', type: 'bot' });
  });

  it('calendar: GET /calendar/v3/users/me/calendarList lists calendars', async () => {
    const res = await request('google_calendar', 'GET', '/calendar/v3/users/me/calendarList');
    mark('GET', '/calendar/v3/users/me/calendarList');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { kind: string; items: Array<{ id: string; primary?: boolean }> };
    expect(body.kind).toBe('calendar#calendarList');
    expect(body.items.some((c) => c.primary)).toBe(true);
  });

  it('CRM: GET /crm/v3/owners lists owners', async () => {
    const res = await request('hubspot', 'GET', '/crm/v3/owners');
    mark('GET', '/crm/v3/owners');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: Array<{ id: string; email: string }> };
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results[0]).toMatchObject({ id: expect.any(String), email: expect.any(String) });
  });

  it('site library: /me/sites lists sites, /sites/root gives the site ID, a file goes up and comes back by its signed URL', async () => {
    const sites = await request('sharepoint', 'GET', '/v1.0/me/sites');
    mark('GET', '/v1.0/me/sites');
    expect(sites.status).toBe(200);
    const listed = (await sites.json()) as { value: Array<{ id: string; webUrl: string }> };
    expect(listed.value.length).toBeGreaterThan(0);

    const root = await request('sharepoint', 'GET', '/v1.0/sites/root');
    mark('GET', '/v1.0/sites/root');
    expect(root.status).toBe(200);
    const site = (await root.json()) as { id: string };
    expect(site.id).toMatch(/,/); // Graph's composite site ID: host,site-collection,web
    expect(listed.value.map((s) => s.id)).toContain(site.id);

    const bytes = new TextEncoder().encode('Quarterly figures\n');
    const put = await request(
      'sharepoint',
      'PUT',
      `/v1.0/sites/${site.id}/drive/root:/figures.txt:/content`,
      {
        form_data: bytes,
        headers: { 'content-type': 'text/plain' },
      },
    );
    mark('PUT', '/v1.0/sites/<site_id>/drive/root:/<filename>:/content');
    expect(put.status).toBeLessThan(300);
    expect(await put.json()).toMatchObject({
      name: 'figures.txt',
      webUrl: expect.stringMatching(/figures\.txt$/),
    });

    const meta = await request('sharepoint', 'GET', `/v1.0/sites/${site.id}/drive/root:/figures.txt`);
    mark('GET', '/v1.0/sites/<site_id>/drive/root:/<filename>');
    expect(meta.status).toBe(200);
    const item = (await meta.json()) as Record<string, string>;
    const downloadUrl = item['@microsoft.graph.downloadUrl']!;
    expect(downloadUrl).toMatch(/^https?:\/\//);
    // Pre-authenticated: fetched directly, with no credential and not through the proxy.
    expect(downloadUrl).not.toContain('/proxy/');
    const direct = await fetch(downloadUrl);
    expect(direct.status).toBe(200);
    expect(new Uint8Array(await direct.arrayBuffer())).toEqual(bytes);
  });

  it('file storage: GET /drive/v3/files lists, POST /upload/drive/v3/files uploads, alt=media reads the bytes', async () => {
    const list = await request('google_drive', 'GET', '/drive/v3/files');
    mark('GET', '/drive/v3/files');
    expect(list.status).toBe(200);
    expect(((await list.json()) as { files: unknown[] }).files.length).toBeGreaterThan(0);

    const bytes = new Uint8Array([0, 1, 2, 253, 254, 255]);
    const up = await request('google_drive', 'POST', '/upload/drive/v3/files', {
      query_params: { uploadType: 'media', name: 'spec.bin' },
      form_data: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    mark('POST', '/upload/drive/v3/files');
    expect(up.status).toBe(200);
    const { id } = (await up.json()) as { id: string };
    expect(id).toBeTruthy();

    const media = await request('google_drive', 'GET', `/drive/v3/files/${id}`, {
      query_params: { alt: 'media' },
    });
    mark('GET', '/drive/v3/files/<file_id>');
    expect(media.status).toBe(200);
    expect(new Uint8Array(await media.arrayBuffer())).toEqual(bytes);
  });

  it('spreadsheets and word processing: the roots reach the APIs with the user’s credential', async () => {
    // Neither API lists documents at its root (listing is Drive's, with a Drive scope): the root
    // answers as the provider does, and under it a spreadsheet or document is created and read.
    for (const [provider, root, created] of [
      ['google_sheets', '/v4/spreadsheets', 'spreadsheetId'],
      ['google_docs', '/docs/v1/documents', 'documentId'],
    ] as const) {
      const res = await request(provider, 'GET', root);
      mark('GET', root);
      // Google's own answer for a collection without a list method (not the gateway's problem+json,
      // not an authentication failure).
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as { error?: { code: number; status: string } };
      expect([res.status, body.error], JSON.stringify(body)).toEqual([
        404,
        expect.objectContaining({ code: 404 }),
      ]);

      const made = await request(provider, 'POST', root, {
        form_data: new TextEncoder().encode(
          JSON.stringify(
            provider === 'google_sheets' ? { properties: { title: 'Spec root' } } : { title: 'Spec root' },
          ),
        ),
        headers: { 'content-type': 'application/json' },
      });
      expect(made.status).toBe(200);
      const id = ((await made.json()) as Record<string, string>)[created]!;
      const read = await request(provider, 'GET', `${root}/${id}`);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ [created]: id });
    }
  });

  it('sent every one of the specification’s twelve paths', () => {
    expect([...sent].sort()).toEqual(SPEC.proxy_paths.map((p) => `${p.method} ${p.path}`).sort());
  });
});
