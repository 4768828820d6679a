import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { emulatorControl } from './helpers/tools.js';
import { TRIGGER_ENV, type TriggerHarness, triggerHarness } from './helpers/triggers.js';

const ADA = '110000000000000000001';

describe.each(BACKENDS)('triggers on $name', (backend) => {
  let t: TestGateway;
  let h: TriggerHarness;
  let calendar: string;

  beforeAll(async () => {
    t = await startTestGateway(backend, TRIGGER_ENV);
    h = await triggerHarness(() => t);
    ({ connection: calendar } = await sandboxAccount(t, {
      provider: 'google_calendar',
      identifier: 'ada',
      userId: ADA,
    }));
  });

  afterAll(async () => {
    await t?.close();
    await h?.receiver.close();
  });

  const createTrigger = (body: Record<string, unknown>) =>
    h.createTrigger({ connection_name: calendar, identifier: 'ada', ...body });

  const createEvent = async (summary: string) => {
    const res = await executeTool(t, {
      tool_name: 'calendar_create_event',
      identifier: 'ada',
      tool_input: { summary, start_datetime: '2031-03-04T10:00:00Z' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.data as { id: string }).id;
  };

  it('lists the trigger types and suggests the nearest name for a wrong one', async () => {
    const types = await t.api('/api/v1/trigger-types');
    expect(types.status).toBe(200);
    const list = ((await types.json()) as { data: Array<{ name: string; changes: string[] }> }).data;
    expect(list.find((x) => x.name === 'calendar_events')?.changes).toEqual([
      'created',
      'updated',
      'cancelled',
    ]);
    const wrong = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: { connection_name: calendar, identifier: 'ada', trigger_type: 'calendar_event' },
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      code: 'trigger_type_unknown',
      did_you_mean: 'calendar_events',
      errors: [{ path: '/trigger_type' }],
    });
    const one = await t.api('/api/v1/trigger-types/calendar_events');
    expect(await one.json()).toMatchObject({
      provider: 'google_calendar',
      config_schema: { type: 'object' },
    });
  });

  it('checks the config against the type’s schema and the account before subscribing', async () => {
    const bad = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: {
        connection_name: calendar,
        identifier: 'ada',
        trigger_type: 'calendar_events',
        config: { calendar: 'x' },
      },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_input', errors: [{ path: '/config/calendar' }] });
    const changes = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: {
        connection_name: calendar,
        identifier: 'ada',
        trigger_type: 'calendar_events',
        config: { changes: ['deleted'] },
      },
    });
    expect(changes.status).toBe(400);
    const nobody = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: { connection_name: calendar, identifier: 'nobody', trigger_type: 'calendar_events' },
    });
    expect(nobody.status).toBe(404);
    expect(await nobody.json()).toMatchObject({ code: 'account_not_found' });
    const missing = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: {
        connection_name: calendar,
        identifier: 'ada',
        trigger_type: 'calendar_events',
        config: { calendar_id: 'no-such-calendar@example.com' },
      },
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'upstream_not_found' });
    const tooOften = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: {
        connection_name: calendar,
        identifier: 'ada',
        trigger_type: 'calendar_events',
        interval_seconds: 0,
      },
    });
    expect(tooOften.status).toBe(400);
  });

  it('delivers each calendar change once, signed, as created, updated and cancelled', async () => {
    const created = await createTrigger({ trigger_type: 'calendar_events' });
    const id = created.id as string;
    expect(created).toMatchObject({
      trigger_type: 'calendar_events',
      provider: 'google_calendar',
      connection_name: calendar,
      identifier: 'ada',
      state: 'active',
      config: { calendar_id: 'primary' },
    });
    const again = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: {
        connection_name: calendar,
        identifier: 'ada',
        trigger_type: 'calendar_events',
        interval_seconds: 1,
      },
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'trigger_exists', trigger_id: id });

    // The calendar's existing events are the starting point: nothing is reported for them.
    await h.pollsAfterNow(id);
    expect(h.firedFor(id)).toEqual([]);

    const eventId = await createEvent('Trigger me');
    await h.receiver.waitFor(() => h.firedFor(id).length === 1);
    expect(h.firedFor(id)[0]).toMatchObject({
      data: {
        trigger_type: 'calendar_events',
        connection_name: calendar,
        identifier: 'ada',
        change: 'created',
        item_id: eventId,
        item: { id: eventId, summary: 'Trigger me' },
      },
    });
    const update = await executeTool(t, {
      tool_name: 'calendar_update_event',
      identifier: 'ada',
      tool_input: { calendar_id: 'primary', event_id: eventId, summary: 'Triggered' },
    });
    expect(update.status).toBe(200);
    await h.receiver.waitFor(() => h.firedFor(id).length === 2);
    const removal = await executeTool(t, {
      tool_name: 'calendar_delete_event',
      identifier: 'ada',
      tool_input: { event_id: eventId },
    });
    expect(removal.status).toBe(200);
    await h.receiver.waitFor(() => h.firedFor(id).length === 3);
    // More polls, and nothing is delivered twice.
    await h.pollsAfterNow(id);
    const fired = h.firedFor(id);
    expect(fired.map((e) => e.data.change)).toEqual(['created', 'updated', 'cancelled']);
    expect(fired[1]).toMatchObject({ data: { item: { summary: 'Triggered' } } });
    expect(new Set(fired.map((e) => e.id)).size).toBe(3);
    // Readable from the events API as well, under the same ids.
    const listed = await t.api('/api/v1/events?type=trigger.fired&page_size=200');
    const ids = ((await listed.json()) as { data: Array<{ id: string }> }).data.map((e) => e.id);
    for (const e of fired) expect(ids).toContain(e.id);
    const view = await h.trigger(id);
    expect(view).toMatchObject({ state: 'active', consecutive_failures: 0, last_error: null });
    expect(view.last_event_at).toEqual(expect.any(String));
    await h.remove(id);
  });

  it('resyncs after a 410 of the sync token and reports only what changed', async () => {
    const created = await createTrigger({
      trigger_type: 'calendar_events',
      config: { changes: ['created', 'cancelled'] },
    });
    const id = created.id as string;
    await h.pollsAfterNow(id, 1);
    const control = emulatorControl(t);
    // Calendar refuses the token from now on until a full listing gets a new one.
    control.addFault({
      emulator: 'google',
      method: 'GET',
      path: '/calendar/v3/calendars/[^/]+/events$',
      query: 'syncToken=',
      status: 410,
      times: 1000,
      body: {
        error: {
          code: 410,
          message: 'Sync token is no longer valid, a full sync is required.',
          errors: [{ reason: 'fullSyncRequired' }],
        },
      },
    });
    try {
      const eventId = await createEvent('After the 410');
      await h.receiver.waitFor(() => h.firedFor(id).length >= 1);
      await h.pollsAfterNow(id);
      // Every poll is a full listing now; the calendar's other events are not reported again.
      expect(h.firedFor(id).map((e) => [e.data.change, e.data.item_id])).toEqual([['created', eventId]]);
      const removal = await executeTool(t, {
        tool_name: 'calendar_delete_event',
        identifier: 'ada',
        tool_input: { event_id: eventId },
      });
      expect(removal.status).toBe(200);
      // Missing from the full listing: cancelled.
      await h.receiver.waitFor(() => h.firedFor(id).length === 2);
      expect(h.firedFor(id)[1]).toMatchObject({ data: { change: 'cancelled', item_id: eventId } });
    } finally {
      control.clearFaults();
    }
    await h.pollsAfterNow(id);
    expect(h.firedFor(id)).toHaveLength(2);
    expect((await h.trigger(id)).state).toBe('active');
    await h.remove(id);
  });

  it('keeps triggers of other connections out of a limited client’s reach', async () => {
    const id = (await createTrigger({ trigger_type: 'calendar_events', config: { changes: ['cancelled'] } }))
      .id as string;
    const made = await t.api('/api/v1/clients', {
      method: 'POST',
      json: { name: 'other', scopes: ['triggers', 'triggers:read'], connection_names: ['someone-else'] },
    });
    expect(made.status).toBe(201);
    const other = (await made.json()) as { client_id: string; client_secret: string };
    const token = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...other }),
    }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
    expect((await t.api(`/api/v1/triggers/${id}`, { token })).status).toBe(404);
    const list = await t.api('/api/v1/triggers', { token });
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([]);
    const create = await t.api('/api/v1/triggers', {
      method: 'POST',
      token,
      json: { connection_name: calendar, identifier: 'ada', trigger_type: 'calendar_events' },
    });
    expect(create.status).toBe(403);
    const readOnly = await t.api('/api/v1/clients', {
      method: 'POST',
      json: { name: 'runtime', scopes: ['runtime'] },
    });
    const runtime = (await readOnly.json()) as { client_id: string; client_secret: string };
    const runtimeToken = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...runtime }),
    }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
    const refused = await t.api('/api/v1/triggers', { token: runtimeToken });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'insufficient_scope',
      required_scope: 'triggers:read',
    });
    await h.remove(id);
  });
});
