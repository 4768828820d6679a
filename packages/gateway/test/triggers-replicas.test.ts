import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMasterKey } from '../src/secrets/keyring.js';
import { openDatabase } from '../src/store/db.js';
import { POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { freePort } from './helpers/gateway.js';
import { type RunningGateway, startCli } from './helpers/process.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { RemoteGateway } from './helpers/remote.js';
import { TRIGGER_ENV, until } from './helpers/triggers.js';

// Triggers in gateway processes that are stopped, killed (kill -9) and started again, and in two
// replicas on one PostgreSQL: the emulators run here, outside every gateway, so the calendar the
// triggers watch outlives them. What is counted: each change reaches the events once, no more.

const ADA = '110000000000000000001';

interface FiredEvent {
  id: string;
  data: { trigger_id: string; change: string; item_id: string };
}

const stores: Array<{ name: string; env: () => Promise<Record<string, string>> }> = [
  {
    name: 'the embedded store',
    env: async () => ({ PORTICO_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'portico-triggers-')) }),
  },
  ...(postgresAvailable
    ? [
        {
          name: 'PostgreSQL',
          env: async () => ({ DATABASE_URL: await freshSchema(), PORTICO_MASTER_KEY: generateMasterKey() }),
        },
      ]
    : []),
];

/** A database URL whose search path is a new, empty schema. */
async function freshSchema(schema = uniqueSchema()): Promise<string> {
  await (await openDatabase({ url: POSTGRES_URL, schema })).close();
  return `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

let emulators: RunningEmulators;
let receiver: Receiver;
const running: RunningGateway[] = [];

beforeAll(async () => {
  emulators = await startEmulators();
  receiver = await startReceiver();
});

afterAll(async () => {
  for (const g of running) g.child.kill('SIGKILL');
  await Promise.all(running.map((g) => g.exited));
  await receiver?.close();
  await emulators?.close();
});

async function start(port: number, env: Record<string, string>): Promise<RunningGateway> {
  const g = await startCli({
    ...TRIGGER_ENV,
    // A killed replica's subscriptions are taken over two seconds after its last claim.
    PORTICO_TRIGGER_LEASE_MS: '2000',
    // And its webhook deliveries six seconds after (the attempt's timeout and a margin).
    PORTICO_WEBHOOK_TIMEOUT_MS: '1000',
    PORTICO_SANDBOX_URL: emulators.url,
    PORTICO_LOG_LEVEL: 'info',
    PORTICO_PORT: String(port),
    PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ...env,
  });
  running.push(g);
  return g;
}

/** An event in Ada's primary calendar, made at the emulator (whether or not a gateway runs). */
async function calendarEvent(summary: string): Promise<string> {
  const { access_token } = emulators.control.issueToken('google', {
    userId: ADA,
    scopes: ['https://www.googleapis.com/auth/calendar'],
  });
  const res = await fetch(`${emulators.urls.google}/calendar/v3/calendars/primary/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      summary,
      start: { dateTime: '2031-05-06T10:00:00Z' },
      end: { dateTime: '2031-05-06T11:00:00Z' },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

/** The trigger.fired events the gateway recorded (the events API, every page). */
async function firedEvents(gw: RemoteGateway): Promise<FiredEvent[]> {
  const out: FiredEvent[] = [];
  let after: string | null = null;
  for (;;) {
    const res = await gw.api(
      `/api/v1/events?type=trigger.fired&page_size=200${after ? `&after=${after}` : ''}`,
    );
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: FiredEvent[]; has_more: boolean; next_after: string | null };
    out.push(...page.data);
    if (!page.has_more) return out;
    after = page.next_after;
  }
}

async function setUp(gw: RemoteGateway, identifiers: string[]): Promise<string[]> {
  const hook = await gw.api('/api/v1/webhooks', {
    method: 'POST',
    json: { url: receiver.url, events: ['trigger.fired'] },
  });
  expect(hook.status).toBe(201);
  const ids: string[] = [];
  for (const identifier of identifiers) {
    await gw.sandboxAccount('google_calendar', 'calendar', identifier);
    const res = await gw.api('/api/v1/triggers', {
      method: 'POST',
      json: { connection_name: 'calendar', identifier, trigger_type: 'calendar_events', interval_seconds: 1 },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    ids.push(((await res.json()) as { id: string }).id);
  }
  return ids;
}

/** Each (trigger, event) pair appears once among the recorded events, for exactly these events. */
function expectOnceEach(fired: FiredEvent[], triggers: string[], eventIds: string[]) {
  const pairs = fired.map((e) => `${e.data.trigger_id} ${e.data.item_id} ${e.data.change}`);
  expect(new Set(pairs).size).toBe(pairs.length);
  const expected = triggers.flatMap((t) => eventIds.map((e) => `${t} ${e} created`)).sort();
  expect(pairs.sort()).toEqual(expected);
}

describe.each(stores)('triggers across restarts on $name', (store) => {
  it('loses and duplicates nothing across a stop, changes made while down, and a kill -9', async () => {
    const env = await store.env();
    const port = await freePort();
    const first = await start(port, env);
    const gw = RemoteGateway.fromStdout(first.url, first.stdout());
    const [triggerId] = await setUp(gw, [`restart-${store.name.length}`]);
    const made = [await calendarEvent('before the stop')];
    await until(
      'the first change',
      () => firedEvents(gw),
      (f) => f.length === 1,
    );

    first.child.kill('SIGTERM');
    await first.exited;
    made.push(await calendarEvent('while stopped'));
    const second = await start(port, env);
    await until(
      'the change made while down',
      () => firedEvents(gw),
      (f) => f.length === 2,
    );

    // Killed while its polls wait on a slow Calendar: the claim dies with it and runs out.
    emulators.control.addFault({
      emulator: 'google',
      path: '/calendar/v3/calendars/[^/]+/events$',
      query: 'syncToken=',
      latencyMs: 1500,
      times: 2,
    });
    made.push(await calendarEvent('before the kill'));
    await new Promise((r) => setTimeout(r, 700));
    second.child.kill('SIGKILL');
    await second.exited;
    made.push(await calendarEvent('after the kill'));
    await start(port, env);
    await until(
      'every change',
      () => firedEvents(gw),
      (f) => f.length >= made.length,
      30_000,
    );
    // A few more polls: nothing more arrives.
    await new Promise((r) => setTimeout(r, 2500));
    expectOnceEach(await firedEvents(gw), [triggerId!], made);
    emulators.control.clearFaults();
  }, 120_000);
});

describe.runIf(postgresAvailable)('triggers on two replicas of one PostgreSQL', () => {
  it('shares the subscriptions and takes over a killed replica’s, each change once', async () => {
    const env = { DATABASE_URL: await freshSchema(), PORTICO_MASTER_KEY: generateMasterKey() };
    const a = await start(await freePort(), env);
    const gw = RemoteGateway.fromStdout(a.url, a.stdout());
    const triggers = await setUp(
      gw,
      ['r1', 'r2', 'r3', 'r4'].map((id) => `${id}-replicas`),
    );
    const b = await start(await freePort(), env);
    const onB = gw.withUrl(b.url);
    emulators.control.addFault({
      emulator: 'google',
      path: '/calendar/v3/calendars/[^/]+/events$',
      query: 'syncToken=',
      latencyMs: 600,
      times: 1000,
    });
    try {
      const made = [await calendarEvent('one'), await calendarEvent('two')];
      await new Promise((r) => setTimeout(r, 900));
      a.child.kill('SIGKILL');
      await a.exited;
      made.push(await calendarEvent('three'));
      await until(
        'every change on every trigger',
        () => firedEvents(onB),
        (f) => f.length >= triggers.length * made.length,
        40_000,
      );
      await new Promise((r) => setTimeout(r, 2500));
      expectOnceEach(await firedEvents(onB), triggers, made);
      // Every one delivered, the killed replica's claimed deliveries too once their claims ran out.
      const recorded = (await firedEvents(onB)).map((e) => e.id);
      const ids = () => new Set(receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id));
      await receiver.waitFor(() => recorded.every((id) => ids().has(id)), 20_000);
    } finally {
      emulators.control.clearFaults();
    }
  }, 150_000);
});
