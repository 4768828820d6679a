import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { healthRoutes, type StoreReadiness } from '../src/http/routes/health.js';
import { openDatabase } from '../src/store/db.js';
import { POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { cuttablePostgres } from './helpers/cuttable-postgres.js';

const HEARTBEAT = { intervalMs: 200, timeoutMs: 300 };
const CHANNEL = 'portico_test_heartbeat';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(postgresAvailable)('the PostgreSQL notification listener cut half-open', () => {
  it('is presumed dead within its heartbeat deadline and comes back by itself', async () => {
    const proxy = await cuttablePostgres();
    const schema = uniqueSchema();
    const db = await openDatabase({ url: proxy.url, schema, poolSize: 3, heartbeat: HEARTBEAT });
    // Another replica, whose connections are not cut.
    const other = await openDatabase({ url: POSTGRES_URL, schema, poolSize: 1 });
    const heard: string[] = [];
    let missed = 0;
    try {
      await db.listen(CHANNEL, (payload) => heard.push(payload));
      db.onNotificationsMissed(() => missed++);
      // A pooled connection, idle when the cut comes, and healthy across several heartbeats.
      await db.query('SELECT 1');
      await sleep(4 * HEARTBEAT.intervalMs);
      expect(db.listening()).toBe(true);
      await other.notify(CHANNEL, 'before');
      await expect.poll(() => heard).toContain('before');

      const cutAt = Date.now();
      const restored = proxy.halfOpenCut(2_000);
      await expect.poll(() => db.listening(), { timeout: 2_000, interval: 10 }).toBe(false);
      const detectedAfter = Date.now() - cutAt;
      expect(detectedAfter).toBeLessThanOrEqual(HEARTBEAT.intervalMs + HEARTBEAT.timeoutMs + 100);
      // Notified while the listener is cut off: never heard, hence the missed-notifications reset.
      await other.notify(CHANNEL, 'during');
      await restored;

      const back = Date.now();
      // The pooled connection cut with the listener was closed, so nothing waits on it forever.
      await Promise.race([
        db.query('SELECT 1'),
        sleep(2_000).then(() => {
          throw new Error('a statement hung on a connection cut half-open');
        }),
      ]);
      const firstQueryMs = Date.now() - back;
      await expect.poll(() => db.listening(), { timeout: 5_000, interval: 10 }).toBe(true);
      const listeningAfter = Date.now() - back;
      expect(firstQueryMs).toBeLessThan(1_000);
      expect(listeningAfter).toBeLessThan(2_000);
      expect(missed).toBe(1);
      expect(heard).not.toContain('during');

      // No fault any more: notifications arrive again, and the listener stays confirmed.
      await other.notify(CHANNEL, 'after');
      await expect.poll(() => heard).toContain('after');
      await sleep(4 * HEARTBEAT.intervalMs);
      expect(db.listening()).toBe(true);
      expect(missed).toBe(1);
      console.info(
        `half-open cut: presumed dead after ${detectedAfter} ms; after the network returned, first query ${firstQueryMs} ms, listening again after ${listeningAfter} ms`,
      );
    } finally {
      await other.close();
      await db.close();
      await proxy.close();
    }
  });
});

describe('/readyz with a degraded notification listener', () => {
  const ready = async (store: StoreReadiness) => {
    const app = Fastify();
    await app.register(healthRoutes, { store });
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    await app.close();
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };

  it('stays in rotation (200) and says the listener is degraded', async () => {
    const { status, body } = await ready({ kind: 'postgres', ping: async () => {}, listening: () => false });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'degraded', database: 'postgres', listener: 'degraded' });
  });

  it('is plain ready when the listener is confirmed', async () => {
    const { status, body } = await ready({ kind: 'postgres', ping: async () => {}, listening: () => true });
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ready', database: 'postgres' });
  });
});

describe('heartbeat configuration', () => {
  it('defaults to a 2 s interval and a 3 s deadline, and takes other values in range', () => {
    expect(loadConfig({}).databaseHeartbeat).toEqual({ intervalMs: 2_000, timeoutMs: 3_000 });
    expect(
      loadConfig({ PORTICO_DB_HEARTBEAT_INTERVAL_MS: '500', PORTICO_DB_HEARTBEAT_TIMEOUT_MS: '750' })
        .databaseHeartbeat,
    ).toEqual({ intervalMs: 500, timeoutMs: 750 });
    expect(() => loadConfig({ PORTICO_DB_HEARTBEAT_TIMEOUT_MS: '10' })).toThrow(ConfigError);
  });
});
