import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, GatewayProcess, percentile, printFigures, sleep } from './helpers/processes.js';

/**
 * 3,000 request bodies trickled a byte a second from one client address, at a gateway that may hold
 * 1,024 descriptors: unauthenticated ones the gateway answers 401 before reading their body, JSON
 * and proxied bodies it holds (a total deadline), and proxied uploads it streams (a minimum rate).
 * The bound on connections per address refuses the excess with a 429; every trickle admitted is
 * answered or cut within a few times its deadline; and a legitimate client at another address is
 * served throughout.
 */
const TIMEOUT_MS = 3000;
const TRICKLES = 3000;
const OPEN_FILES = 1024;
const ATTACKER = '127.0.0.2';

describe('trickled bodies under a low descriptor limit', () => {
  let gw: GatewayProcess;
  let bearer: string;
  let auth: string;

  beforeAll(async () => {
    const { env } = await freshStore('pglite');
    gw = await GatewayProcess.launch(
      { ...env, PORTICO_HEADERS_TIMEOUT_MS: String(TIMEOUT_MS), PORTICO_BODY_TIMEOUT_MS: String(TIMEOUT_MS) },
      undefined,
      undefined,
      { openFiles: OPEN_FILES },
    );
    await gw.remote.sandboxAccount('notion', 'notes', 'trickle');
    await gw.remote.sandboxAccount('google_drive', 'files', 'trickle');
    bearer = await gw.remote.bearer();
    auth = `Authorization: Bearer ${bearer}\r\n`;
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
  });

  it('cuts every admitted trickle within its deadline, refuses the rest, and serves others meanwhile', async () => {
    const held = 'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{';
    const kinds = [
      {
        kind: 'sandbox, unauthenticated',
        head: 'POST /sandbox/notion/v1/pages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      },
      {
        kind: 'proxy, unauthenticated',
        head: 'POST /proxy/v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      },
      { kind: 'token, held', head: `POST /oauth/token HTTP/1.1\r\nHost: x\r\n${held}` },
      {
        kind: 'proxy, held',
        head: `POST /proxy/v1/search HTTP/1.1\r\nHost: x\r\n${auth}connection_name: notes\r\nidentifier: trickle\r\n${held}`,
      },
      {
        kind: 'proxy, streamed upload',
        head:
          `POST /proxy/upload/drive/v3/files?uploadType=media HTTP/1.1\r\nHost: x\r\n${auth}` +
          'connection_name: files\r\nidentifier: trickle\r\n' +
          `Content-Type: application/octet-stream\r\nContent-Length: ${1024 * 1024}\r\n\r\n${'x'.repeat(1024)}`,
      },
    ];

    const open = new Set<net.Socket>();
    // One timer for every trickle: a byte a second each.
    const trickling = setInterval(() => {
      for (const socket of open) socket.write('x');
    }, 1000);
    const started = Date.now();
    // A legitimate client at another address, served while the trickles are at their worst.
    const legitimate = (async () => {
      await sleep(1500);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${gw.url}/proxy/v1/users/me`, {
          headers: { authorization: `Bearer ${bearer}`, connection_name: 'notes', identifier: 'trickle' },
          signal: AbortSignal.timeout(10_000),
        }).catch(() => ({ status: 0 }));
        statuses.push(res.status);
        await sleep(1000);
      }
      return statuses;
    })();
    const results = await Promise.all(
      Array.from({ length: TRICKLES }, (_, i) => {
        const { kind, head } = kinds[i % kinds.length]!;
        return new Promise<{ kind: string; status: number; closedAfterMs: number }>((resolve) => {
          const socket = net.connect({ port: gw.port, host: '127.0.0.1', localAddress: ATTACKER });
          let answer = '';
          socket.on('connect', () => {
            socket.write(head);
            open.add(socket);
          });
          socket.on('data', (d) => {
            if (answer.length < 64) answer += d;
          });
          socket.on('error', () => {});
          socket.on('close', () => {
            open.delete(socket);
            resolve({ kind, status: Number(answer.split(' ')[1] ?? 0), closedAfterMs: Date.now() - started });
          });
          // Far beyond every deadline: the gateway kept the socket.
          socket.setTimeout(60_000, () => socket.destroy());
        });
      }),
    );
    clearInterval(trickling);
    const served = await legitimate;

    const refused = results.filter((r) => r.status === 429);
    const admitted = results.filter((r) => r.status !== 429);
    printFigures(`${TRICKLES} bodies trickled at 1 byte/s from one address, ulimit -n ${OPEN_FILES}`, [
      ...kinds.map(({ kind }) => {
        const mine = admitted.filter((r) => r.kind === kind);
        const statuses = [...new Set(mine.map((r) => r.status || 'closed'))].join(' ');
        const closed = mine.map((r) => r.closedAfterMs);
        return {
          kind,
          admitted: mine.length,
          answers: statuses,
          p50_closed_ms: percentile(closed, 50),
          max_closed_ms: Math.max(...closed),
        };
      }),
      {
        kind: 'refused (429)',
        admitted: refused.length,
        max_closed_ms: Math.max(...refused.map((r) => r.closedAfterMs)),
      },
      { kind: 'legitimate, from 127.0.0.1', answers: served.join(' ') },
    ]);

    expect(admitted.length).toBeGreaterThan(0);
    expect(admitted.length + refused.length).toBe(TRICKLES);
    // Answered at once and closed (401s), or answered or cut at their deadline: never left open.
    for (const r of admitted) expect(r.closedAfterMs, r.kind).toBeLessThan(4 * TIMEOUT_MS);
    for (const r of refused) expect(r.closedAfterMs).toBeLessThan(4 * TIMEOUT_MS);
    expect(served).toEqual([200, 200, 200]);
  }, 120_000);
});
