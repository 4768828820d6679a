import { type ClientHttp2Session, connect as http2Connect } from 'node:http2';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Deadlines and bounds on what a client may hold open, over real loopback sockets: HTTP/2 streams
 * and sessions get HTTP/1.1's deadlines, bodies that trickle are cut, an early answer closes its
 * connection, and one address cannot take every connection or HTTP/2 session. Other loopback
 * addresses (127.0.0.x) stand for other clients.
 */

const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

interface Exchange {
  answer: string;
  closedAfterMs: number;
}

/** Connects from `localAddress`, writes `head`, then `trickle` one byte a second until closed. */
function exchange(
  url: string,
  head: string | Buffer,
  options: { localAddress?: string; trickle?: boolean; giveUpMs?: number } = {},
): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect({ port: Number(port), host: hostname, localAddress: options.localAddress });
    let answer = '';
    let trickling: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(head);
      if (options.trickle) trickling = setInterval(() => socket.write('x'), 1000);
    });
    socket.on('data', (d) => (answer += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(trickling);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
    // Far beyond every deadline configured below: the gateway kept the socket.
    socket.setTimeout(options.giveUpMs ?? 15_000, () => socket.destroy());
  });
}

/** An HTTP/2 session from `localAddress` (prior knowledge, cleartext). */
function h2(url: string, localAddress = '127.0.0.1'): ClientHttp2Session {
  const { hostname, port } = new URL(url);
  const session = http2Connect(url, {
    createConnection: () => net.connect({ port: Number(port), host: hostname, localAddress }),
  });
  session.on('error', () => {});
  return session;
}

/** When a session ends, and the GOAWAY code it was given, if any. */
function sessionEnd(session: ClientHttp2Session): Promise<{ afterMs: number; goaway?: number }> {
  const started = Date.now();
  let goaway: number | undefined;
  session.on('goaway', (code) => {
    goaway = code;
  });
  return new Promise((resolve) =>
    session.on('close', () =>
      resolve({ afterMs: Date.now() - started, ...(goaway === undefined ? {} : { goaway }) }),
    ),
  );
}

/** A request whose body starts and never finishes; what came back and when the stream closed. */
function stalledStream(
  session: ClientHttp2Session,
  headers: Record<string, string>,
): Promise<{ status?: number; closedAfterMs: number; rstCode: number }> {
  const started = Date.now();
  const stream = session.request({ ':method': 'POST', ...headers });
  stream.write(Buffer.from([0, 0, 0, 0, 100, 1, 2]));
  let status: number | undefined;
  stream.on('response', (h) => {
    status = Number(h[':status']);
  });
  stream.on('error', () => {});
  stream.resume();
  return new Promise((resolve) =>
    stream.on('close', () =>
      resolve({
        ...(status ? { status } : {}),
        closedAfterMs: Date.now() - started,
        rstCode: stream.rstCode ?? 0,
      }),
    ),
  );
}

const EXECUTE_TOOL = '/scalekit.v1.tools.ToolService/ExecuteTool';

describe('deadlines', () => {
  let t: TestGateway;
  let token: string;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!, {
      PORTICO_HEADERS_TIMEOUT_MS: '1000',
      PORTICO_BODY_TIMEOUT_MS: '1000',
      PORTICO_BODY_MIN_BYTES_PER_SEC: '200',
    });
    await sandboxAccount(t, { provider: 'notion', identifier: 'trickle' });
    await sandboxAccount(t, { provider: 'google_drive', identifier: 'trickle' });
    token = await t.token();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('closes an HTTP/2 session that sends the preface and nothing else after the headers deadline', async () => {
    const bare = await exchange(t.url, PREFACE);
    expect(bare.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(bare.closedAfterMs).toBeLessThan(3000);
  });

  it('closes an unauthenticated HTTP/2 session, its stalled streams with it, after the headers deadline', async () => {
    const session = h2(t.url);
    const ended = sessionEnd(session);
    const stalled = stalledStream(session, { ':path': EXECUTE_TOOL, 'content-type': 'application/grpc' });
    expect((await ended).afterMs).toBeLessThan(3000);
    expect((await stalled).closedAfterMs).toBeLessThan(3000);
  });

  it('answers a stalled HTTP/2 request body 408 after the body deadline, on an authenticated session', async () => {
    const session = h2(t.url);
    try {
      const stalled = await stalledStream(session, {
        ':path': EXECUTE_TOOL,
        'content-type': 'application/grpc',
        authorization: `Bearer ${token}`,
      });
      expect(stalled.status).toBe(408);
      expect(stalled.closedAfterMs).toBeGreaterThanOrEqual(900);
      expect(stalled.closedAfterMs).toBeLessThan(3000);
      // The session outlives it (it made an authenticated request) and still answers.
      expect(session.closed || session.destroyed).toBe(false);
      const status = await new Promise((resolve) =>
        session
          .request({ ':path': '/healthz' })
          .on('response', (h) => resolve(h[':status']))
          .resume(),
      );
      expect(status).toBe(501);
    } finally {
      session.close();
    }
  });

  it('closes an HTTP/2 stream answered before its body is in, at once', async () => {
    const session = h2(t.url);
    try {
      // Not gRPC: answered 501 without waiting for the body, then the stream is reset (NO_ERROR).
      const stalled = await stalledStream(session, { ':path': '/api/v1/connections' });
      expect(stalled.status).toBe(501);
      expect(stalled.rstCode).toBe(0);
      expect(stalled.closedAfterMs).toBeLessThan(500);
    } finally {
      session.close();
    }
  });

  it('cuts held bodies trickled a byte a second at the body deadline (408)', async () => {
    const auth = `Authorization: Bearer ${token}\r\n`;
    const held = 'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{';
    const results = await Promise.all(
      [
        `POST /oauth/token HTTP/1.1\r\nHost: x\r\n${held}`,
        `POST /proxy/v1/search HTTP/1.1\r\nHost: x\r\n${auth}connection_name: sandbox-notion\r\nidentifier: trickle\r\n${held}`,
      ].map((head) => exchange(t.url, head, { trickle: true })),
    );
    for (const { answer, closedAfterMs } of results) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('"code":"request_timeout"');
      expect(closedAfterMs).toBeLessThan(3000);
    }
  });

  it('cuts a streamed proxy upload and a sandbox upload that fall below the minimum rate', async () => {
    const upload =
      `POST /proxy/upload/drive/v3/files?uploadType=media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
      'connection_name: sandbox-google-drive\r\nidentifier: trickle\r\n' +
      `Content-Type: application/octet-stream\r\nContent-Length: ${1024 * 1024}\r\n\r\n`;
    // A first burst well above the rate, then a byte a second: cut a window or two later, long
    // before the upstream idle timeout (60 s) would notice.
    const proxied = exchange(t.url, Buffer.concat([Buffer.from(upload), Buffer.alloc(100 * 1024, 1)]), {
      trickle: true,
    });
    const sandbox = exchange(
      t.url,
      'POST /sandbox/notion/v1/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      { trickle: true },
    );
    const [viaProxy, toSandbox] = await Promise.all([proxied, sandbox]);
    expect(viaProxy.closedAfterMs).toBeLessThan(4000);
    // The proxy cannot answer an upload it has started forwarding; the sandbox is told 408.
    expect(viaProxy.answer).not.toMatch(/^HTTP\/1\.1 2/);
    expect(toSandbox.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(toSandbox.answer).toContain('slower than 200 bytes/s');
    expect(toSandbox.closedAfterMs).toBeLessThan(3000);
    expect(t.logs.some((l) => l.code === 'request_timeout' && l.msg === 'request failed')).toBe(true);
  });

  it('closes the connection soon after an early 401 while the body still trickles in', async () => {
    // No deadline of their own applies (the proxy's starts once authenticated; the body is far
    // below the sandbox's rate yet cut sooner): only the early answer ends them.
    const results = await Promise.all(
      [
        'POST /proxy/v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
        'POST /api/v1/connections HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      ].map((head) => exchange(t.url, head, { trickle: true })),
    );
    for (const { answer, closedAfterMs } of results) {
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      // The answer, then at most the two seconds of a lingering close.
      expect(closedAfterMs).toBeLessThan(3000);
    }
  });

  it('opens the GET /mcp event stream at once, and a closed one frees its connection', async () => {
    const started = Date.now();
    const aborted = new AbortController();
    const res = await fetch(`${t.url}/mcp`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, identifier: 'trickle' },
      signal: aborted.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(Date.now() - started).toBeLessThan(1000);
    aborted.abort();
    const unauthenticated = await fetch(`${t.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(unauthenticated.status).toBe(401);
  });
});

describe('bounds per client address', () => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(
      BACKENDS[0]!,
      {
        PORTICO_MAX_CONNECTIONS_PER_ADDRESS: '5',
        PORTICO_HTTP2_MAX_SESSIONS_PER_ADDRESS: '2',
        PORTICO_HTTP2_MAX_SESSIONS: '3',
      },
      { awaitSandbox: false },
    );
  });

  afterAll(async () => {
    await t?.close();
  });

  it('refuses connections over the bound for one address with 429 and Retry-After, others still served', async () => {
    const { hostname, port } = new URL(t.url);
    const held = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const socket = net.connect(
              { port: Number(port), host: hostname, localAddress: '127.0.0.2' },
              () => resolve(socket),
            );
          }),
      ),
    );
    try {
      const refused = await exchange(t.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', {
        localAddress: '127.0.0.2',
      });
      expect(refused.answer).toMatch(/^HTTP\/1\.1 429 /);
      expect(refused.answer).toMatch(/retry-after: 1\r\n/i);
      expect(refused.answer).toContain('PORTICO_MAX_CONNECTIONS_PER_ADDRESS');
      expect(refused.closedAfterMs).toBeLessThan(3000);
      expect(t.logs.some((l) => l.msg === 'too many connections from one address: refused')).toBe(true);
      // Another address is not held to this one's connections.
      const other = await exchange(t.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', {
        localAddress: '127.0.0.3',
      });
      expect(other.answer).toMatch(/^HTTP\/1\.1 200 /);
      // One let go, one more admitted.
      held.pop()?.destroy();
      await new Promise((r) => setTimeout(r, 100));
      const again = await exchange(t.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', {
        localAddress: '127.0.0.2',
      });
      expect(again.answer).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it('refuses HTTP/2 sessions over the bound per address and altogether with GOAWAY', async () => {
    const sessions = [h2(t.url, '127.0.0.4'), h2(t.url, '127.0.0.4')];
    try {
      await Promise.all(sessions.map((s) => new Promise((resolve) => s.once('remoteSettings', resolve))));
      const third = h2(t.url, '127.0.0.4');
      const refused = await sessionEnd(third);
      expect(refused.goaway).toBe(11); // ENHANCE_YOUR_CALM
      expect(refused.afterMs).toBeLessThan(1000);
      // A third session from elsewhere fits the total of three; a fourth does not.
      const elsewhere = h2(t.url, '127.0.0.5');
      sessions.push(elsewhere);
      await new Promise((resolve) => elsewhere.once('remoteSettings', resolve));
      const fourth = await sessionEnd(h2(t.url, '127.0.0.6'));
      expect(fourth.goaway).toBe(11);
      const refusals = t.logs.filter((l) => String(l.msg).startsWith('too many HTTP/2 sessions'));
      expect(refusals.map((l) => [l.msg, l.address])).toEqual([
        ['too many HTTP/2 sessions from one address: refused', '127.0.0.4'],
        ['too many HTTP/2 sessions: refused', undefined],
      ]);
    } finally {
      for (const session of sessions) session.destroy();
    }
  });
});
