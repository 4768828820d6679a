import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/db.js';
import { BACKENDS, type Backend, POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { emulatorControl } from './helpers/tools.js';

const ADA = 'ada00000-0000-4000-8000-000000000001';

// On PostgreSQL a pool of one connection: a refresh that held it through the provider call would
// stall every other request. (The embedded store runs one statement at a time anyway.)
const SINGLE_CONNECTION: Backend[] = BACKENDS.map((backend) =>
  backend.name === 'postgres'
    ? { ...backend, open: () => openDatabase({ url: backend.url!, schema: uniqueSchema(), poolSize: 1 }) }
    : backend,
);

describe.each(SINGLE_CONNECTION)('refresh on $name', (backend) => {
  let t: TestGateway;
  let accountId: string;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    ({ accountId } = await sandboxAccount(t, { provider: 'notion', identifier: 'lease', userId: ADA }));
  });

  afterAll(async () => {
    await t?.close();
  });

  const dueForRefresh = async () => {
    await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [accountId]);
    await t.gateway.accountTokens.invalidate(accountId);
  };

  it('holds no database connection while the provider answers slowly', async () => {
    await dueForRefresh();
    emulatorControl(t).addFault({ emulator: 'notion', path: '/v1/oauth/token', latencyMs: 2500 });
    const refreshing = t.gateway.accountTokens.forAccount(accountId);
    await new Promise((r) => setTimeout(r, 300));
    const began = Date.now();
    const list = await t.api('/api/v1/connections');
    const took = Date.now() - began;
    expect(list.status).toBe(200);
    expect(took).toBeLessThan(1500);
    const credential = await refreshing;
    expect(credential.expiresAt === null || credential.expiresAt > Date.now()).toBe(true);
    const [row] = await t.db.query<{ refresh_lease_owner: string | null; status: string }>(
      'SELECT refresh_lease_owner, status FROM connected_accounts WHERE id = $1',
      [accountId],
    );
    expect(row).toEqual({ refresh_lease_owner: null, status: 'ACTIVE' });
  });

  it('takes over the lease of a claimant that died, once it runs out', async () => {
    await dueForRefresh();
    await t.db.query(
      `UPDATE connected_accounts SET refresh_lease_owner = 'proc_dead', refresh_lease_until = now() + interval '1500 milliseconds'
       WHERE id = $1`,
      [accountId],
    );
    const began = Date.now();
    const before = await t.db.query<{ token_version: number }>(
      'SELECT token_version FROM connected_accounts WHERE id = $1',
      [accountId],
    );
    const credential = await t.gateway.accountTokens.forAccount(accountId);
    expect(Date.now() - began).toBeGreaterThanOrEqual(1000);
    expect(credential.version).toBe(before[0]!.token_version + 1);
  });
});

describe.each(BACKENDS)('refresh tokens kept alive on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('refreshes accounts whose provider would expire an unused refresh token, and no others', async () => {
    const accounts: Record<string, string> = {};
    for (const provider of ['google_drive', 'sharepoint', 'notion', 'hubspot']) {
      accounts[provider] = (await sandboxAccount(t, { provider, identifier: 'idle' })).accountId;
    }
    const state = async (id: string) =>
      (
        await t.db.query<{ token_version: number; last_refreshed_at: Date | null }>(
          'SELECT token_version, last_refreshed_at FROM connected_accounts WHERE id = $1',
          [id],
        )
      )[0]!;
    // Google and Microsoft accounts idle just short of the keep-alive threshold stay as they are.
    await t.db.query(`UPDATE connected_accounts SET last_refreshed_at = now() - interval '60 days'`);
    expect(await t.gateway.accountTokens.refreshIdleAccounts()).toBe(0);
    // Idle long enough (Microsoft: 90 days less a fortnight; Google: 180 less a fortnight).
    await t.db.query(`UPDATE connected_accounts SET last_refreshed_at = now() - interval '170 days'`);
    const before = Object.fromEntries(
      await Promise.all(Object.entries(accounts).map(async ([p, id]) => [p, await state(id)] as const)),
    );
    expect(await t.gateway.accountTokens.refreshIdleAccounts()).toBe(2);
    for (const [provider, id] of Object.entries(accounts)) {
      const after = await state(id);
      const kept = provider === 'google_drive' || provider === 'sharepoint';
      expect(after.token_version, provider).toBe(before[provider]!.token_version + (kept ? 1 : 0));
      if (kept) expect(after.last_refreshed_at!.getTime()).toBeGreaterThan(Date.now() - 60_000);
    }
  });
});

describe.runIf(postgresAvailable)('a hanging token endpoint while many accounts need a refresh', () => {
  let t: TestGateway;
  const ids: string[] = [];

  beforeAll(async () => {
    // A small pool, as a replica under load would have: refreshes must not be able to starve it.
    t = await startTestGateway({
      name: 'postgres',
      open: () => openDatabase({ url: POSTGRES_URL, schema: uniqueSchema(), poolSize: 4 }),
    });
    await sandboxAccount(t, { provider: 'google_drive', identifier: 'warm' });
    for (let i = 0; i < 40; i++) {
      ids.push((await sandboxAccount(t, { provider: 'notion', identifier: `stalled-${i}` })).accountId);
    }
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  it('keeps the API and cached proxy calls answering; p99 under a second', async () => {
    const warm = { connection_name: 'sandbox-google-drive', identifier: 'warm' };
    expect((await t.api('/proxy/drive/v3/about?fields=user', { headers: warm })).status).toBe(200);
    await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = ANY($1)`, [ids]);
    for (const id of ids) await t.gateway.accountTokens.invalidate(id);
    emulatorControl(t).addFault({
      emulator: 'notion',
      path: '/v1/oauth/token',
      latencyMs: 4000,
      times: ids.length,
    });
    const refreshes = ids.map((id) =>
      t.gateway.accountTokens.forAccount(id).then(
        () => true,
        () => false,
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    const latencies: number[] = [];
    for (let i = 0; i < 30; i++) {
      for (const call of [
        () => t.api('/api/v1/connections'),
        () => t.api('/proxy/drive/v3/about?fields=user', { headers: warm }),
      ]) {
        const began = Date.now();
        expect((await call()).status).toBe(200);
        latencies.push(Date.now() - began);
      }
    }
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    expect(p99).toBeLessThan(1000);
    expect((await Promise.all(refreshes)).every(Boolean)).toBe(true);
  }, 60_000);
});
