import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMasterKey } from '../src/secrets/keyring.js';
import { openDatabase } from '../src/store/db.js';
import { POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { freePort } from './helpers/gateway.js';
import { type RunningGateway, startCli } from './helpers/process.js';
import { memoryOf, RemoteGateway } from './helpers/remote.js';

const STREAM_BYTES = Number(process.env.PORTICO_TEST_STREAM_BYTES ?? 1024 ** 3);
const MiB = 1024 * 1024;

/**
 * A pass-through in front of the emulators that records what the gateway sent upstream and can
 * stall, so header hygiene and timeouts are observed on the wire. `/trickle` answers an event
 * stream of unannounced length that never ends by itself, and records whether its reader left.
 */
function startTap(target: string) {
  const seen: http.IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  const trickle = { started: 0, abandoned: 0 };
  let stallMs = 0;
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    paths.push(req.url ?? '');
    if (req.url?.endsWith('/trickle')) {
      trickle.started++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      const ticker = setInterval(() => res.write(': still here\n\n'), 50);
      res.on('close', () => {
        clearInterval(ticker);
        if (!res.writableEnded) trickle.abandoned++;
      });
      return;
    }
    const forward = () => {
      const upstream = http.request(
        `${target}${req.url}`,
        { method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    if (stallMs && req.url?.includes('/calendar/')) setTimeout(forward, stallMs);
    else forward();
  });
  return new Promise<{
    url: string;
    seen: typeof seen;
    paths: string[];
    trickle: typeof trickle;
    stall(ms: number): void;
    close(): Promise<void>;
  }>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        seen,
        paths,
        trickle,
        stall: (ms) => {
          stallMs = ms;
        },
        close: () => new Promise((r) => server.close(() => r())),
      });
    }),
  );
}

describe('proxy in a separate gateway process', () => {
  let emulators: RunningEmulators;
  let tap: Awaited<ReturnType<typeof startTap>>;
  let running: RunningGateway;
  let gw: RemoteGateway;

  beforeAll(async () => {
    emulators = await startEmulators();
    tap = await startTap(emulators.url);
    const port = await freePort();
    running = await startCli({
      PORTICO_PORT: String(port),
      PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
      PORTICO_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'portico-proxy-')),
      PORTICO_SANDBOX_URL: tap.url,
      // Long enough for the emulator to answer a 1 GiB upload on a busy machine, short enough to test 504.
      PORTICO_UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '15000',
      PORTICO_LOG_LEVEL: 'info',
    });
    gw = RemoteGateway.fromStdout(running.url.replace('127.0.0.1', '127.0.0.1'), running.stdout());
    await gw.sandboxAccount('google_drive', 'drive', 'streamer');
    await gw.sandboxAccount('google_calendar', 'calendar', 'streamer');
  }, 120_000);

  afterAll(async () => {
    running?.child.kill('SIGTERM');
    await running?.exited;
    await tap?.close();
    await emulators?.close();
  });

  const routing = (connection: string) => ({ connection_name: connection, identifier: 'streamer' });

  it('forwards content headers but never the caller’s credentials, cookies, routing or hop-by-hop headers', async () => {
    tap.seen.length = 0;
    const res = await gw.api('/proxy/drive/v3/files?pageSize=1', {
      headers: {
        ...routing('drive'),
        cookie: 'session=secret-cookie',
        'x-trace': 'abc',
        'proxy-authorization': 'Basic x',
        te: 'trailers',
      },
    });
    expect(res.status).toBe(200);
    const sent = tap.seen.at(-1)!;
    expect(sent.authorization).toMatch(/^Bearer ya29\./);
    expect(sent.authorization).not.toContain(await gw.bearer());
    expect(sent.cookie).toBeUndefined();
    expect(sent.connection_name).toBeUndefined();
    expect(sent.identifier).toBeUndefined();
    expect(sent['proxy-authorization']).toBeUndefined();
    expect(sent['x-trace']).toBe('abc');
  });

  it('keeps forwarding headers, headers the caller named in Connection, and an absolute-form authority from the provider', async () => {
    tap.seen.length = 0;
    const bearer = await gw.bearer();
    // Raw HTTP: fetch refuses to send a Connection header or an absolute-form target.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${gw.url}/`, {
        method: 'GET',
        path: `http://provider.invalid:9/proxy/drive/v3/files?pageSize=1`,
        headers: {
          authorization: `Bearer ${bearer}`,
          ...routing('drive'),
          connection: 'keep-alive, x-hop-secret',
          'x-hop-secret': 'for-portico-only',
          'x-forwarded-for': '10.1.2.3',
          'x-forwarded-host': 'internal.example',
          forwarded: 'for=10.1.2.3',
          'x-real-ip': '10.1.2.3',
          'x-trace': 'kept',
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    const sent = tap.seen.at(-1)!;
    expect(sent['x-trace']).toBe('kept');
    for (const name of ['x-hop-secret', 'x-forwarded-for', 'x-forwarded-host', 'forwarded', 'x-real-ip']) {
      expect(sent[name], name).toBeUndefined();
    }
    expect(tap.paths.at(-1)).toBe('/google/drive/v3/files?pageSize=1');
  });

  it('answers 504 upstream_timeout when the provider does not start answering in time', async () => {
    tap.stall(20_000);
    try {
      const res = await gw.api('/proxy/calendar/v3/users/me/calendarList', { headers: routing('calendar') });
      expect(res.status).toBe(504);
      expect(await res.json()).toMatchObject({ code: 'upstream_timeout', retryable: true });
    } finally {
      tap.stall(0);
    }
  });

  it('relays a body of unannounced length as it arrives, and abandons the provider request when the caller leaves', async () => {
    const bearer = await gw.bearer();
    const first = await new Promise<{ text: string; leave(): void }>((resolve, reject) => {
      const req = http.get(
        `${gw.url}/proxy/calendar/v3/trickle`,
        { headers: { authorization: `Bearer ${bearer}`, ...routing('calendar') } },
        (res) => {
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-type']).toBe('text/event-stream');
          // The provider has not finished (it never does): this chunk can only come from a stream.
          res.once('data', (chunk: Buffer) =>
            resolve({ text: chunk.toString(), leave: () => req.destroy() }),
          );
        },
      );
      req.on('error', reject);
    });
    expect(first.text).toBe('data: first\n\n');
    expect(tap.trickle).toMatchObject({ started: 1, abandoned: 0 });
    first.leave();
    await expect.poll(() => tap.trickle.abandoned, { timeout: 5000 }).toBe(1);
  });

  it(`streams ${Math.round(STREAM_BYTES / MiB)} MiB up and down with flat memory and identical bytes`, async () => {
    const pid = running.child.pid!;
    const before = await memoryOf(pid);
    // The high-water mark may predate the transfer (start-up), so sample the live RSS throughout.
    let maxRss = before.rss;
    const sampler = setInterval(() => {
      memoryOf(pid).then(
        (m) => {
          maxRss = Math.max(maxRss, m.rss);
        },
        () => {},
      );
    }, 50);
    // Deterministic pseudo-random bytes, generated and hashed on the fly: the test never holds them either.
    const chunk = randomBytes(MiB);
    const sentHash = createHash('sha256');
    let sent = 0;
    const source = Readable.from(
      (function* () {
        while (sent < STREAM_BYTES) {
          const piece = chunk.subarray(0, Math.min(MiB, STREAM_BYTES - sent));
          sent += piece.length;
          sentHash.update(piece);
          yield piece;
        }
      })(),
    );
    const token = await gw.bearer();
    const { port } = new URL(gw.url);
    const uploaded = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/proxy/upload/drive/v3/files?uploadType=media&name=big.bin',
          headers: {
            authorization: `Bearer ${token}`,
            ...routing('drive'),
            'content-type': 'application/octet-stream',
            'content-length': STREAM_BYTES,
          },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      source.pipe(req);
    });
    expect(uploaded.status, uploaded.body).toBe(200);
    const { id } = JSON.parse(uploaded.body) as { id: string };

    const received = createHash('sha256');
    let receivedBytes = 0;
    const download = await gw.api(`/proxy/drive/v3/files/${id}?alt=media`, { headers: routing('drive') });
    expect(download.status).toBe(200);
    for await (const piece of download.body as unknown as AsyncIterable<Uint8Array>) {
      received.update(piece);
      receivedBytes += piece.length;
    }
    clearInterval(sampler);
    maxRss = Math.max(maxRss, (await memoryOf(pid)).rss);
    expect(receivedBytes).toBe(STREAM_BYTES);
    expect(received.digest('hex')).toBe(sentHash.digest('hex'));
    const growth = maxRss - before.rss;
    console.log(
      `gateway RSS ${Math.round(before.rss / MiB)} MiB before, ${Math.round(maxRss / MiB)} MiB at most while streaming ${Math.round(STREAM_BYTES / MiB)} MiB each way`,
    );
    expect(growth).toBeLessThan(64 * MiB);
  }, 300_000);
});

describe.runIf(postgresAvailable)('two gateway processes on one PostgreSQL', () => {
  let emulators: RunningEmulators;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    emulators = await startEmulators();
  });
  afterAll(async () => {
    for (const g of gateways) g.child.kill('SIGTERM');
    await Promise.all(gateways.map((g) => g.exited));
    await emulators?.close();
  });

  it('refreshes an expired token exactly once for 50 concurrent requests across both', async () => {
    const schema = uniqueSchema();
    const db = await openDatabase({ url: POSTGRES_URL, schema });
    const env = {
      DATABASE_URL: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      PORTICO_MASTER_KEY: generateMasterKey(),
      PORTICO_SANDBOX_URL: emulators.url,
    };
    const portA = await freePort();
    const a = await startCli({
      ...env,
      PORTICO_PORT: String(portA),
      PORTICO_PUBLIC_URL: `http://127.0.0.1:${portA}`,
    });
    gateways.push(a);
    const gwA = RemoteGateway.fromStdout(a.url, a.stdout());
    const portB = await freePort();
    // Both replicas share the public URL of A (one load balancer in front of both).
    const b = await startCli({
      ...env,
      PORTICO_PORT: String(portB),
      PORTICO_PUBLIC_URL: `http://127.0.0.1:${portA}`,
    });
    gateways.push(b);
    const gwB = gwA.withUrl(b.url);

    const accountId = await gwA.sandboxAccount('google_calendar', 'cal', 'racer');
    const path = '/proxy/calendar/v3/users/me/calendarList';
    const headers = { connection_name: 'cal', identifier: 'racer' };
    // Warm both caches, then let the token expire everywhere at once.
    expect((await gwA.api(path, { headers })).status).toBe(200);
    expect((await gwB.api(path, { headers })).status).toBe(200);
    emulators.control.expireAccessTokens('google');
    await db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [accountId]);
    const grantsBefore = emulators.control.counters().token_grants.google?.refresh_token ?? 0;

    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? gwA : gwB).api(path, { headers }).then((r) => r.status)),
    );
    expect(results).toEqual(Array(50).fill(200));
    expect((emulators.control.counters().token_grants.google?.refresh_token ?? 0) - grantsBefore).toBe(1);
    await db.close();
  }, 120_000);
});
