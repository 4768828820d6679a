import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, GatewayProcess, printFigures } from './helpers/processes.js';

/**
 * Clients that stall on every route family of a gateway process: one stops in the middle of its
 * headers, one sends its headers and part of a body announced longer. Either way the gateway must
 * close the socket once the configured timeout has passed (answering 408, or 504 for a proxied
 * body), instead of holding it for minutes.
 */
const TIMEOUT_MS = 1000;
const DEADLINE_MS = 4 * TIMEOUT_MS;

describe('slow clients on every route family', () => {
  let gw: GatewayProcess;
  const families: Array<{ family: string; method: string; path: string; headers?: string }> = [];

  beforeAll(async () => {
    const { env } = await freshStore('pglite');
    gw = await GatewayProcess.launch({
      ...env,
      PORTICO_HEADERS_TIMEOUT_MS: String(TIMEOUT_MS),
      PORTICO_BODY_TIMEOUT_MS: String(TIMEOUT_MS),
      PORTICO_UPSTREAM_IDLE_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    const connection = (await (
      await gw.remote.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'notes', provider: 'notion', sandbox: true },
      })
    ).json()) as { id: string };
    await gw.remote.sandboxAccount('notion', 'notes', 'slow');
    const { link } = (await (
      await gw.remote.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'notes', identifier: 'slow-2' },
      })
    ).json()) as { link: string };
    const auth = `Authorization: Bearer ${await gw.remote.bearer()}\r\n`;
    families.push(
      { family: 'token', method: 'POST', path: '/oauth/token' },
      { family: 'api', method: 'POST', path: '/api/v1/connections', headers: auth },
      { family: 'tools', method: 'POST', path: '/api/v1/tools/execute', headers: auth },
      {
        family: 'proxy',
        method: 'POST',
        path: '/proxy/v1/search',
        headers: `${auth}connection_name: notes\r\nidentifier: slow\r\n`,
      },
      { family: 'hosted flow', method: 'GET', path: new URL(link).pathname },
      { family: 'callback', method: 'GET', path: `/sso/v1/oauth/${connection.id}/callback?code=x&state=y` },
      { family: 'health', method: 'GET', path: '/readyz' },
      { family: 'openapi', method: 'GET', path: '/openapi.json' },
      { family: 'sandbox', method: 'POST', path: '/sandbox/notion/v1/oauth/token' },
    );
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
  });

  /** Sends `head` and nothing more; what came back and when the gateway closed the socket. */
  function stall(head: string): Promise<{ answer: string; closedAfterMs: number }> {
    const started = Date.now();
    return new Promise((resolve) => {
      const socket = net.connect(gw.port, '127.0.0.1', () => socket.write(head));
      let answer = '';
      socket.on('data', (d) => (answer += d));
      socket.on('error', () => {});
      socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
      // Far beyond every configured timeout: the gateway kept the socket.
      socket.setTimeout(30_000, () => socket.destroy());
    });
  }

  it('closes every stalled socket within a few times the configured timeout', async () => {
    const cases = families.flatMap(({ family, method, path, headers = '' }) => [
      {
        family,
        kind: 'slow headers',
        head: `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}X-Still-Typing: `,
      },
      {
        family,
        kind: 'slow body',
        head:
          `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Content-Type: application/json\r\n` +
          'Content-Length: 200\r\n\r\n{"name":',
      },
    ]);
    // All at once, as a slowloris would: one stalled socket must not delay another's timeout.
    const results = await Promise.all(cases.map(async (c) => ({ ...c, ...(await stall(c.head)) })));
    printFigures(`stalled clients, timeouts set to ${TIMEOUT_MS} ms`, [
      ...results.map((r) => ({
        family: r.family,
        client: r.kind,
        answer: r.answer.split('\r\n')[0] || '(none)',
        closed_after_ms: r.closedAfterMs,
      })),
    ]);
    for (const r of results) {
      expect(r.closedAfterMs, `${r.family}, ${r.kind}`).toBeLessThan(DEADLINE_MS);
      // Whatever was answered (a route that needs no body may answer at once), nothing is a 5xx but
      // the proxy's timeout.
      const status = Number(r.answer.split(' ')[1] ?? 0);
      if (status >= 500) expect(`${r.family}, ${r.kind}: ${status}`).toMatch(/proxy, slow body: 504/);
    }
  }, 60_000);
});
