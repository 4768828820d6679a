import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Background jobs over accounts never burst: the keep-alive refresh takes a bounded number per run
 * and starts them at a capped rate, so a million accounts going idle together reach neither the
 * provider's token endpoint nor the database all at once.
 */
describe.each(BACKENDS)('keep-alive refresh pacing on $name', (backend) => {
  let t: TestGateway;
  const ids: string[] = [];

  const versions = async () =>
    (
      await t.db.query<{ id: string; token_version: number }>(
        'SELECT id, token_version FROM connected_accounts WHERE id = ANY($1::text[]) ORDER BY id',
        [ids],
      )
    ).map((r) => Number(r.token_version));

  beforeAll(async () => {
    t = await startTestGateway(backend);
    for (let i = 0; i < 5; i++) {
      ids.push((await sandboxAccount(t, { provider: 'google_drive', identifier: `idle-${i}` })).accountId);
    }
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  const makeIdle = () =>
    t.db.query(
      `UPDATE connected_accounts SET last_refreshed_at = now() - interval '400 days' WHERE id = ANY($1::text[])`,
      [ids],
    );

  it('refreshes at most maxPerTick accounts per run, reading them in batches; the next run takes the rest', async () => {
    await makeIdle();
    const before = await versions();
    const refreshed = await t.gateway.accountTokens.refreshIdleAccounts({
      limit: 2,
      maxPerTick: 3,
      perSecond: 100,
    });
    expect(refreshed).toBe(3);
    const after = await versions();
    expect(after.filter((v, i) => v === before[i]! + 1)).toHaveLength(3);
    expect(await t.gateway.accountTokens.refreshIdleAccounts({ maxPerTick: 3, perSecond: 100 })).toBe(2);
    expect(await t.gateway.accountTokens.refreshIdleAccounts({ perSecond: 100 })).toBe(0);
  });

  it('starts at most perSecond refreshes a second, whatever the concurrency', async () => {
    await makeIdle();
    const began = performance.now();
    const refreshed = await t.gateway.accountTokens.refreshIdleAccounts({ perSecond: 5, concurrency: 8 });
    const elapsed = performance.now() - began;
    expect(refreshed).toBe(5);
    // Five starts 200 ms apart: the last one at least 800 ms after the first.
    expect(elapsed).toBeGreaterThanOrEqual(780);
  });
});

describe.each(BACKENDS)('webhook queue pacing on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('looks at the queue at most every 20 ms however often it is woken (a burst of events)', async () => {
    const claims = /FOR UPDATE OF d SKIP LOCKED/;
    // Let the start-up looks settle.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = t.queries(claims);
    const began = performance.now();
    // Every committed event wakes the worker: a thousand of them over about half a second.
    for (let i = 0; i < 1000; i++) {
      t.gateway.deliveries.wake();
      if (i % 2 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    while (performance.now() - began < 500) await new Promise((resolve) => setTimeout(resolve, 10));
    const elapsed = performance.now() - began;
    // Wakes that came during the last look share one more.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const looks = t.queries(claims) - before;
    expect(looks).toBeGreaterThan(0);
    expect(looks).toBeLessThanOrEqual(Math.ceil((elapsed + 50) / 20) + 2);
  });
});
