import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { openLink, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// A gateway reached under another name than its bind address (here localhost vs 127.0.0.1): every
// link the sandbox hands out must name the public URL, or callers elsewhere cannot follow it.
describe('sandbox links under PORTICO_PUBLIC_URL', () => {
  let t: TestGateway;
  const PUBLIC = /^http:\/\/localhost:\d+\/sandbox\//;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!, { PORTICO_PUBLIC_URL: 'http://localhost:{port}' });
    await sandboxAccount(t, { provider: 'sharepoint', identifier: 'public' });
    await sandboxAccount(t, { provider: 'google_drive', identifier: 'public' });
  });

  afterAll(async () => {
    await t?.close();
  });

  const proxy = (connection: string, path: string, init: RequestInit = {}) =>
    t.api(`/proxy${path}`, {
      ...init,
      headers: { connection_name: connection, identifier: 'public', ...init.headers },
    });

  it('pre-signed downloads and upload sessions of the site library', async () => {
    const site = (await (await proxy('sandbox-sharepoint', '/v1.0/sites/root')).json()) as { id: string };
    const put = await proxy('sandbox-sharepoint', `/v1.0/sites/${site.id}/drive/root:/public.bin:/content`, {
      method: 'PUT',
      body: randomBytes(1000),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(put.status).toBe(201);
    const item = (await (
      await proxy('sandbox-sharepoint', `/v1.0/sites/${site.id}/drive/root:/public.bin`)
    ).json()) as Record<string, string>;
    expect(item['@microsoft.graph.downloadUrl']).toMatch(PUBLIC);
    const session = (await (
      await proxy('sandbox-sharepoint', `/v1.0/sites/${site.id}/drive/root:/big.bin:/createUploadSession`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as { uploadUrl: string };
    expect(session.uploadUrl).toMatch(PUBLIC);
  });

  it('resumable upload locations of the file storage, under the proxy at the public URL', async () => {
    const start = await proxy('sandbox-google-drive', '/upload/drive/v3/files?uploadType=resumable', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'public.txt' }),
    });
    expect(start.status).toBe(200);
    // The session URI is a provider API link: the client sends the bytes there through Portico.
    const location = start.headers.get('location') ?? '';
    expect(location).toMatch(
      /^http:\/\/localhost:\d+\/proxy\/upload\/drive\/v3\/files\?uploadType=resumable&upload_id=/,
    );
    const sessionPath = location.replace(/^http:\/\/localhost:\d+\/proxy/, '');
    const put = await proxy('sandbox-google-drive', sessionPath, { method: 'PUT', body: 'hello, public' });
    expect(put.status).toBe(200);
    const file = (await put.json()) as { id: string; name: string };
    expect(file.name).toBe('public.txt');
    const media = await proxy('sandbox-google-drive', `/drive/v3/files/${file.id}?alt=media`);
    expect(await media.text()).toBe('hello, public');
  });

  it('consent pages start from the public URL', async () => {
    const link = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'sandbox-google-drive', identifier: 'someone-else' },
    });
    const { link: url } = (await link.json()) as { link: string };
    expect(url).toMatch(/^http:\/\/localhost:\d+\/connect\//);
    const start = await openLink(url.replace('localhost', '127.0.0.1'));
    expect(start.headers.get('location')).toMatch(PUBLIC);
  });
});
