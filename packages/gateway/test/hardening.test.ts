import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_CHANNEL } from '../src/accounts/account-tokens.js';
import { revokeClient } from '../src/auth/gateway-clients.js';
import { deactivateAccount } from '../src/store/accounts.js';
import { openDatabase } from '../src/store/db.js';
import { BACKENDS, POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { cuttablePostgres } from './helpers/cuttable-postgres.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/** A raw HTTP/1.1 exchange, for what fetch will not send (two Authorization headers). */
function rawRequest(
  url: string,
  path: string,
  headers: Array<[string, string]>,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${lines}Connection: close\r\n\r\n`);
    });
    let raw = '';
    socket.on('data', (d) => (raw += d));
    socket.on('end', () => {
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body });
    });
    socket.on('error', reject);
  });
}

const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { deeper: value };
  return value;
};

describe.each(BACKENDS)('hostile input on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, {
      provider: 'notion',
      identifier: 'ada',
      userId: 'ada00000-0000-4000-8000-000000000001',
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  async function expectRefused(res: Response, path: string, message: RegExp) {
    const body = (await res.json()) as { code: string; errors: Array<{ path: string; message: string }> };
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(body.code).toBe('invalid_input');
    expect(body.errors[0]?.path).toBe(path);
    expect(body.errors[0]?.message).toMatch(message);
  }

  it('refuses NUL characters in bodies, query strings and path ids with 400 naming the field', async () => {
    await expectRefused(
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'sandbox-notion', identifier: 'user\u0000x' },
      }),
      '/identifier',
      /NUL/,
    );
    await expectRefused(
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'sandbox-notion', identifier: 'u', state: 'a\u0000' },
      }),
      '/state',
      /NUL/,
    );
    await expectRefused(await t.api('/api/v1/connections/bad%00name'), '/path/name', /NUL/);
    await expectRefused(await t.api('/api/v1/connected-accounts/ca_%00'), '/path/id', /NUL/);
    await expectRefused(
      await t.api('/api/v1/connected-accounts?identifier=a%00b'),
      '/query/identifier',
      /NUL/,
    );
    await expectRefused(await t.api('/api/v1/executions/exec_%00'), '/path/id', /NUL/);
    await expectRefused(
      await t.api('/api/v1/tools/execute', {
        method: 'POST',
        json: { tool_name: 'notes_page_get', identifier: 'ada', tool_input: { page_id: 'x\u0000' } },
      }),
      '/tool_input/page_id',
      /NUL/,
    );
  });

  it('refuses unpaired surrogates (text that is not Unicode) but keeps real astral characters', async () => {
    const res = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"connection_name":"sandbox-notion","identifier":"bad\\ud800"}',
    });
    await expectRefused(res, '/identifier', /surrogate/);
    const emoji = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'sandbox-notion', identifier: 'user 📝' },
    });
    expect(emoji.status).toBe(201);
  });

  it('refuses tool input nested 2,000 levels deep with 400 instead of overflowing the stack', async () => {
    await expectRefused(
      await t.api('/api/v1/tools/execute', {
        method: 'POST',
        json: { tool_name: 'notes_page_get', identifier: 'ada', tool_input: nested(2000) },
      }),
      // The walk stops at the limit and names where it stopped.
      `/tool_input${'/deeper'.repeat(63)}`,
      /deeper than 64 levels/,
    );
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('refuses a request with two Authorization headers, whichever comes first', async () => {
    const good = `Bearer ${await t.token()}`;
    for (const pair of [
      [good, 'Bearer forged'],
      ['Bearer forged', good],
    ]) {
      const res = await rawRequest(t.url, '/api/v1/connections', [
        ['authorization', pair[0]!],
        ['authorization', pair[1]!],
      ]);
      expect(res.status, res.body).toBe(401);
      expect(JSON.parse(res.body)).toMatchObject({
        code: 'unauthenticated',
        detail: expect.stringMatching(/exactly one/),
      });
    }
    const one = await rawRequest(t.url, '/api/v1/connections', [['authorization', good]]);
    expect(one.status).toBe(200);
  });

  it('logs /connect links without their token', async () => {
    const link = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'sandbox-notion', identifier: 'log-user' },
    });
    const { link: url } = (await link.json()) as { link: string };
    const token = url.split('/connect/')[1]!;
    await fetch(url, { redirect: 'manual' });
    expect(t.logText()).not.toContain(token);
    expect(t.logs.some((l) => l.path === '/connect/…')).toBe(true);
  });

  it('throttles failed /oauth/token attempts with 429 and Retry-After, never the right secret', async () => {
    const attempt = (secret: string) =>
      fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: t.clientId,
          client_secret: secret,
        }),
      });
    for (let i = 0; i < 10; i++) expect((await attempt('pcs_wrong')).status).toBe(401);
    const limited = await attempt('pcs_wrong');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ code: 'rate_limited', retryable: true });
    // The right secret still gets its token: otherwise a guesser could lock the application out.
    expect((await attempt(t.clientSecret)).status).toBe(200);
  });
});

describe.runIf(postgresAvailable)('PostgreSQL out of reach', () => {
  it('answers 503 service_unavailable with Retry-After on /oauth/token and /api/v1, not 500', async () => {
    const pgCut = await cuttablePostgres();
    const t = await startTestGateway({
      name: 'postgres',
      open: () => openDatabase({ url: pgCut.url, schema: uniqueSchema(), poolSize: 2 }),
    });
    try {
      const token = await t.token();
      expect((await t.api('/api/v1/connections', { token })).status).toBe(200);
      void pgCut.cut(60_000);
      const list = await t.api('/api/v1/connections', { token });
      expect(list.status).toBe(503);
      expect(list.headers.get('retry-after')).toBe('1');
      expect(await list.json()).toMatchObject({ code: 'service_unavailable', retryable: true });
      const issued = await fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: t.clientId,
          client_secret: t.clientSecret,
        }),
      });
      expect(issued.status).toBe(503);
      expect(await issued.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await t.close().catch(() => {});
      await pgCut.close();
    }
  });
});

describe.runIf(postgresAvailable)('a replica whose database connection drops', () => {
  it('forgets cached clients and credentials when its listener comes back, and says not ready meanwhile', async () => {
    const pgCut = await cuttablePostgres();
    const schema = uniqueSchema();
    const cutReplica = await startTestGateway({
      name: 'postgres',
      open: () => openDatabase({ url: pgCut.url, schema, poolSize: 3 }),
    });
    // The other replica's changes go straight to the same schema, as another gateway would make them.
    const other = await openDatabase({ url: POSTGRES_URL, schema, poolSize: 2 });
    try {
      const { accountId } = await sandboxAccount(cutReplica, {
        provider: 'notion',
        identifier: 'cut-user',
        userId: 'ada00000-0000-4000-8000-000000000001',
      });
      const token = await cutReplica.token();
      const routed = {
        authorization: `Bearer ${token}`,
        connection_name: 'sandbox-notion',
        identifier: 'cut-user',
      };
      // Warm: the client status and the credential are cached.
      expect((await fetch(`${cutReplica.url}/proxy/v1/users/me`, { headers: routed })).status).toBe(200);
      expect((await fetch(`${cutReplica.url}/proxy/v1/users/me`, { headers: routed })).status).toBe(200);

      void pgCut.cut(2000);
      // Changes made elsewhere while this replica cannot hear them.
      await deactivateAccount(other, accountId, 'DISCONNECTED', 'Disconnected on another replica.');
      await other.notify(ACCOUNT_CHANNEL, accountId);
      await revokeClient(other, cutReplica.clientId);
      const down = await fetch(`${cutReplica.url}/readyz`);
      expect(down.status).toBe(503);

      // Back within a second of the connection returning (2 s cut + backoff of at most 2 s).
      const deadline = Date.now() + 6000;
      let proxied = 0;
      while (Date.now() < deadline) {
        proxied = (await fetch(`${cutReplica.url}/proxy/v1/users/me`, { headers: routed })).status;
        if (proxied === 401) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(proxied).toBe(401);
      // Requests read through to the database as soon as it answers; the listener follows.
      await expect
        .poll(async () => (await fetch(`${cutReplica.url}/readyz`)).status, { timeout: 3000 })
        .toBe(200);
      expect((await cutReplica.api('/api/v1/connections', { token })).status).toBe(401);
    } finally {
      await other.close();
      await cutReplica.close().catch(() => {});
      await pgCut.close();
    }
  });
});

describe('slow clients', () => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!, {
      PORTICO_HEADERS_TIMEOUT_MS: '1000',
      PORTICO_BODY_TIMEOUT_MS: '1000',
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  /** Sends `head` (and nothing more); resolves with what came back and when the socket closed. */
  function stall(head: string): Promise<{ answer: string; closedAfterMs: number }> {
    const { hostname, port } = new URL(t.url);
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => socket.write(head));
      let answer = '';
      socket.on('data', (d) => (answer += d));
      socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
      socket.on('error', reject);
      socket.setTimeout(15_000, () => socket.destroy(new Error('the gateway kept the socket open')));
    });
  }

  it('answers a half-sent JSON body on /oauth/token and /api/v1 with 408 and closes the socket', async () => {
    const token = await t.token();
    for (const [path, auth] of [
      ['/oauth/token', ''],
      ['/api/v1/connections', `Authorization: Bearer ${token}\r\n`],
    ] as const) {
      const { answer, closedAfterMs } = await stall(
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"grant_type":`,
      );
      expect(answer, path).toMatch(/^HTTP\/1\.1 408/);
      expect(answer, path).toContain('"code":"request_timeout"');
      expect(closedAfterMs, path).toBeLessThan(5000);
    }
  });

  it('times out a stalled body on the proxy, the sandbox and routes that read none (408 or closed)', async () => {
    await sandboxAccount(t, { provider: 'notion', identifier: 'stall' });
    const auth = `Authorization: Bearer ${await t.token()}\r\n`;
    const partial = 'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":';
    const proxied = `POST /proxy/v1/search HTTP/1.1\r\nHost: x\r\n${auth}connection_name: sandbox-notion\r\nidentifier: stall\r\n`;
    for (const [head, answered] of [
      // Twice: first on the route (a token and account not seen before), then on the fast path.
      [proxied, 408],
      [proxied, 408],
      ['POST /sandbox/notion/v1/oauth/token HTTP/1.1\r\nHost: x\r\n', 408],
      ['GET /openapi.json HTTP/1.1\r\nHost: x\r\n', 200],
    ] as const) {
      const { answer, closedAfterMs } = await stall(`${head}${partial}`);
      expect(answer, head).toMatch(new RegExp(`^HTTP/1\\.1 ${answered}`));
      expect(closedAfterMs, head).toBeLessThan(5000);
    }
  });

  it('closes a connection whose headers never finish', async () => {
    const { answer, closedAfterMs } = await stall('GET /api/v1/connections HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeLessThan(5000);
  });
});

describe('a proxied upload that stalls', () => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!, { PORTICO_UPSTREAM_IDLE_TIMEOUT_MS: '1000' });
    await sandboxAccount(t, { provider: 'google_drive', identifier: 'uploader' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('is answered 504 and its connection closed, not left open waiting for the rest', async () => {
    const token = await t.token();
    const { hostname, port } = new URL(t.url);
    const started = Date.now();
    const { answer, closedAfterMs } = await new Promise<{ answer: string; closedAfterMs: number }>(
      (resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => {
          socket.write(
            `POST /proxy/upload/drive/v3/files?uploadType=media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
              'connection_name: sandbox-google-drive\r\nidentifier: uploader\r\n' +
              `Content-Type: application/octet-stream\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n`,
          );
          socket.write(Buffer.alloc(2 * 1024 * 1024, 1));
        });
        let answer = '';
        socket.on('data', (d) => (answer += d));
        socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
        socket.on('error', () => {});
        socket.setTimeout(20_000, () => reject(new Error('the gateway kept the socket open')));
      },
    );
    expect(answer).toMatch(/^HTTP\/1\.1 504/);
    expect(answer).toContain('upstream_timeout');
    expect(closedAfterMs).toBeLessThan(10_000);
  });
});

describe('redirect_url allow-list', () => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!, {
      PORTICO_REDIRECT_URL_ALLOWLIST: 'https://app.example.com, https://other.example.com/oauth/',
    });
    await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'sandbox-notion', provider: 'notion', sandbox: true },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  const link = (redirect_url: string) =>
    t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'sandbox-notion', identifier: 'u', redirect_url },
    });

  it('accepts redirect URLs on an allowed origin or under an allowed prefix', async () => {
    expect((await link('https://app.example.com/anything?x=1')).status).toBe(201);
    expect((await link('https://other.example.com/oauth/done')).status).toBe(201);
  });

  it('refuses any other redirect URL with 400 naming the allowed ones', async () => {
    for (const url of [
      'https://evil.example.net/phish',
      'https://app.example.com.evil.net/',
      'https://other.example.com/elsewhere',
      'http://app.example.com/',
    ]) {
      const res = await link(url);
      expect(res.status, url).toBe(400);
      const body = (await res.json()) as { code: string; detail: string; errors: Array<{ path: string }> };
      expect(body.code).toBe('invalid_input');
      expect(body.errors[0]!.path).toBe('/redirect_url');
      expect(body.detail).toContain('https://app.example.com');
    }
  });
});
