import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMasterKey } from '../src/secrets/keyring.js';
import { openDatabase } from '../src/store/db.js';
import { POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { freePort } from './helpers/gateway.js';
import { type RunningGateway, startCli } from './helpers/process.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { RemoteGateway } from './helpers/remote.js';

const WEBHOOK_ENV = {
  PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true',
  PORTICO_WEBHOOK_TIMEOUT_MS: '1000',
  PORTICO_WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms',
};

/** Starts a gateway process on `port` (so a restart keeps its URL). */
async function start(port: number, env: Record<string, string>): Promise<RunningGateway> {
  return startCli({
    ...WEBHOOK_ENV,
    PORTICO_LOG_LEVEL: 'info',
    PORTICO_PORT: String(port),
    PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ...env,
  });
}

async function killHard(g: RunningGateway): Promise<void> {
  g.child.kill('SIGKILL');
  await g.exited;
}

/** A database URL whose search path is a new, empty schema. */
async function freshSchema(schema = uniqueSchema()): Promise<string> {
  await (await openDatabase({ url: POSTGRES_URL, schema })).close();
  return `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

const stores: Array<{ name: string; env: () => Promise<Record<string, string>> }> = [
  {
    name: 'the embedded store',
    env: async () => ({ PORTICO_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'portico-webhooks-')) }),
  },
  ...(postgresAvailable
    ? [
        {
          name: 'PostgreSQL',
          env: async () => ({
            DATABASE_URL: await freshSchema(),
            PORTICO_MASTER_KEY: generateMasterKey(),
          }),
        },
      ]
    : []),
];

describe.each(stores)('webhook delivery across a kill -9 on $name', (store) => {
  const running: RunningGateway[] = [];
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const g of running) g.child.kill('SIGKILL');
    await Promise.all(running.map((g) => g.exited));
    await receiver?.close();
  });

  it('delivers an event whose gateway was killed mid-delivery once it is back', async () => {
    const env = await store.env();
    const port = await freePort();
    const first = await start(port, env);
    running.push(first);
    const gw = RemoteGateway.fromStdout(first.url, first.stdout());
    const created = await gw.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: receiver.url, events: ['connection.created'] },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // The first attempt reaches the receiver, which holds it; the gateway dies while it waits.
    receiver.answer = (i) => (i === 0 ? 'hang' : 204);
    const change = await gw.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'survivor', provider: 'notion', sandbox: true },
    });
    expect(change.status).toBe(201);
    await receiver.waitFor((r) => r.length === 1);
    await killHard(first);

    const second = await start(port, env);
    running.push(second);
    // The dead process's claim runs out (attempt timeout + 5 s), then the delivery is sent again.
    await receiver.waitFor((r) => r.length === 2, 20_000);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(JSON.parse(receiver.received[1]!.body)).toMatchObject({
      type: 'connection.created',
      data: { name: 'survivor' },
    });
    // The receiver has answered; the gateway records the outcome once the answer is back with it.
    const deliveries = async () =>
      (
        (await (await gw.withUrl(second.url).api(`/api/v1/webhooks/${id}/deliveries`)).json()) as {
          data: Array<{ status_code: number; delivery_status: string }>;
        }
      ).data;
    let log = await deliveries();
    for (let i = 0; i < 50 && log[0]?.delivery_status !== 'delivered'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      log = await deliveries();
    }
    expect(log[0]).toMatchObject({ status_code: 204, delivery_status: 'delivered' });
    await killHard(second);
  }, 90_000);
});

describe.skipIf(!postgresAvailable)('two gateway processes on one PostgreSQL', () => {
  const running: RunningGateway[] = [];
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const g of running) g.child.kill('SIGTERM');
    await Promise.all(running.map((g) => g.exited));
    await receiver?.close();
  });

  it('share 500 events and deliver each exactly once', async () => {
    const schema = uniqueSchema();
    const env = {
      DATABASE_URL: await freshSchema(schema),
      PORTICO_MASTER_KEY: generateMasterKey(),
    };
    const portA = await freePort();
    const a = await start(portA, env);
    running.push(a);
    const gwA = RemoteGateway.fromStdout(a.url, a.stdout());
    const b = await start(await freePort(), { ...env, PORTICO_PUBLIC_URL: `http://127.0.0.1:${portA}` });
    running.push(b);
    const gwB = gwA.withUrl(b.url);
    const created = await gwA.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: receiver.url, events: ['connection.created'] },
    });
    expect(created.status).toBe(201);

    // 500 state changes, half through each replica, 16 at a time.
    const names = Array.from({ length: 500 }, (_, i) => `c-${i}`);
    const queue = [...names];
    await Promise.all(
      Array.from({ length: 16 }, async (_, worker) => {
        for (let name = queue.shift(); name; name = queue.shift()) {
          const res = await (worker % 2 ? gwA : gwB).api('/api/v1/connections', {
            method: 'POST',
            json: { name, provider: 'notion', sandbox: true },
          });
          expect(res.status).toBe(201);
        }
      }),
    );
    await receiver.waitFor((r) => r.length >= 500, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids.length).toBe(500);
    expect(new Set(ids).size).toBe(500);
    expect(
      new Set(receiver.received.map((r) => (JSON.parse(r.body) as { data: { name: string } }).data.name)),
    ).toEqual(new Set(names));
    const db = await openDatabase({ url: POSTGRES_URL, schema });
    try {
      const senders = await db.query<{ claimed_by: string; n: number }>(
        "SELECT claimed_by, count(*)::integer AS n FROM webhook_deliveries WHERE status = 'delivered' GROUP BY claimed_by",
      );
      // Both replicas took part.
      expect(senders.length).toBe(2);
      expect(senders.reduce((sum, s) => sum + s.n, 0)).toBe(500);
      const attempts = await db.query<{ n: number }>('SELECT count(*)::integer AS n FROM webhook_attempts');
      expect(attempts[0]!.n).toBe(500);
    } finally {
      await db.close();
    }
  }, 120_000);
});
