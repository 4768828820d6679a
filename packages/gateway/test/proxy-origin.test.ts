import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { google } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { freePort, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { selfSigned } from './helpers/tls.js';

describe.each(BACKENDS)('the proxy at the root of its own origin on $name', (backend) => {
  let t: TestGateway;
  let origin: string;
  let proxyToken: string;
  let calendarToken: string;
  const ID = 'origin-user';
  const conn: Record<string, string> = {};

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestGateway(backend, { PORTICO_PROXY_PORT: String(port) });
    origin = `http://127.0.0.1:${port}`;
    for (const provider of ['notion', 'google_drive', 'google_calendar']) {
      conn[provider] = (await sandboxAccount(t, { provider, identifier: ID })).connection;
    }
    const mint = async (connection: string) => {
      const res = await t.api('/api/v1/proxy/tokens', {
        method: 'POST',
        json: { connection_name: connection, identifier: ID },
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { token: string }).token;
    };
    proxyToken = await mint(conn.google_drive!);
    calendarToken = await mint(conn.google_calendar!);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('says where it listens', () => {
    expect(t.gateway.proxyOrigin()).toBe(origin);
  });

  it('serves every path as a proxy path with the gateway token and routing headers', async () => {
    const headers = {
      authorization: `Bearer ${await t.token()}`,
      connection_name: conn.notion!,
      identifier: ID,
    };
    const root = await fetch(`${origin}/v1/users/me`, { headers });
    expect(root.status).toBe(200);
    const main = await fetch(`${t.url}/proxy/v1/users/me`, { headers });
    const { request_id: _root, ...fromRoot } = (await root.json()) as Record<string, unknown>;
    const { request_id: _main, ...fromMain } = (await main.json()) as Record<string, unknown>;
    expect(fromRoot).toEqual(fromMain);
    // Repeated: the fast path serves it the same way.
    const again = await fetch(`${origin}/v1/users/me`, { headers });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-request-id')).toBeTruthy();
    await again.arrayBuffer();
  });

  it('answers with the proxy’s own problems', async () => {
    const anonymous = await fetch(`${origin}/v1/users/me`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer realm="portico"');
    expect(anonymous.headers.get('content-type')).toContain('application/problem+json');

    const unrouted = await fetch(`${origin}/v1/users/me`, {
      headers: { authorization: `Bearer ${await t.token()}` },
    });
    expect(unrouted.status).toBe(400);
    expect(((await unrouted.json()) as { code: string }).code).toBe('missing_header');

    // Portico's own routes are not here: /api/v1 is a provider path like any other.
    const api = await fetch(`${origin}/api/v1/connections`, {
      headers: { authorization: `Bearer ${await t.token()}` },
    });
    expect(api.status).toBe(400);
    await api.arrayBuffer();
  });

  it('takes an absolute-form request target as its path', async () => {
    const { port } = new URL(origin);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'GET',
        path: `http://example.com/drive/v3/about?fields=user`,
        headers: { authorization: `Bearer ${proxyToken}` },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
  });

  it('serves a proxy token with no routing headers', async () => {
    const res = await fetch(`${origin}/drive/v3/files?pageSize=10`, {
      headers: { authorization: `Bearer ${proxyToken}` },
    });
    expect(res.status).toBe(200);
    expect(Array.isArray(((await res.json()) as { files: unknown[] }).files)).toBe(true);
    const refused = await fetch(`${origin}/drive/v3/files`, {
      headers: { authorization: `Bearer ${proxyToken}`, connection_name: conn.notion! },
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('proxy_token_scope');
  });

  it('serves the official googleapis client, its rootUrl the proxy origin and its token a proxy token', async () => {
    const auth = new google.auth.OAuth2();
    auth.setCredentials({ access_token: proxyToken });
    const drive = google.drive({ version: 'v3', auth, rootUrl: `${origin}/` });
    const created = await drive.files.create({
      requestBody: { name: 'through-the-proxy-origin', mimeType: 'application/vnd.google-apps.folder' },
      fields: 'id,name',
    });
    expect(created.status).toBe(200);
    const list = await drive.files.list({ pageSize: 100, fields: 'files(id,name)' });
    expect(list.status).toBe(200);
    expect(list.data.files?.some((file) => file.id === created.data.id)).toBe(true);
    const got = await drive.files.get({ fileId: created.data.id!, fields: 'id,name' });
    expect(got.data.name).toBe('through-the-proxy-origin');
    // Media uploads take their URL from a per-call rootUrl only.
    const uploaded = await drive.files.create(
      {
        requestBody: { name: 'hello.txt', mimeType: 'text/plain' },
        media: { mimeType: 'text/plain', body: 'hello through the proxy origin' },
        fields: 'id',
      },
      { rootUrl: `${origin}/` },
    );
    const content = await drive.files.get(
      { fileId: uploaded.data.id!, alt: 'media' },
      { responseType: 'text' },
    );
    expect(content.data).toBe('hello through the proxy origin');

    const calendarAuth = new google.auth.OAuth2();
    calendarAuth.setCredentials({ access_token: calendarToken });
    const calendar = google.calendar({ version: 'v3', auth: calendarAuth, rootUrl: `${origin}/` });
    const primary = await calendar.calendars.get({ calendarId: 'primary' });
    expect(primary.status).toBe(200);
    expect(primary.data.id).toBeTruthy();
    const events = await calendar.events.list({ calendarId: 'primary', maxResults: 5 });
    expect(events.status).toBe(200);
    expect(Array.isArray(events.data.items)).toBe(true);
  });

  it('counts and logs its requests as proxy requests', async () => {
    const proxied = async () => {
      const text = await t.gateway.metrics.registry.metrics();
      const match = /portico_http_requests_total\{family="proxy",status_class="2xx"\} (\d+)/.exec(text);
      return Number(match?.[1] ?? 0);
    };
    const before = await proxied();
    const res = await fetch(`${origin}/drive/v3/about?fields=user`, {
      headers: { authorization: `Bearer ${proxyToken}`, 'x-request-id': 'origin-log-check' },
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const line = t.logs.find(
      (l) => l.request_id === 'origin-log-check' && l.path === '/proxy/drive/v3/about',
    );
    expect(line).toMatchObject({ method: 'GET', status: 200 });
    expect(await proxied()).toBe(before + 1);
  });
});

describe.each(BACKENDS)('the proxy origin with TLS on $name', (backend) => {
  let t: TestGateway;
  let dir: string;
  let port: number;
  let ca: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'portico-proxy-origin-tls-'));
    const { certPath, keyPath } = selfSigned(dir);
    ca = readFileSync(certPath, 'utf8');
    port = await freePort();
    t = await startTestGateway(backend, {
      PORTICO_PUBLIC_URL: 'https://127.0.0.1:{port}',
      PORTICO_TLS_CERT: certPath,
      PORTICO_TLS_KEY: keyPath,
      PORTICO_PROXY_PORT: String(port),
      PORTICO_SHUTDOWN_GRACE_MS: '1000',
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('speaks TLS with the main port’s certificate and refuses cleartext', async () => {
    expect(t.gateway.proxyOrigin()).toBe(`https://127.0.0.1:${port}`);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port, path: '/v1/users/me', ca, method: 'GET' },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    // Unauthenticated, but answered by the proxy over TLS.
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'unauthenticated' });
    const plain = await fetch(`http://127.0.0.1:${port}/v1/users/me`);
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { code: string }).code).toBe('tls_required');
  });
});
