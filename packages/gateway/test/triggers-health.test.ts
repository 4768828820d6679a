import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { emulatorControl } from './helpers/tools.js';
import { TRIGGER_ENV, type TriggerHarness, triggerHarness, until } from './helpers/triggers.js';

const ADA = '110000000000000000001';

describe.each(BACKENDS)('trigger health on $name', (backend) => {
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

  it('goes degraded, then failing, on failing polls, and back to active, each with its event', async () => {
    const id = (await createTrigger({ trigger_type: 'calendar_events', config: { changes: ['updated'] } }))
      .id as string;
    const control = emulatorControl(t);
    control.addFault({
      emulator: 'google',
      method: 'GET',
      path: '/calendar/v3/calendars/[^/]+/events$',
      query: 'syncToken=',
      status: 500,
      times: 3,
    });
    await until(
      'failing',
      () => h.trigger(id),
      (v) => v.state === 'failing',
    );
    const failing = await h.trigger(id);
    expect(failing).toMatchObject({ consecutive_failures: 3, last_error: expect.stringContaining('500') });
    await h.receiver.waitFor(() => h.statesOf(id).includes('active'), 20_000);
    expect(h.statesOf(id)).toEqual(['degraded', 'failing', 'active']);
    expect((await h.trigger(id)).consecutive_failures).toBe(0);
    await h.remove(id);
  });

  it('pauses and resumes on request, and reports nothing while paused', async () => {
    const id = (await createTrigger({ trigger_type: 'calendar_events', config: { changes: ['created'] } }))
      .id as string;
    const paused = await t.api(`/api/v1/triggers/${id}`, { method: 'PATCH', json: { paused: true } });
    expect(await paused.json()).toMatchObject({
      state: 'paused',
      pause_reason: 'requested',
      next_poll_at: null,
    });
    const eventId = await createEvent('While paused');
    await new Promise((r) => setTimeout(r, 1500));
    expect(h.firedFor(id)).toEqual([]);
    const resumed = await t.api(`/api/v1/triggers/${id}`, { method: 'PATCH', json: { paused: false } });
    expect(await resumed.json()).toMatchObject({ state: 'active', pause_reason: null });
    // The change made while paused is not lost: the cursor had stayed where it was.
    await h.receiver.waitFor(() => h.firedFor(id).length === 1);
    expect(h.firedFor(id)[0]).toMatchObject({ data: { change: 'created', item_id: eventId } });
    await h.receiver.waitFor(() => h.statesOf(id).length === 2);
    expect(h.statesOf(id)).toEqual(['paused', 'active']);
    await h.remove(id);
  });

  it('pauses when the account expires and resumes when it is authorized again, with events', async () => {
    const id = (await createTrigger({ trigger_type: 'calendar_events', config: { changes: ['created'] } }))
      .id as string;
    await h.pollsAfterNow(id, 1);
    const control = emulatorControl(t);
    control.revokeGrants('google', { userId: ADA });
    control.expireAccessTokens('google', { userId: ADA });
    const paused = await until(
      'paused',
      () => h.trigger(id),
      (v) => v.state === 'paused',
    );
    expect(paused).toMatchObject({ pause_reason: 'account_not_active', last_error: expect.any(String) });
    await h.receiver.waitFor(() => h.statesOf(id).includes('paused'));
    const event = h.delivered().find((e) => e.type === 'trigger.state_changed' && e.data.id === id)!;
    expect(event.data).toMatchObject({
      previous_state: 'active',
      state: 'paused',
      reason: expect.stringContaining('EXPIRED'),
    });
    // Authorized again: the trigger resumes on its own, from where it stood.
    await sandboxAccount(t, {
      provider: 'google_calendar',
      identifier: 'ada',
      userId: ADA,
      connection: calendar,
    });
    await until(
      'active',
      () => h.trigger(id),
      (v) => v.state === 'active',
    );
    await h.receiver.waitFor(() => h.statesOf(id).includes('active'));
    expect(h.statesOf(id)).toEqual(['paused', 'active']);
    await h.remove(id);
  });
});
