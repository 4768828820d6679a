import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import type { CalendarState } from './helpers/calendar-state.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  expectProviderTools,
  expectRateLimited,
  expectRevokedAccountNotActive,
  expectUpstreamError,
  google403RateLimit,
  google429,
  notFound,
  toolHarness,
} from './helpers/tools.js';

const ADA = '110000000000000000001';
const ADA_EMAIL = 'ada.lovelace@example.com';
const ALAN = '110000000000000000003';
const IDENTIFIER = 'cal-user';

let t: TestGateway;

const { control, run, expectInvalid } = toolHarness({ gateway: () => t, identifier: IDENTIFIER });

function calendarOf(userId = ADA) {
  return control().state<CalendarState>('google').byUser.get(userId)!.calendar;
}

/** The stored event as the emulator keeps it (primary calendar by default). */
function storedEvent(id: string, calendarId = ADA_EMAIL): Record<string, unknown> | undefined {
  return calendarOf().events.get(calendarId)?.get(id)?.resource;
}

beforeAll(async () => {
  t = await startTestGateway(BACKENDS[0]!);
  await sandboxAccount(t, { provider: 'google_calendar', identifier: IDENTIFIER, userId: ADA });
});

afterAll(async () => {
  await t?.close();
});

afterEach(() => {
  control().clearFaults();
});

describe('catalog', () => {
  it('lists the six calendar_ tools with their schemas', async () => {
    await expectProviderTools(t, 'google_calendar', [
      'calendar_create_event',
      'calendar_delete_event',
      'calendar_get_event_by_id',
      'calendar_list_calendars',
      'calendar_list_events',
      'calendar_update_event',
    ]);
  });
});

describe('calendar_list_calendars', () => {
  it('lists the calendars with their access roles and pages through them', async () => {
    const res = await run('calendar_list_calendars', {});
    expect(res.status).toBe(200);
    const data = res.body.data as { results: Array<Record<string, unknown>>; has_more: boolean };
    expect(data.has_more).toBe(false);
    expect(data.results.map((c) => c.id)).toContain(ADA_EMAIL);
    expect(data.results.find((c) => c.primary === true)?.id).toBe(ADA_EMAIL);
    expect(data.results).toHaveLength(calendarOf().calendars.size);

    const writable = await run('calendar_list_calendars', { min_access_role: 'writer' });
    const roles = (writable.body.data as { results: Array<{ accessRole: string }> }).results.map(
      (c) => c.accessRole,
    );
    expect(roles.length).toBeGreaterThan(0);
    expect(roles.every((r) => r === 'owner' || r === 'writer')).toBe(true);

    const first = await run('calendar_list_calendars', { max_results: 2 });
    const page1 = first.body.data as {
      results: Array<{ id: string }>;
      has_more: boolean;
      next_page: { page_token: string };
    };
    expect(page1.results).toHaveLength(2);
    expect(page1.has_more).toBe(true);
    const second = await run('calendar_list_calendars', { max_results: 2, ...page1.next_page });
    const page2 = second.body.data as { results: Array<{ id: string }>; has_more: boolean; next_page: null };
    expect(page2.results).toHaveLength(1);
    expect(page2.has_more).toBe(false);
    expect(page2.next_page).toBeNull();
  });

  it('rejects bad parameters before calling Google', async () => {
    await expectInvalid('calendar_list_calendars', { max_results: 0 }, '/tool_input/max_results');
    await expectInvalid('calendar_list_calendars', { max_results: '10' }, '/tool_input/max_results');
    await expectInvalid(
      'calendar_list_calendars',
      { min_access_role: 'admin' },
      '/tool_input/min_access_role',
    );
    await expectInvalid('calendar_list_calendars', { calendar: 'x' }, '/tool_input/calendar');
  });
});

describe('calendar_create_event', () => {
  it('creates an event with attendees, recurrence, a Meet link and guest permissions', async () => {
    const res = await run('calendar_create_event', {
      summary: 'Design review',
      description: 'Walk through the engine design.',
      location: 'Room 1',
      start_datetime: '2030-06-03T10:00:00',
      timezone: 'Europe/Paris',
      event_duration_minutes: 45,
      attendees: ['grace.hopper@example.com', 'alan.turing@example.com'],
      recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4'],
      create_meeting_room: true,
      guests_can_modify: true,
      guests_can_invite_others: false,
      guests_can_see_other_guests: false,
      transparency: 'transparent',
      visibility: 'private',
      send_updates: 'all',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.execution_id).toMatch(/^exec_/);
    const data = res.body.data as Record<string, unknown> & { id: string };
    expect(data.hangoutLink).toMatch(/^https:\/\/meet\.google\.com\//);

    const ev = storedEvent(data.id)!;
    expect(ev).toMatchObject({
      summary: 'Design review',
      description: 'Walk through the engine design.',
      location: 'Room 1',
      start: { dateTime: '2030-06-03T10:00:00+02:00', timeZone: 'Europe/Paris' },
      end: { dateTime: '2030-06-03T10:45:00+02:00', timeZone: 'Europe/Paris' },
      recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4'],
      guestsCanModify: true,
      guestsCanInviteOthers: false,
      guestsCanSeeOtherGuests: false,
      transparency: 'transparent',
      visibility: 'private',
      eventType: 'default',
    });
    expect((ev.attendees as Array<{ email: string; responseStatus: string }>).map((a) => a.email)).toEqual([
      'grace.hopper@example.com',
      'alan.turing@example.com',
    ]);
    expect(
      (ev.conferenceData as { conferenceSolution: { key: { type: string } } }).conferenceSolution.key.type,
    ).toBe('hangoutsMeet');
  });

  it('lasts one hour by default and keeps the offset of the start', async () => {
    const res = await run('calendar_create_event', {
      summary: 'Default length',
      start_datetime: '2030-01-10T23:30:00-05:00',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const ev = storedEvent((res.body.data as { id: string }).id)!;
    const start = Date.parse((ev.start as { dateTime: string }).dateTime);
    const end = Date.parse((ev.end as { dateTime: string }).dateTime);
    expect(end - start).toBe(3_600_000);
    expect(start).toBe(Date.parse('2030-01-11T04:30:00Z'));
    expect(ev.conferenceData).toBeUndefined();
  });

  it('refreshes an expired access token once and replays the call, body included', async () => {
    const grants = () => control().counters().token_grants.google?.refresh_token ?? 0;
    const before = grants();
    control().expireAccessTokens('google');
    const res = await run('calendar_create_event', {
      summary: 'After a refresh',
      start_datetime: '2030-02-01T09:00:00Z',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(grants()).toBe(before + 1);
    expect(storedEvent((res.body.data as { id: string }).id)?.summary).toBe('After a refresh');
  });

  it('computes the end across a daylight-saving change in the event time zone', async () => {
    // Europe/London moves to summer time at 01:00 UTC on 31 March 2030.
    const res = await run('calendar_create_event', {
      summary: 'Overnight',
      start_datetime: '2030-03-31T00:30:00',
      timezone: 'Europe/London',
      event_duration_hour: 2,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const ev = storedEvent((res.body.data as { id: string }).id)!;
    expect(Date.parse((ev.end as { dateTime: string }).dateTime)).toBe(Date.parse('2030-03-31T02:30:00Z'));
  });

  it('creates focus time on another calendar the user owns', async () => {
    const team = [...calendarOf().calendars.values()].find(
      (c) => !c.id.includes('@example') && c.accessRole === 'owner',
    )!;
    const res = await run('calendar_create_event', {
      calendar_id: team.id,
      summary: 'Deep work',
      start_datetime: '2030-02-01T09:00:00Z',
      event_duration_hour: 3,
      event_type: 'focusTime',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(storedEvent((res.body.data as { id: string }).id, team.id)).toMatchObject({
      eventType: 'focusTime',
      summary: 'Deep work',
    });
  });

  it('rejects each invalid input with its rule and no upstream request', async () => {
    const base = { summary: 'x', start_datetime: '2030-06-03T10:00:00Z' };
    await expectInvalid('calendar_create_event', { summary: 'x' }, '/tool_input/start_datetime', /required/);
    await expectInvalid(
      'calendar_create_event',
      { start_datetime: '2030-06-03T10:00:00Z' },
      '/tool_input/summary',
      /required/,
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, timezone: 'Mars/Olympus' },
      '/tool_input/timezone',
      /IANA/,
    );
    await expectInvalid('calendar_create_event', { ...base, timezone: '+02:00' }, '/tool_input/timezone');
    await expectInvalid(
      'calendar_create_event',
      { summary: 'x', start_datetime: '2030-06-03T10:00:00' },
      '/tool_input/start_datetime',
      /rule: a date-time without a UTC offset is read in "timezone"/,
    );
    await expectInvalid(
      'calendar_create_event',
      { summary: 'x', start_datetime: '2030-02-30T10:00:00Z' },
      '/tool_input/start_datetime',
      /not a real date/,
    );
    await expectInvalid(
      'calendar_create_event',
      { summary: 'x', start_datetime: 'tomorrow 10am' },
      '/tool_input/start_datetime',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, timezone: 'UTC', recurrence: ['FREQ=DAILY'] },
      '/tool_input/recurrence/0',
      /RRULE:/,
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, timezone: 'UTC', recurrence: ['RRULE:COUNT=3'] },
      '/tool_input/recurrence/0',
      /FREQ/,
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, event_duration_hour: 0 },
      '/tool_input/event_duration_hour',
      /at least one minute/,
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, event_duration_minutes: 60 },
      '/tool_input/event_duration_minutes',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, event_duration_hour: 1.5 },
      '/tool_input/event_duration_hour',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, attendees: ['not-an-email'] },
      '/tool_input/attendees/0',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, attendees: 'a@example.com' },
      '/tool_input/attendees',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, transparency: 'blocked' },
      '/tool_input/transparency',
    );
    await expectInvalid('calendar_create_event', { ...base, visibility: 'secret' }, '/tool_input/visibility');
    await expectInvalid(
      'calendar_create_event',
      { ...base, send_updates: 'everyone' },
      '/tool_input/send_updates',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, event_type: 'birthday' },
      '/tool_input/event_type',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, create_meeting_room: 'yes' },
      '/tool_input/create_meeting_room',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, guests_can_modify: 1 },
      '/tool_input/guests_can_modify',
    );
    await expectInvalid(
      'calendar_create_event',
      { ...base, end_datetime: '2030-06-03T11:00:00Z' },
      '/tool_input/end_datetime',
    );
  });
});

describe('calendar_get_event_by_id, calendar_list_events, calendar_update_event, calendar_delete_event', () => {
  let eventId: string;

  beforeAll(async () => {
    const res = await run('calendar_create_event', {
      summary: 'Budget planning',
      description: 'Quarterly numbers',
      start_datetime: '2031-05-05T09:00:00+01:00',
      event_duration_minutes: 30,
      timezone: 'Europe/London',
      attendees: ['grace.hopper@example.com'],
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    eventId = (res.body.data as { id: string }).id;
  });

  it('gets an event by id', async () => {
    const res = await run('calendar_get_event_by_id', { event_id: eventId });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: eventId,
      summary: 'Budget planning',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
      attendees: [
        expect.objectContaining({ email: 'grace.hopper@example.com', responseStatus: 'needsAction' }),
      ],
    });
    await expectInvalid('calendar_get_event_by_id', {}, '/tool_input/event_id', /required/);
    await expectInvalid('calendar_get_event_by_id', { event_id: '' }, '/tool_input/event_id');
    await expectInvalid(
      'calendar_get_event_by_id',
      { event_id: eventId, timezone: 'Nowhere' },
      '/tool_input/timezone',
    );
  });

  it('lists events in a window, expanded and ordered, with a query and pages', async () => {
    const window = { time_min: '2031-05-01T00:00:00Z', time_max: '2031-05-31T00:00:00Z' };
    const series = await run('calendar_list_events', window);
    expect(series.status).toBe(200);
    const once = (series.body.data as { results: Array<{ id: string }> }).results;
    // A series is listed once (the seeded weekly sync recurs forever, so it is in the window too).
    expect(once.filter((e) => e.id === eventId)).toHaveLength(1);
    expect(once.some((e) => e.id.startsWith(`${eventId}_`))).toBe(false);

    const expanded = await run('calendar_list_events', {
      ...window,
      single_events: true,
      order_by: 'startTime',
      query: 'budget quarterly',
    });
    expect(expanded.status).toBe(200);
    const data = expanded.body.data as {
      results: Array<{ id: string; recurringEventId: string; start: { dateTime: string } }>;
      has_more: boolean;
      time_zone: string;
    };
    expect(data.results).toHaveLength(3);
    expect(data.results.every((e) => e.recurringEventId === eventId)).toBe(true);
    const starts = data.results.map((e) => Date.parse(e.start.dateTime));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(data.has_more).toBe(false);
    expect(data.time_zone).toBe('Europe/London');

    const none = await run('calendar_list_events', { ...window, query: 'nonexistent-term' });
    expect((none.body.data as { results: unknown[] }).results).toEqual([]);

    const p1 = await run('calendar_list_events', {
      ...window,
      single_events: true,
      order_by: 'startTime',
      query: 'budget',
      max_results: 2,
    });
    const page1 = p1.body.data as {
      results: Array<{ id: string }>;
      has_more: boolean;
      next_page: Record<string, string>;
    };
    expect(page1.results).toHaveLength(2);
    expect(page1.has_more).toBe(true);
    expect(Object.keys(page1.next_page)).toEqual(['page_token']);
    const p2 = await run('calendar_list_events', {
      ...window,
      single_events: true,
      order_by: 'startTime',
      query: 'budget',
      max_results: 2,
      ...page1.next_page,
    });
    const page2 = p2.body.data as { results: Array<{ id: string }>; has_more: boolean };
    expect(page2.results).toHaveLength(1);
    expect(page2.has_more).toBe(false);
    expect(new Set([...page1.results, ...page2.results].map((e) => e.id)).size).toBe(3);
  });

  it('rejects invalid list_events input', async () => {
    await expectInvalid(
      'calendar_list_events',
      { order_by: 'startTime' },
      '/tool_input/order_by',
      /rule: ordering by start time is only available when recurring events are expanded/,
    );
    await expectInvalid(
      'calendar_list_events',
      { order_by: 'startTime', single_events: false },
      '/tool_input/order_by',
    );
    await expectInvalid('calendar_list_events', { order_by: 'start' }, '/tool_input/order_by');
    await expectInvalid(
      'calendar_list_events',
      { time_min: '2031-05-02T00:00:00Z', time_max: '2031-05-01T00:00:00Z' },
      '/tool_input/time_max',
      /must not be empty/,
    );
    await expectInvalid('calendar_list_events', { time_min: '2031-05-02T00:00:00' }, '/tool_input/time_min');
    await expectInvalid('calendar_list_events', { time_min: '2031-13-02T00:00:00Z' }, '/tool_input/time_min');
    await expectInvalid('calendar_list_events', { max_results: 2501 }, '/tool_input/max_results');
    await expectInvalid('calendar_list_events', { single_events: 'true' }, '/tool_input/single_events');
    await expectInvalid('calendar_list_events', { query: '' }, '/tool_input/query');
  });

  it('updates only the fields given', async () => {
    const before = structuredClone(storedEvent(eventId)!);
    const res = await run('calendar_update_event', {
      calendar_id: 'primary',
      event_id: eventId,
      summary: 'Budget planning (v2)',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const after = storedEvent(eventId)!;
    expect(after.summary).toBe('Budget planning (v2)');
    for (const field of ['description', 'start', 'end', 'attendees', 'recurrence', 'location']) {
      expect(after[field], field).toEqual(before[field]);
    }
  });

  it('moves the start keeping the length, sets an end, changes guests and settings', async () => {
    let res = await run('calendar_update_event', {
      calendar_id: 'primary',
      event_id: eventId,
      start_datetime: '2031-05-06T14:00:00',
      timezone: 'Europe/London',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    let ev = storedEvent(eventId)!;
    expect(ev.start).toEqual({ dateTime: '2031-05-06T14:00:00+01:00', timeZone: 'Europe/London' });
    expect(ev.end).toEqual({ dateTime: '2031-05-06T14:30:00+01:00', timeZone: 'Europe/London' });

    res = await run('calendar_update_event', {
      calendar_id: 'primary',
      event_id: eventId,
      end_datetime: '2031-05-06T15:15:00+01:00',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ev = storedEvent(eventId)!;
    expect(Date.parse((ev.end as { dateTime: string }).dateTime)).toBe(Date.parse('2031-05-06T14:15:00Z'));
    expect(ev.start).toEqual({ dateTime: '2031-05-06T14:00:00+01:00', timeZone: 'Europe/London' });

    res = await run('calendar_update_event', {
      calendar_id: 'primary',
      event_id: eventId,
      event_duration_hour: 2,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ev = storedEvent(eventId)!;
    expect(Date.parse((ev.end as { dateTime: string }).dateTime)).toBe(Date.parse('2031-05-06T15:00:00Z'));

    res = await run('calendar_update_event', {
      calendar_id: 'primary',
      event_id: eventId,
      attendees: ['grace.hopper@example.com', 'alan.turing@example.com'],
      recurrence: [],
      visibility: 'public',
      transparency: 'transparent',
      guests_can_modify: true,
      create_meeting_room: true,
      send_updates: 'none',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ev = storedEvent(eventId)!;
    expect((ev.attendees as Array<{ email: string }>).map((a) => a.email)).toEqual([
      'grace.hopper@example.com',
      'alan.turing@example.com',
    ]);
    expect(ev.recurrence).toBeUndefined();
    expect(ev).toMatchObject({ visibility: 'public', transparency: 'transparent', guestsCanModify: true });
    expect(ev.hangoutLink).toMatch(/^https:\/\/meet\.google\.com\//);
    expect(ev.summary).toBe('Budget planning (v2)');
  });

  it('rejects invalid update_event input', async () => {
    await expectInvalid(
      'calendar_update_event',
      { summary: 'x' },
      ['/tool_input/calendar_id', '/tool_input/event_id'],
      /required/,
    );
    await expectInvalid(
      'calendar_update_event',
      { event_id: eventId, summary: 'x' },
      '/tool_input/calendar_id',
      /this tool cannot run without it/,
    );
    await expectInvalid(
      'calendar_update_event',
      { calendar_id: 'primary', event_id: eventId },
      '/tool_input',
      /rule: an update changes at least one field/,
    );
    await expectInvalid(
      'calendar_update_event',
      { calendar_id: 'primary', event_id: eventId, send_updates: 'all' },
      '/tool_input',
      /at least one/,
    );
    await expectInvalid(
      'calendar_update_event',
      {
        calendar_id: 'primary',
        event_id: eventId,
        end_datetime: '2031-05-06T15:00:00Z',
        event_duration_hour: 1,
      },
      '/tool_input/end_datetime',
      /not both/,
    );
    await expectInvalid(
      'calendar_update_event',
      {
        calendar_id: 'primary',
        event_id: eventId,
        start_datetime: '2031-05-06T15:00:00Z',
        end_datetime: '2031-05-06T14:00:00Z',
      },
      '/tool_input/end_datetime',
      /must not end before it starts/,
    );
    await expectInvalid(
      'calendar_update_event',
      { calendar_id: 'primary', event_id: eventId, timezone: 'Europe/Paris' },
      '/tool_input/timezone',
      /only used with/,
    );
    await expectInvalid(
      'calendar_update_event',
      { calendar_id: 'primary', event_id: eventId, start_datetime: '2031-05-06T15:00:00' },
      '/tool_input/start_datetime',
      /UTC offset/,
    );
    await expectInvalid(
      'calendar_update_event',
      { calendar_id: 'primary', event_id: eventId, recurrence: ['RRULE:BYDAY=MO'] },
      '/tool_input/recurrence/0',
    );
    await expectInvalid(
      'calendar_update_event',
      { calendar_id: 'primary', event_id: eventId, event_type: 'birthday' },
      '/tool_input/event_type',
    );
  });

  it('refuses a duration for an all-day event once it has read the event', async () => {
    const allDay = [...calendarOf().events.get(ADA_EMAIL)!.values()].find(
      (e) => (e.resource.start as { date?: string }).date !== undefined,
    )!.resource;
    const before = structuredClone(allDay);
    const res = await run('calendar_update_event', {
      calendar_id: 'primary',
      event_id: allDay.id,
      event_duration_hour: 2,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'invalid_input',
      errors: [expect.objectContaining({ path: '/tool_input/event_duration_hour' })],
    });
    expect(storedEvent(allDay.id)).toEqual(before);
  });

  it('deletes an event (it becomes cancelled) and a second delete is not found', async () => {
    const res = await run('calendar_delete_event', { event_id: eventId, send_updates: 'all' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ deleted: true, event_id: eventId, calendar_id: 'primary' });
    expect(storedEvent(eventId)!.status).toBe('cancelled');

    const again = await run('calendar_delete_event', { event_id: eventId });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('upstream_not_found');

    await expectInvalid('calendar_delete_event', {}, '/tool_input/event_id', /required/);
    await expectInvalid(
      'calendar_delete_event',
      { event_id: 'x', send_updates: 'everyone' },
      '/tool_input/send_updates',
    );
  });
});

describe('provider errors', () => {
  it('maps not found, validation and permission answers', async () => {
    const missing = await run('calendar_get_event_by_id', { event_id: 'doesnotexist00000' });
    expectUpstreamError(missing, notFound(/Not Found/));

    const badRule = await run('calendar_create_event', {
      summary: 'Bad rule',
      start_datetime: '2030-06-03T10:00:00Z',
      timezone: 'UTC',
      recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=XX'],
    });
    expectUpstreamError(badRule, {
      status: 400,
      code: 'upstream_validation',
      upstreamStatus: 400,
      detail: /Invalid recurrence rule/,
    });

    const readOnly = [...calendarOf().calendars.values()].find((c) => c.accessRole === 'reader')!;
    const forbidden = await run('calendar_create_event', {
      calendar_id: readOnly.id,
      summary: 'Not allowed',
      start_datetime: '2030-06-03T10:00:00Z',
    });
    expectUpstreamError(forbidden, { status: 403, code: 'upstream_forbidden' });

    const unknownCalendar = await run('calendar_list_events', { calendar_id: 'nobody@example.com' });
    expectUpstreamError(unknownCalendar, notFound());
  });

  it('maps a 429 with Retry-After to upstream_rate_limited', async () => {
    await expectRateLimited(
      control(),
      () => run('calendar_list_calendars', {}),
      { ...google429('^/google/calendar/v3/', 30, 'Rate Limit Exceeded'), times: 5 },
      { retryAfterMs: 30_000 },
    );
  });

  it("maps Google's 403 rateLimitExceeded to upstream_rate_limited", async () => {
    await expectRateLimited(
      control(),
      () => run('calendar_create_event', { summary: 'Throttled', start_datetime: '2030-06-03T10:00:00Z' }),
      {
        ...google403RateLimit('^/google/calendar/v3/calendars/', 'rateLimitExceeded'),
        method: 'POST',
        times: 1,
      },
      { detail: /Rate Limit Exceeded/ },
    );
  });

  it('answers account_not_active with an authorization link when the grant is revoked', async () => {
    await expectRevokedAccountNotActive(t, {
      provider: 'google_calendar',
      emulator: 'google',
      identifier: 'cal-revoked',
      userId: ALAN,
      works: ['calendar_list_calendars', {}],
    });
  });
});
