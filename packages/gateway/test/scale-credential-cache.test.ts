import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const METRICS_TOKEN = 'scale-metrics-token-0123456789abcdef';
/**
 * A read of an end user's account: what a cache miss costs. Narrower than REQUEST_PATH_READS, whose
 * transactions a background job (batched execution and last-use writes) may also run meanwhile.
 */
const ACCOUNT_READS = /^\s*SELECT[\s\S]*\bconnected_accounts\b/;

describe.each(BACKENDS)('the bounded credential cache on $name', (backend) => {
  let t: TestGateway;
  let connection: string;

  const metric = async (name: string) => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const line = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'm').exec(await res.text());
    return Number(line?.[2] ?? Number.NaN);
  };
  const call = async (identifier: string) => {
    const res = await executeTool(t, {
      tool_name: 'notes_user_list',
      identifier,
      connection_name: connection,
    });
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    t = await startTestGateway(backend, {
      PORTICO_CREDENTIAL_CACHE_SIZE: '2',
      PORTICO_METRICS_TOKEN: METRICS_TOKEN,
    });
    for (const identifier of ['lru-a', 'lru-b', 'lru-c']) {
      ({ connection } = await sandboxAccount(t, { provider: 'notion', identifier }));
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('holds at most its size, evicting the least recently used, and counts it in /metrics', async () => {
    const evictedBefore = await metric('portico_credential_cache_evictions_total');
    for (const identifier of ['lru-a', 'lru-b', 'lru-c']) await call(identifier);
    expect(await metric('portico_credential_cache_entries')).toBe(2);
    expect(await metric('portico_credential_cache_evictions_total')).toBeGreaterThan(evictedBefore);
  });

  it('serves the accounts it holds without a database read, and reads an evicted one again', async () => {
    for (const identifier of ['lru-a', 'lru-b', 'lru-c']) await call(identifier);
    // b and c are the two most recently used; a use of c keeps it, and b stays the older one.
    const before = t.queries(ACCOUNT_READS);
    for (let i = 0; i < 5; i++) {
      await call('lru-b');
      await call('lru-c');
    }
    expect(t.queries(ACCOUNT_READS)).toBe(before);
    const evicted = await metric('portico_credential_cache_evictions_total');
    await call('lru-a');
    expect(t.queries(ACCOUNT_READS)).toBeGreaterThan(before);
    expect(await metric('portico_credential_cache_evictions_total')).toBe(evicted + 1);
    expect(await metric('portico_credential_cache_entries')).toBe(2);
    // a pushed out b (the least recently used), not c.
    const beforeC = t.queries(ACCOUNT_READS);
    await call('lru-c');
    expect(t.queries(ACCOUNT_READS)).toBe(beforeC);
    await call('lru-b');
    expect(t.queries(ACCOUNT_READS)).toBeGreaterThan(beforeC);
  });
});
