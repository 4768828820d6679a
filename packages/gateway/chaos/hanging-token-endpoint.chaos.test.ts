import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../test/helpers/backends.js';
import {
  freshStore,
  GatewayProcess,
  percentile,
  printFigures,
  type StoreKind,
  sleep,
} from './helpers/processes.js';

/**
 * Notion's token endpoint hangs (accepts the request, never answers, then drops it) while 200
 * Notion accounts all need a refresh at once. Meanwhile the REST API, another provider (whose own
 * refresh must go through) and cached proxy calls keep answering: the hanging refreshes hold no
 * database connection and no lock anyone else needs.
 */
const ACCOUNTS = Number(process.env.CHAOS_HANGING_ACCOUNTS ?? 200);
const HANG_MS = 14_000;
const STORES: StoreKind[] = ['pglite', ...(postgresAvailable ? (['postgres'] as const) : [])];

describe.each(STORES)('a hanging token endpoint on %s', (store) => {
  let emulators: RunningEmulators;
  let gw: GatewayProcess;

  beforeAll(async () => {
    emulators = await startEmulators();
    const { env } = await freshStore(store);
    gw = await GatewayProcess.launch({ ...env, PORTICO_SANDBOX_URL: emulators.url });
    await gw.remote.sandboxAccount('google_drive', 'drive', 'warm');
    await gw.remote.sandboxAccount('hubspot', 'crm', 'other');
    for (let i = 0; i < ACCOUNTS; i++) await gw.remote.sandboxAccount('notion', 'notion', `stalled-${i}`);
  }, 240_000);

  afterAll(async () => {
    await gw?.stop();
    await emulators?.close();
  });

  it(`keeps everything else answering while ${ACCOUNTS} refreshes hang`, async () => {
    const bearer = await gw.remote.bearer();
    const call = (path: string, routing?: Record<string, string>) =>
      fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${bearer}`, ...routing } });
    const drive = { connection_name: 'drive', identifier: 'warm' };
    const crm = { connection_name: 'crm', identifier: 'other' };
    expect((await call('/proxy/drive/v3/about?fields=user', drive)).status).toBe(200);

    emulators.control.expireAccessTokens('notion');
    // Accepted and never answered; dropped (unprocessed, so nothing rotates) after the gateway gave up.
    emulators.control.addFault({
      path: '^/notion/v1/oauth/token',
      latencyMs: HANG_MS,
      drop: true,
      times: ACCOUNTS * 2,
    });
    const began = Date.now();
    const stalled = Array.from({ length: ACCOUNTS }, (_, i) =>
      call('/proxy/v1/users/me', { connection_name: 'notion', identifier: `stalled-${i}` }).then(
        async (r) => ({
          status: r.status,
          code: ((await r.json()) as { code?: string }).code,
          ms: Date.now() - began,
        }),
        () => ({ status: 0, code: 'socket', ms: Date.now() - began }),
      ),
    );
    await sleep(300);

    const families: Record<string, () => Promise<Response>> = {
      'GET /api/v1/connections': () => call('/api/v1/connections'),
      'GET /api/v1/connected-accounts': () => call('/api/v1/connected-accounts?page_size=20'),
      'cached proxy (drive)': () => call('/proxy/drive/v3/about?fields=user', drive),
      'other provider, refreshing (hubspot)': () => {
        emulators.control.expireAccessTokens('hubspot');
        return call('/proxy/crm/v3/objects/contacts?limit=1', crm);
      },
    };
    const latencies: Record<string, number[]> = Object.fromEntries(Object.keys(families).map((k) => [k, []]));
    const failures: string[] = [];
    // While the refreshes hang (the gateway gives the provider 10 s).
    while (Date.now() - began < 8_000) {
      for (const [name, run] of Object.entries(families)) {
        const t0 = Date.now();
        const res = await run();
        latencies[name]!.push(Date.now() - t0);
        if (res.status !== 200) failures.push(`${name}: ${res.status} ${await res.text()}`);
      }
    }
    const outcomes = await Promise.all(stalled);
    emulators.control.clearFaults();
    const byOutcome = new Map<string, number>();
    for (const o of outcomes)
      byOutcome.set(`${o.status} ${o.code}`, (byOutcome.get(`${o.status} ${o.code}`) ?? 0) + 1);

    // The hanging provider cost no account: they are all still ACTIVE and refresh once it answers.
    const statuses = new Map<string, number>();
    for (let token: string | null = ''; token !== null; ) {
      const page = (await (
        await call(`/api/v1/connected-accounts?page_size=100${token ? `&page_token=${token}` : ''}`)
      ).json()) as { data: Array<{ status: string }>; next_page_token: string | null };
      for (const a of page.data) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      token = page.next_page_token;
    }
    const recovered = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call('/proxy/v1/users/me', { connection_name: 'notion', identifier: `stalled-${i * 7}` }).then(
          (r) => r.status,
        ),
      ),
    );

    printFigures(`token endpoint hanging while ${ACCOUNTS} accounts refresh on ${store}`, [
      ...Object.entries(latencies).map(([family, ms]) => ({
        store,
        family,
        requests: ms.length,
        p50_ms: percentile(ms, 50),
        p99_ms: percentile(ms, 99),
        max_ms: Math.max(...ms),
      })),
    ]);
    printFigures(`the ${ACCOUNTS} hanging calls on ${store}`, [
      {
        store,
        answers: [...byOutcome].map(([k, n]) => `${n} × ${k}`).join(', '),
        slowest_ms: Math.max(...outcomes.map((o) => o.ms)),
        accounts_by_status: [...statuses].map(([k, n]) => `${k} ${n}`).join(', '),
        recovered_after: `${recovered.filter((s) => s === 200).length}/10`,
      },
    ]);

    expect(failures).toEqual([]);
    // The embedded store runs one statement at a time: the burst of 200 refresh claims queues the
    // database reads of other requests behind it for a moment (cached proxy calls read nothing).
    const bound = store === 'pglite' ? 3000 : 1000;
    for (const [family, ms] of Object.entries(latencies))
      expect(percentile(ms, 99), family).toBeLessThan(bound);
    // Retryable upstream errors, never a 500, and no account written off.
    for (const o of outcomes) expect([503, 504]).toContain(o.status);
    expect(statuses.get('EXPIRED') ?? 0).toBe(0);
    expect(recovered).toEqual(Array(10).fill(200));
  }, 240_000);
});
