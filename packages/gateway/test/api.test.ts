import net from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenIssuer } from '../src/auth/access-tokens.js';
import { revokeClient } from '../src/auth/gateway-clients.js';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { postToken } from './helpers/token.js';

const PROBLEM = 'application/problem+json';

describe.each(BACKENDS)('gateway API on $name', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('health', () => {
    it('answers /healthz and /readyz', async () => {
      expect(await (await fetch(`${t.url}/healthz`)).json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${t.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', database: backend.name });
    });
  });

  describe('gateway credentials', () => {
    it('issues a bearer token for form-encoded credentials, ignoring any Authorization header', async () => {
      const res = await postToken(
        t.url,
        { grant_type: 'client_credentials', client_id: t.clientId, client_secret: t.clientSecret },
        { form: true, headers: { authorization: 'Basic Zm9vOmJhcg==' } },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
      const api = await t.api('/api/v1/connections', { token: body.access_token as string });
      expect(api.status).toBe(200);
    });

    it('issues a token for JSON credentials', async () => {
      const res = await postToken(t.url, {
        grant_type: 'client_credentials',
        client_id: t.clientId,
        client_secret: t.clientSecret,
      });
      expect(res.status).toBe(200);
    });

    it('refuses a wrong secret, an unknown client and credentials only in the Authorization header', async () => {
      for (const body of [
        { grant_type: 'client_credentials', client_id: t.clientId, client_secret: `${t.clientSecret}x` },
        { grant_type: 'client_credentials', client_id: 'cli_unknown', client_secret: t.clientSecret },
      ]) {
        const res = await postToken(t.url, body);
        expect(res.status).toBe(401);
        expect(res.headers.get('content-type')).toContain(PROBLEM);
        expect(await res.json()).toMatchObject({ code: 'invalid_client', error: 'invalid_client' });
      }
      const basicOnly = await postToken(
        t.url,
        { grant_type: 'client_credentials' },
        {
          form: true,
          headers: {
            authorization: `Basic ${Buffer.from(`${t.clientId}:${t.clientSecret}`).toString('base64')}`,
          },
        },
      );
      expect(basicOnly.status).toBe(400);
      expect(await basicOnly.json()).toMatchObject({
        code: 'invalid_input',
        errors: [
          { path: '/client_id', message: 'is required' },
          { path: '/client_secret', message: 'is required' },
        ],
      });
    });

    it('refuses other grant types', async () => {
      const res = await postToken(t.url, {
        grant_type: 'password',
        client_id: t.clientId,
        client_secret: t.clientSecret,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'unsupported_grant_type',
        error: 'unsupported_grant_type',
      });
    });

    it('guards /api/v1 with a bearer challenge', async () => {
      for (const token of [null, 'not-a-jwt', `${await t.token()}x`]) {
        const res = await t.api('/api/v1/connections', { token });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="portico", error="invalid_token"/);
        expect(res.headers.get('content-type')).toContain(PROBLEM);
        expect(await res.json()).toMatchObject({ code: 'unauthenticated', status: 401 });
      }
    });

    it('refuses an expired token and one signed with another key', async () => {
      const shortLived = new AccessTokenIssuer(t.gateway.keyring, t.gateway.config.publicUrl, 1);
      const { access_token } = await shortLived.issue({ clientId: t.clientId, environmentId: 'env_x' });
      await new Promise((r) => setTimeout(r, 2100));
      const expired = await t.api('/api/v1/connections', { token: access_token });
      expect(expired.status).toBe(401);
      expect(((await expired.json()) as { detail: string }).detail).toMatch(/expired/);

      const forged = await new SignJWT({ env: 'env_x' })
        .setProtectedHeader({ alg: 'HS256', kid: t.gateway.keyring.activeKeyId, typ: 'at+jwt' })
        .setIssuer(t.gateway.config.publicUrl)
        .setAudience('portico-api')
        .setSubject(t.clientId)
        .setExpirationTime('1h')
        .sign(new Uint8Array(32));
      expect((await t.api('/api/v1/connections', { token: forged })).status).toBe(401);
    });
  });

  describe('connections', () => {
    it('creates a connection and never returns its secret', async () => {
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'notion-prod', provider: 'notion', client_id: 'abc', client_secret: 'top-secret-1' },
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({
        id: expect.stringMatching(/^conn_[0-9A-Za-z]{22}$/),
        name: 'notion-prod',
        provider: 'notion',
        client_id: 'abc',
        scopes: [],
        parameters: {},
        redirect_uri: `${t.gateway.config.publicUrl}/sso/v1/oauth/${body.id}/callback`,
        sandbox: false,
        tenant: null,
        display_name: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(JSON.stringify(body)).not.toContain('top-secret-1');
      const fetched = (await (await t.api('/api/v1/connections/notion-prod')).json()) as Record<
        string,
        unknown
      >;
      expect(fetched).toEqual(body);
    });

    it('fills default scopes from the provider catalog', async () => {
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'cal', provider: 'google_calendar', client_id: 'g', client_secret: 's' },
      });
      expect(((await res.json()) as { scopes: string[] }).scopes).toEqual([
        'https://www.googleapis.com/auth/calendar',
      ]);
    });

    it('creates sandbox connections without provider credentials', async () => {
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'sb', provider: 'hubspot', sandbox: true },
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({
        sandbox: true,
        client_id: expect.stringMatching(/^sandbox-/),
      });
    });

    it('answers a duplicate name with 409', async () => {
      const json = { name: 'dup', provider: 'hubspot', client_id: 'a', client_secret: 'b' };
      expect((await t.api('/api/v1/connections', { method: 'POST', json })).status).toBe(201);
      const again = await t.api('/api/v1/connections', { method: 'POST', json });
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({
        code: 'connection_exists',
        detail: expect.stringContaining('"dup"'),
      });
    });

    it('names every invalid field and how to fix it', async () => {
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'bad name!', provider: '', client_id: 'a', client_secret: 'b', colour: 'red' },
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as {
        code: string;
        detail: string;
        errors: { path: string; message: string }[];
      };
      expect(body.code).toBe('invalid_input');
      const byPath = Object.fromEntries(body.errors.map((e) => [e.path, e.message]));
      expect(byPath['/name']).toMatch(/expected form: 1–64 letters/);
      expect(byPath['/colour']).toMatch(/is not a known field; remove it \(known fields: name, provider/);
      expect(body.errors.some((e) => e.path === '/provider')).toBe(true);
      expect(body.detail).toMatch(/^The request body is invalid: /);
      // A well-formed key no provider has is named too, with the keys there are.
      const unknown = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'space', provider: 'myspace', client_id: 'a', client_secret: 'b' },
      });
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({
        code: 'invalid_input',
        errors: [{ path: '/provider', message: expect.stringContaining('notion') }],
      });
    });

    it('requires client credentials for a non-sandbox connection', async () => {
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'nocreds', provider: 'notion' },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'invalid_input',
        errors: [
          { path: '/client_id', message: 'is required unless sandbox is true' },
          { path: '/client_secret', message: 'is required unless sandbox is true' },
        ],
      });
    });

    it('updates, lists with pagination and deletes', async () => {
      for (const name of ['p1', 'p2', 'p3']) {
        await t.api('/api/v1/connections', {
          method: 'POST',
          json: { name, provider: 'sharepoint', client_id: name, client_secret: 's' },
        });
      }
      const patched = await t.api('/api/v1/connections/p1', {
        method: 'PATCH',
        json: { client_secret: 'rotated', scopes: ['Sites.Read.All'] },
      });
      expect(patched.status).toBe(200);
      expect(await patched.json()).toMatchObject({ name: 'p1', scopes: ['Sites.Read.All'] });
      expect((await t.api('/api/v1/connections/p1', { method: 'PATCH', json: {} })).status).toBe(400);

      const names: string[] = [];
      let token: string | null = null;
      do {
        const query: string = `provider=sharepoint&page_size=2${token ? `&page_token=${token}` : ''}`;
        const page = (await (await t.api(`/api/v1/connections?${query}`)).json()) as {
          data: { name: string }[];
          next_page_token: string | null;
        };
        expect(page.data.length).toBeLessThanOrEqual(2);
        names.push(...page.data.map((c) => c.name));
        token = page.next_page_token;
      } while (token);
      expect(names).toEqual(['p1', 'p2', 'p3']);

      const badQuery = await t.api('/api/v1/connections?page_size=500');
      expect(badQuery.status).toBe(400);
      expect(await badQuery.json()).toMatchObject({
        errors: [{ path: '/page_size', message: 'must be <= 100' }],
      });

      expect((await t.api('/api/v1/connections/p2', { method: 'DELETE' })).status).toBe(204);
      const gone = await t.api('/api/v1/connections/p2');
      expect(gone.status).toBe(404);
      expect(await gone.json()).toMatchObject({ code: 'connection_not_found' });
    });
  });

  describe('errors', () => {
    it('answers unknown routes, malformed JSON, wrong media types and oversized bodies with problems', async () => {
      const cases: Array<[Promise<Response>, number, string]> = [
        [t.api('/nope', { token: null }), 404, 'not_found'],
        [t.api('/api/v1/connections/%zz'), 400, 'invalid_input'],
        [
          t.api('/api/v1/connections', {
            method: 'POST',
            body: '{"name":',
            headers: { 'content-type': 'application/json' },
          }),
          400,
          'invalid_json',
        ],
        [
          t.api('/api/v1/connections', {
            method: 'POST',
            body: '<name/>',
            headers: { 'content-type': 'application/xml' },
          }),
          415,
          'unsupported_media_type',
        ],
        [
          t.api('/api/v1/connections', {
            method: 'POST',
            json: { name: 'big', provider: 'notion', client_id: 'x'.repeat(2_000_000), client_secret: 's' },
          }),
          413,
          'payload_too_large',
        ],
      ];
      for (const [pending, status, code] of cases) {
        const res = await pending;
        expect(res.status, code).toBe(status);
        expect(res.headers.get('content-type')).toContain(PROBLEM);
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).toMatchObject({
          status,
          code,
          type: expect.stringContaining('https://'),
          retryable: false,
        });
        expect(body.request_id).toBe(res.headers.get('x-request-id'));
        expect(typeof body.detail).toBe('string');
      }
    });

    it('refuses a body over the limit with 413 while it still arrives, reads the rest and keeps the connection', async () => {
      const { hostname, port } = new URL(t.url);
      const token = await t.token();
      const size = 2 * 1024 * 1024;
      const socket = net.connect(Number(port), hostname);
      await new Promise((resolve) => socket.once('connect', resolve));
      let answer = '';
      let failed: Error | undefined;
      socket.on('data', (d) => (answer += d));
      socket.on('error', (error) => (failed = error));
      socket.write(
        `POST /api/v1/connections HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${size}\r\n\r\n{"name":"`,
      );
      // The answer comes before the body is whole; the client goes on sending, as clients do.
      for (let i = 0; i < 50 && !answer.includes('\r\n\r\n'); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).not.toMatch(/connection: close/i);
      const rest = Buffer.alloc(size - '{"name":"'.length, 'x');
      for (let sent = 0; sent < rest.length; sent += 256 * 1024) {
        socket.write(rest.subarray(sent, sent + 256 * 1024));
        await new Promise((r) => setTimeout(r, 5));
      }
      // Still open and still answering: the next request on the same connection gets its answer.
      answer = '';
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      for (let i = 0; i < 100 && !answer.includes('\r\n\r\n'); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(failed).toBeUndefined();
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      socket.destroy();
    });

    it('lets a client finish sending a refused megabyte request line and read the 431, without a reset', async () => {
      const { hostname, port } = new URL(t.url);
      // A client that goes on sending after the answer (half-open), as a streaming HTTP client does.
      const socket = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
      await new Promise((resolve) => socket.once('connect', resolve));
      let answer = '';
      let failed: Error | undefined;
      socket.on('data', (d) => (answer += d));
      socket.on('error', (error) => (failed = error));
      let reset = false;
      socket.on('end', () => {});
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(`GET /healthz?q=${'a'.repeat(64 * 1024)}`);
      for (let i = 0; i < 50 && !answer; i++) await new Promise((r) => setTimeout(r, 20));
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      // The client goes on sending the megabyte it had started; the gateway reads it and drops it.
      for (let i = 0; i < 16; i++) {
        if (socket.destroyed) reset = true;
        else socket.write('a'.repeat(64 * 1024));
        await new Promise((r) => setTimeout(r, 5));
      }
      socket.end(' HTTP/1.1\r\nHost: x\r\n\r\n');
      await closed;
      expect(reset).toBe(false);
      expect(failed).toBeUndefined();
      expect(answer).toContain('"code":"headers_too_large"');
    });

    it('answers requests the HTTP parser refuses with problems too, then closes the connection', async () => {
      const { hostname, port } = new URL(t.url);
      const exchange = (raw: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = net.connect(Number(port), hostname, () => socket.write(raw));
          let answer = '';
          socket.on('data', (d) => (answer += d));
          socket.on('close', () => resolve(answer));
          socket.on('error', reject);
        });
      const cases: [string, number, string][] = [
        [
          `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          431,
          'headers_too_large',
        ],
        ['GET /he llo HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'malformed_request'],
        ['GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', 400, 'malformed_request'],
      ];
      for (const [raw, status, code] of cases) {
        const answer = await exchange(raw);
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        expect(head, code).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        expect(head.toLowerCase()).toContain(`content-type: ${PROBLEM}`);
        expect(head.toLowerCase()).toContain('connection: close');
        expect(JSON.parse(body)).toMatchObject({
          status,
          code,
          detail: expect.stringMatching(/\S/),
          request_id: expect.stringMatching(/^req_/),
        });
      }
      // The gateway is still serving.
      expect((await t.api('/healthz')).status).toBe(200);
    });

    it('keeps a caller-supplied request id', async () => {
      const res = await t.api('/api/v1/connections/none', { headers: { 'x-request-id': 'trace-123' } });
      expect(res.headers.get('x-request-id')).toBe('trace-123');
      expect(await res.json()).toMatchObject({ request_id: 'trace-123' });
    });
  });

  describe('logs', () => {
    it('carry a request id on every request line and never a secret', async () => {
      const token = await t.token();
      await t.api('/api/v1/connections', {
        method: 'POST',
        token,
        json: { name: 'logged', provider: 'notion', client_id: 'x', client_secret: 'log-leak-check-secret' },
        headers: { cookie: 'session=cookie-leak-check' },
      });
      const text = t.logText();
      expect(text).not.toContain('log-leak-check-secret');
      expect(text).not.toContain('cookie-leak-check');
      expect(text).not.toContain(token);
      expect(text).not.toContain(t.clientSecret);
      const requestLines = t.logs.filter((l) => l.msg === 'request completed');
      expect(requestLines.length).toBeGreaterThan(5);
      for (const line of requestLines) expect(line.request_id).toEqual(expect.any(String));
    });

    it('write a failed request once: one line with its code, method, path, status and duration', async () => {
      const res = await t.api('/api/v1/connections/none?page_size=1', {
        headers: { 'x-request-id': 'failed-once' },
      });
      expect(res.status).toBe(404);
      // Polled: the line is written as the answer leaves, a moment after the client has it.
      await expect.poll(() => t.logs.filter((l) => l.request_id === 'failed-once')).toHaveLength(1);
      expect(t.logs.find((l) => l.request_id === 'failed-once')).toMatchObject({
        msg: 'request failed',
        level: 30,
        code: 'connection_not_found',
        method: 'GET',
        path: '/api/v1/connections/none',
        status: 404,
        duration_ms: expect.any(Number),
      });
    });

    it('redacts secrets wherever a caller logs them', () => {
      t.gateway.logger.info(
        {
          client_secret: 'abc-redact',
          nested: { refresh_token: 'def-redact' },
          req: { headers: { authorization: 'Bearer ghi-redact' } },
        },
        'x',
      );
      expect(t.logText()).not.toMatch(/abc-redact|def-redact|ghi-redact/);
    });
  });

  describe('client revocation', () => {
    it('stops a revoked client’s tokens at once', async () => {
      const token = await t.token();
      expect((await t.api('/api/v1/connections', { token })).status).toBe(200);
      expect(await revokeClient(t.db, t.clientId)).toBe(true);
      // Revoked as another process would (CLI): the notification is on its way, a few ms at most.
      let res = await t.api('/api/v1/connections', { token });
      for (const began = Date.now(); res.status === 200 && Date.now() - began < 1000; ) {
        await new Promise((r) => setTimeout(r, 10));
        res = await t.api('/api/v1/connections', { token });
      }
      expect(res.status).toBe(401);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/revoked/);
      const reissue = await postToken(t.url, {
        grant_type: 'client_credentials',
        client_id: t.clientId,
        client_secret: t.clientSecret,
      });
      expect(reissue.status).toBe(401);
    });
  });

  describe('readiness', () => {
    it('fails /readyz when the database is unreachable', async () => {
      const other = await startTestGateway(backend);
      await other.db.close();
      const res = await fetch(`${other.url}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 'service_unavailable', retryable: true });
      await other.gateway.app.close();
    });
  });
});
