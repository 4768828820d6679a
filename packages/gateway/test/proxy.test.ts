import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { EmulatorControl } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ProxyService } from '../src/proxy/service.js';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { REQUEST_PATH_READS, startTestGateway, type TestGateway } from './helpers/gateway.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.each(BACKENDS)('proxy on $name', (backend) => {
  let t: TestGateway;
  let control: EmulatorControl;
  const ID = 'proxy-user';
  const conn: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestGateway(backend);
    control = t.gateway.sandbox.control!;
    for (const provider of [
      'notion',
      'google_calendar',
      'google_drive',
      'google_sheets',
      'google_docs',
      'hubspot',
      'sharepoint',
    ]) {
      conn[provider] = (await sandboxAccount(t, { provider, identifier: ID })).connection;
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const proxy = (
    provider: string,
    path: string,
    init: RequestInit & { headers?: Record<string, string> } = {},
  ) =>
    t.api(`/proxy${path}`, {
      ...init,
      headers: { connection_name: conn[provider]!, identifier: ID, ...init.headers },
    });
  /** The headers a raw node:http or fetch call needs to reach an account through the proxy. */
  const routed = (provider: string, token: string) => ({
    authorization: `Bearer ${token}`,
    connection_name: conn[provider]!,
    identifier: ID,
  });
  const requests = () => Object.values(control.counters().requests).reduce((a, b) => a + b, 0);

  /** A proxied Drive media upload through node:http, where the test controls how the body is sent. */
  async function driveUpload(
    name: string,
    headers: http.OutgoingHttpHeaders,
    send: (req: http.ClientRequest) => void,
  ) {
    const answer = await driveUploadAnswer(name, headers, send);
    expect(answer.status).toBe(200);
    const { id } = JSON.parse(answer.body) as { id: string };
    const media = await proxy('google_drive', `/drive/v3/files/${id}?alt=media`);
    return sha256(new Uint8Array(await media.arrayBuffer()));
  }

  async function driveUploadAnswer(
    name: string,
    headers: http.OutgoingHttpHeaders,
    send: (req: http.ClientRequest) => void,
  ) {
    const token = await t.token();
    return new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const req = http.request(
        `${t.url}/proxy/upload/drive/v3/files?uploadType=media&name=${name}`,
        {
          method: 'POST',
          headers: {
            ...routed('google_drive', token),
            'content-type': 'application/octet-stream',
            ...headers,
          },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode, body }));
        },
      );
      req.on('error', reject);
      send(req);
    });
  }

  describe('routing and credentials', () => {
    it('forwards to the provider as the end user, adding the provider default headers', async () => {
      const res = await proxy('notion', '/v1/users/me');
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ object: 'user', type: 'bot' });
      // The caller's own Notion-Version wins over the default.
      const bad = await proxy('notion', '/v1/users/me', { headers: { 'notion-version': '1999-01-01' } });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ object: 'error' });
    });

    it('accepts the x- header aliases and names a missing header', async () => {
      const res = await t.api('/proxy/v1.0/me', {
        headers: { 'x-connection-name': conn.sharepoint!, 'x-identifier': ID },
      });
      expect(res.status).toBe(200);
      const missing = await t.api('/proxy/v1.0/me', { headers: { connection_name: conn.sharepoint! } });
      expect(missing.status).toBe(400);
      expect(await missing.json()).toMatchObject({
        code: 'missing_header',
        detail: expect.stringContaining('"identifier"'),
      });
      const noConnection = await t.api('/proxy/v1.0/me', { headers: { identifier: ID } });
      expect(await noConnection.json()).toMatchObject({
        code: 'missing_header',
        detail: expect.stringContaining('"connection_name"'),
      });
    });

    it('answers unknown and inactive accounts with problems', async () => {
      const unknown = await t.api('/proxy/v1.0/me', {
        headers: { connection_name: conn.sharepoint!, identifier: 'nobody' },
      });
      expect(unknown.status).toBe(409);
      expect(await unknown.json()).toMatchObject({
        code: 'account_not_active',
        account_status: 'PENDING_AUTH',
        authorization_link: { link: expect.stringContaining('/connect/') },
      });
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: conn.sharepoint, identifier: 'pending-user' },
      });
      const pending = await t.api('/proxy/v1.0/me', {
        headers: { connection_name: conn.sharepoint!, identifier: 'pending-user' },
      });
      expect(pending.status).toBe(409);
      expect(await pending.json()).toMatchObject({
        code: 'account_not_active',
        authorization_link: { link: expect.stringContaining('/connect/') },
      });
    });

    it('requires a gateway token', async () => {
      const res = await t.api('/proxy/v1.0/me', {
        token: null,
        headers: { connection_name: conn.sharepoint!, identifier: ID },
      });
      expect(res.status).toBe(401);
    });
  });

  describe('path safety', () => {
    const bad = [
      '//evil.example/x',
      '/http://evil.example/x',
      '/https:%2F%2Fevil.example',
      '/v1.0/%5C%5Cevil.example',
      '/v1.0/..%5Cx',
      '/v1.0/../../etc/passwd',
      '/v1.0/%2e%2e/%2e%2e/x',
      '/v1.0/%2E%2E/x',
      '/v1.0/%252e%252e/x',
      '/v1.0/.%2e/x',
      '/v1.0/me%00',
      '/v1.0/me%0d%0aX-Injected:%201',
      '/@evil.example/x',
      '/%40evil.example/x',
      '/%2F%2Fevil.example/x',
      '/v1.0/100%',
      '/v1.0/%zz',
    ];
    // Sent with node:http, byte for byte: fetch() would normalise dot segments away before sending.
    const rawGet = async (path: string, token: string) => {
      return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
        const { port } = new URL(t.url);
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: `/proxy${path}`,
            headers: routed('sharepoint', token),
          },
          (res) => {
            let text = '';
            res.on('data', (d) => {
              text += d;
            });
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
            );
          },
        );
        req.on('error', reject);
        req.end();
      });
    };
    // Cold: a token the gateway has not seen (the full route). Warm: one it has (the fast path, which
    // must hand these over to the full route untouched).
    let warm: string;
    it.each(bad)('refuses %s with invalid_path and sends nothing upstream, cold or warm', async (path) => {
      warm ??= await t.token();
      // (t.api would send its own cached token; this request must carry `warm`.)
      expect((await fetch(`${t.url}/proxy/v1.0/me`, { headers: routed('sharepoint', warm) })).status).toBe(
        200,
      );
      const before = requests();
      for (const token of [await t.token(), warm]) {
        const res = await rawGet(path, token);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_path' });
      }
      expect(requests()).toBe(before);
    });

    it('still forwards legitimate paths with colons, @ and encoded characters', async () => {
      const site = (await (await proxy('sharepoint', '/v1.0/sites/root')).json()) as { id: string };
      const res = await proxy('sharepoint', `/v1.0/sites/${site.id}/drive/root:/Shared%20Documents:`);
      expect([200, 404]).toContain(res.status);
      expect(res.headers.get('content-type')).toContain('json');
    });
  });

  describe('end-to-end flows', () => {
    it('site library: upload, metadata, pre-signed download without auth, expiry', async () => {
      const site = (await (await proxy('sharepoint', '/v1.0/sites/root')).json()) as { id: string };
      expect(site.id).toBeTruthy();
      const bytes = randomBytes(300_000);
      const put = await proxy('sharepoint', `/v1.0/sites/${site.id}/drive/root:/report.bin:/content`, {
        method: 'PUT',
        body: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(put.status).toBe(201);
      expect(await put.json()).toMatchObject({ name: 'report.bin', webUrl: expect.any(String) });
      const again = await proxy('sharepoint', `/v1.0/sites/${site.id}/drive/root:/report.bin:/content`, {
        method: 'PUT',
        body: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(again.status).toBe(200);
      const item = (await (
        await proxy('sharepoint', `/v1.0/sites/${site.id}/drive/root:/report.bin`)
      ).json()) as Record<string, unknown>;
      const downloadUrl = item['@microsoft.graph.downloadUrl'] as string;
      expect(downloadUrl).toMatch(/^http/);
      const download = await fetch(downloadUrl);
      expect(download.status).toBe(200);
      expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));
      // Redirects are passed back, not followed.
      const content = await proxy('sharepoint', `/v1.0/sites/${site.id}/drive/root:/report.bin:/content`, {
        redirect: 'manual',
      });
      expect(content.status).toBe(302);
      expect(content.headers.get('location')).toMatch(/^http/);
      // The pre-signed URL stops working after its expiry.
      control.state<{ downloadUrlTtlSeconds: number }>('microsoft').downloadUrlTtlSeconds = 1;
      const shortLived = (await (
        await proxy('sharepoint', `/v1.0/sites/${site.id}/drive/root:/report.bin`)
      ).json()) as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 2100));
      const expired = await fetch(shortLived['@microsoft.graph.downloadUrl'] as string);
      expect(expired.status).toBeGreaterThanOrEqual(400);
      control.state<{ downloadUrlTtlSeconds: number }>('microsoft').downloadUrlTtlSeconds = 3600;
    });

    it('file storage: media upload, listing and alt=media download of the same bytes', async () => {
      const bytes = randomBytes(200_000);
      const upload = await proxy('google_drive', '/upload/drive/v3/files?uploadType=media&name=photo.bin', {
        method: 'POST',
        body: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(upload.status).toBe(200);
      const { id } = (await upload.json()) as { id: string };
      const list = (await (await proxy('google_drive', '/drive/v3/files?pageSize=100')).json()) as {
        files: { id: string }[];
      };
      expect(list.files.map((f) => f.id)).toContain(id);
      const media = await proxy('google_drive', `/drive/v3/files/${id}?alt=media`);
      expect(media.status).toBe(200);
      expect(sha256(new Uint8Array(await media.arrayBuffer()))).toBe(sha256(bytes));
    });

    it('answers "Expect: 100-continue" itself and streams the upload (curl does this for large files)', async () => {
      const bytes = randomBytes(2 * 1024 * 1024);
      const stored = await driveUpload(
        'continue.bin',
        { 'content-length': bytes.length, expect: '100-continue' },
        (req) => req.on('continue', () => req.end(bytes)),
      );
      expect(stored).toBe(sha256(bytes));
    });

    it('streams a chunked upload of unannounced length', async () => {
      const pieces = [randomBytes(70_000), randomBytes(1), randomBytes(250_000)];
      // No Content-Length: Node sends Transfer-Encoding: chunked.
      const stored = await driveUpload('chunked.bin', {}, (req) => {
        for (const piece of pieces) req.write(piece);
        req.end();
      });
      expect(stored).toBe(sha256(Buffer.concat(pieces)));
    });

    it('survives a caller that leaves halfway through an upload, and stores nothing', async () => {
      const token = await t.token();
      const before = (
        (await (await proxy('google_drive', '/drive/v3/files?pageSize=1000')).json()) as { files: unknown[] }
      ).files.length;
      await new Promise<void>((resolve) => {
        const req = http.request(`${t.url}/proxy/upload/drive/v3/files?uploadType=media&name=abandoned.bin`, {
          method: 'POST',
          headers: {
            ...routed('google_drive', token),
            'content-type': 'application/octet-stream',
            'content-length': 8 * 1024 * 1024,
          },
        });
        req.on('error', () => resolve());
        req.write(randomBytes(1024 * 1024), () => setTimeout(() => req.destroy(), 50));
      });
      // Still serving, and the half-sent file never became a file.
      await expect
        .poll(async () => {
          const res = await proxy('google_drive', '/drive/v3/files?pageSize=1000');
          return ((await res.json()) as { files: unknown[] }).files.length;
        })
        .toBe(before);
      expect((await t.api('/healthz')).status).toBe(200);
    });

    it('logs a download the caller abandons halfway, and keeps serving', async () => {
      const upload = await proxy('google_drive', '/upload/drive/v3/files?uploadType=media&name=big.bin', {
        method: 'POST',
        body: randomBytes(8 * 1024 * 1024),
        headers: { 'content-type': 'application/octet-stream' },
      });
      const { id } = (await upload.json()) as { id: string };
      const token = await t.token();
      await new Promise<void>((resolve, reject) => {
        const req = http.get(
          `${t.url}/proxy/drive/v3/files/${id}?alt=media`,
          {
            headers: { ...routed('google_drive', token), 'x-request-id': 'abandoned-download' },
          },
          (res) => {
            expect(res.statusCode).toBe(200);
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
      });
      await expect
        .poll(() => t.logs.find((l) => l.request_id === 'abandoned-download'))
        .toMatchObject({ msg: 'relayed body ended early', status: 200 });
      expect((await proxy('google_drive', `/drive/v3/files/${id}`)).status).toBe(200);
    });

    it('answers the remaining specification paths from each provider', async () => {
      expect((await proxy('google_calendar', '/calendar/v3/users/me/calendarList')).status).toBe(200);
      const owners = (await (await proxy('hubspot', '/crm/v3/owners/')).json()) as { results: unknown[] };
      expect(owners.results.length).toBeGreaterThan(0);
      const files = (await (
        await proxy(
          'google_drive',
          `/drive/v3/files?q=${encodeURIComponent("mimeType = 'application/vnd.google-apps.spreadsheet'")}`,
        )
      ).json()) as { files: { id: string }[] };
      const sheet = await proxy('google_sheets', `/v4/spreadsheets/${files.files[0]!.id}`);
      expect(sheet.status).toBe(200);
      expect(await sheet.json()).toMatchObject({ spreadsheetId: files.files[0]!.id });
      const docs = (await (
        await proxy(
          'google_drive',
          `/drive/v3/files?q=${encodeURIComponent("mimeType = 'application/vnd.google-apps.document'")}`,
        )
      ).json()) as { files: { id: string }[] };
      // The specification's /docs/v1/documents maps to the Docs API's /v1/documents (catalog data).
      const doc = await proxy('google_docs', `/docs/v1/documents/${docs.files[0]!.id}`);
      expect(doc.status).toBe(200);
      expect(await doc.json()).toMatchObject({ documentId: docs.files[0]!.id });
      expect((await proxy('sharepoint', '/v1.0/me')).status).toBe(200);
    });

    it('relays answers without a body (HEAD, 204) and the 410 that follows a delete', async () => {
      const created = await proxy('google_calendar', '/calendar/v3/calendars/primary/events', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          summary: 'Proxy relay check',
          start: { dateTime: '2026-12-01T10:00:00Z' },
          end: { dateTime: '2026-12-01T11:00:00Z' },
        }),
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      const path = `/calendar/v3/calendars/primary/events/${id}`;
      const head = await proxy('google_calendar', path, { method: 'HEAD' });
      expect(head.status).toBe(200);
      // The provider's headers come back for HEAD too.
      expect(head.headers.get('content-type')).toContain('application/json');
      const deleted = await proxy('google_calendar', path, { method: 'DELETE' });
      expect(deleted.status).toBe(204);
      expect(await deleted.text()).toBe('');
      const again = await proxy('google_calendar', path, { method: 'DELETE' });
      expect(again.status).toBe(410);
      expect(await again.json()).toMatchObject({ error: { code: 410 } });
    });

    it('passes provider error bodies back unchanged', async () => {
      const res = await proxy('notion', '/v1/pages/00000000000000000000000000000000');
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(await res.json()).toMatchObject({ object: 'error', code: 'object_not_found' });
    });
  });

  describe('retries and refresh', () => {
    it('retries an idempotent request after a 503 with a short Retry-After', async () => {
      const before = control.counters().requests['GET /hubspot/crm/v3/owners/'] ?? 0;
      control.addFault({
        emulator: 'hubspot',
        path: '^/hubspot/crm/v3/owners',
        status: 503,
        headers: { 'retry-after': '0' },
        times: 1,
      });
      const res = await proxy('hubspot', '/crm/v3/owners/');
      expect(res.status).toBe(200);
      expect(
        (control.counters().requests['GET /hubspot/crm/v3/owners/'] ?? 0) - before,
      ).toBeGreaterThanOrEqual(1);
    });

    it('never retries a POST, and passes a final 429 back with its Retry-After', async () => {
      control.addFault({
        emulator: 'hubspot',
        path: '^/hubspot/crm/v3/objects/contacts/search',
        status: 503,
        headers: { 'retry-after': '0' },
        times: 1,
      });
      const post = await proxy('hubspot', '/crm/v3/objects/contacts/search', {
        method: 'POST',
        body: JSON.stringify({ limit: 1 }),
        headers: { 'content-type': 'application/json' },
      });
      expect(post.status).toBe(503);
      control.clearFaults();
      control.addFault({
        emulator: 'hubspot',
        path: '^/hubspot/crm/v3/owners',
        status: 429,
        headers: { 'retry-after': '120' },
        body: { status: 'error', message: 'You have reached your secondly limit.', errorType: 'RATE_LIMIT' },
        times: 5,
      });
      // An account of its own: the rate governor pauses its calls for as long as the provider said.
      await sandboxAccount(t, { provider: 'hubspot', identifier: 'rate-limited', connection: conn.hubspot! });
      const limited = await proxy('hubspot', '/crm/v3/owners/', { headers: { identifier: 'rate-limited' } });
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('120');
      expect(await limited.json()).toMatchObject({ errorType: 'RATE_LIMIT' });
      control.clearFaults();
    });

    it('refreshes once after an upstream 401 and replays the request', async () => {
      const grants = () => control.counters().token_grants.google?.refresh_token ?? 0;
      const before = grants();
      control.expireAccessTokens('google');
      const res = await proxy('google_calendar', '/calendar/v3/users/me/calendarList');
      expect(res.status).toBe(200);
      expect(grants()).toBe(before + 1);
    });

    it('replays an upload of up to 64 KiB (PORTICO_PROXY_REPLAY_LIMIT) after a 401 with the same bytes, however it arrived', async () => {
      const grants = () => control.counters().token_grants.google?.refresh_token ?? 0;
      // Exactly the largest replayable size by default, sent in uneven pieces.
      const bytes = randomBytes(64 * 1024);
      for (const cut of [[1, 16_383, 40_000], [32_768]]) {
        const before = grants();
        control.expireAccessTokens('google');
        const stored = await driveUpload('replayed.bin', { 'content-length': bytes.length }, (req) => {
          let at = 0;
          for (const end of cut) {
            req.write(bytes.subarray(at, end));
            at = end;
          }
          req.end(bytes.subarray(at));
        });
        expect(stored).toBe(sha256(bytes));
        expect(grants()).toBe(before + 1);
      }
    });

    it('answers a streamed upload that meets a 401 with that 401, refreshed so that sending it again succeeds', async () => {
      const grants = () => control.counters().token_grants.google?.refresh_token ?? 0;
      // One byte over the replay limit: streamed to the provider, so it cannot be sent twice.
      const bytes = randomBytes(64 * 1024 + 1);
      const before = grants();
      control.expireAccessTokens('google');
      const upload = () =>
        driveUploadAnswer('streamed.bin', { 'content-length': bytes.length }, (req) => req.end(bytes));
      const refused = await upload();
      expect(refused.status).toBe(401);
      // The provider's own answer, as the caller would have had it without Portico.
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 401 } });
      expect(grants()).toBe(before + 1);
      const again = await upload();
      expect(again.status).toBe(200);
      const { id } = JSON.parse(again.body) as { id: string };
      const media = await proxy('google_drive', `/drive/v3/files/${id}?alt=media`);
      expect(sha256(new Uint8Array(await media.arrayBuffer()))).toBe(sha256(bytes));
      expect(grants()).toBe(before + 1);
    });

    it('logs every proxied request with its request id and echoes the id', async () => {
      const res = await proxy('hubspot', '/crm/v3/owners/', { headers: { 'x-request-id': 'proxy-trace-1' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('proxy-trace-1');
      const line = t.logs.find(
        (l) =>
          l.request_id === 'proxy-trace-1' &&
          l.msg === 'request completed' &&
          String(l.path).startsWith('/proxy'),
      );
      expect(line).toMatchObject({ method: 'GET', path: '/proxy/crm/v3/owners/', status: 200 });
    });

    it('answers a warm request on the fast path exactly as the full path answered the first', async () => {
      // A token the gateway has not seen yet: its first request takes Fastify's route (and is
      // verified there); the second skips that pipeline.
      const token = await t.token();
      const prepare = vi.spyOn(ProxyService.prototype, 'prepare');
      const send = () =>
        fetch(`${t.url}/proxy/v1/users/me`, {
          headers: routed('notion', token),
        });
      try {
        const first = await send();
        expect(prepare).toHaveBeenCalledTimes(1);
        const second = await send();
        expect(prepare).toHaveBeenCalledTimes(1);
        const comparable = (res: Response) =>
          [...res.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id');
        expect(second.status).toBe(first.status);
        expect(comparable(second)).toEqual(comparable(first));
        // Notion answers with a request_id of its own in every body.
        const body = async (res: Response) => ({ ...((await res.json()) as object), request_id: undefined });
        expect(await body(second)).toEqual(await body(first));
        expect(second.headers.get('x-request-id')).toMatch(/^req_/);
        expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
      } finally {
        prepare.mockRestore();
      }
    });

    it('serves warm uploads on the fast path: streamed, held and replayed, closed when answered before they are in', async () => {
      const token = await t.token();
      // Warm: the token is verified and the account's credential cached by a first request.
      expect(
        (await fetch(`${t.url}/proxy/drive/v3/about?fields=user`, { headers: routed('google_drive', token) }))
          .status,
      ).toBe(200);
      const prepare = vi.spyOn(ProxyService.prototype, 'prepare');
      const bytes = randomBytes(300_000);
      /**
       * Sends `body` announced as `length` bytes (more than it is: a body that never finishes), after
       * the gateway's 100 Continue when `expectContinue`.
       */
      const upload = (path: string, body: Buffer, { length = body.length, expectContinue = false } = {}) =>
        new Promise<{ status?: number; body: string; closed: boolean }>((resolve, reject) => {
          const req = http.request(`${t.url}/proxy${path}`, {
            method: 'POST',
            agent: false,
            headers: {
              ...routed('google_drive', token),
              'content-type': 'application/octet-stream',
              'content-length': length,
              ...(expectContinue ? { expect: '100-continue' } : {}),
            },
          });
          req.on('response', (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => {
              const socket = res.socket;
              // The gateway closes its side right after the answer when the body was not all read.
              setTimeout(
                () =>
                  resolve({
                    status: res.statusCode,
                    body: text,
                    closed: socket.destroyed || socket.readableEnded,
                  }),
                100,
              );
            });
          });
          req.on('error', reject);
          if (expectContinue) req.on('continue', () => req.write(body));
          else req.write(body);
        });
      try {
        const stored = await upload('/upload/drive/v3/files?uploadType=media&name=fast.bin', bytes);
        expect(stored.status).toBe(200);
        expect(prepare).not.toHaveBeenCalled();
        const { id } = JSON.parse(stored.body) as { id: string };
        const media = await proxy('google_drive', `/drive/v3/files/${id}?alt=media`);
        expect(sha256(new Uint8Array(await media.arrayBuffer()))).toBe(sha256(bytes));

        // A client that waits for 100 Continue before its body gets it on the fast path too.
        const continued = await upload('/upload/drive/v3/files?uploadType=media&name=continued.bin', bytes, {
          expectContinue: true,
        });
        expect(continued.status).toBe(200);
        const continuedId = (JSON.parse(continued.body) as { id: string }).id;
        const continuedMedia = await proxy('google_drive', `/drive/v3/files/${continuedId}?alt=media`);
        expect(sha256(new Uint8Array(await continuedMedia.arrayBuffer()))).toBe(sha256(bytes));

        // Small enough to hold: sent again after the 401 and the refresh.
        const grants = () => control.counters().token_grants.google?.refresh_token ?? 0;
        const before = grants();
        control.expireAccessTokens('google');
        const small = randomBytes(1000);
        const replayed = await upload('/upload/drive/v3/files?uploadType=media&name=held.bin', small);
        expect(replayed.status).toBe(200);
        expect(grants()).toBe(before + 1);
        const heldId = (JSON.parse(replayed.body) as { id: string }).id;
        const heldMedia = await proxy('google_drive', `/drive/v3/files/${heldId}?alt=media`);
        expect(sha256(new Uint8Array(await heldMedia.arrayBuffer()))).toBe(sha256(small));

        control.addFault({
          emulator: 'google',
          path: '/upload/drive/v3/files',
          status: 403,
          body: { error: { code: 403, message: 'The user has exceeded their Drive storage quota' } },
        });
        // Only the first part is sent: the provider answers without waiting for the rest.
        const early = await upload(
          '/upload/drive/v3/files?uploadType=media&name=quota.bin',
          bytes.subarray(0, 1000),
          { length: bytes.length },
        );
        expect(early.status).toBe(403);
        expect(JSON.parse(early.body)).toMatchObject({ error: { code: 403 } });
        expect(early.closed).toBe(true);
        expect(prepare).not.toHaveBeenCalled();
      } finally {
        prepare.mockRestore();
        control.clearFaults();
      }
    });

    it('answers a provider that drops the connection with a problem on a warm request', async () => {
      expect((await proxy('notion', '/v1/users/me')).status).toBe(200);
      control.addFault({ emulator: 'notion', path: '^/notion/v1/users/me', drop: true, times: 3 });
      try {
        const res = await proxy('notion', '/v1/users/me', { headers: { 'x-request-id': 'dropped-1' } });
        expect(res.status).toBe(503);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        expect(res.headers.get('x-request-id')).toBe('dropped-1');
        expect(await res.json()).toMatchObject({ code: 'upstream_unavailable', request_id: 'dropped-1' });
        expect(t.logs.find((l) => l.request_id === 'dropped-1' && l.msg === 'request failed')).toMatchObject({
          code: 'upstream_unavailable',
          status: 503,
        });
      } finally {
        control.clearFaults();
      }
    });

    it('reads no database row per proxied request once warm', async () => {
      await proxy('hubspot', '/crm/v3/owners/');
      const before = t.queries(REQUEST_PATH_READS);
      for (let i = 0; i < 30; i++) expect((await proxy('hubspot', '/crm/v3/owners/')).status).toBe(200);
      expect(t.queries(REQUEST_PATH_READS)).toBe(before);
    });
  });
});
