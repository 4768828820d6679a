import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import type { CalendarState } from './helpers/calendar-state.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { expectUpstreamError, notFound, toolHarness } from './helpers/tools.js';

// The calendar_ tools called with the specification's parameter names only (docs/spec/tools.json,
// readings included), each effect read back from a later call or from the emulated Google Calendar.

const ADA = '110000000000000000001';
const ADA_EMAIL = 'ada.lovelace@example.com';
const GRACE_EMAIL = 'grace.hopper@example.com';
const ID = 'spec-calendar-user';

// biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
type Json = Record<string, any>;

describe.each(BACKENDS)('calendar_ tools by the specification on $name', (backend) => {
  let t: TestGateway;
  let connection: string;
  const { control, run, expectInvalid } = toolHarness({ gateway: () => t, identifier: ID });
  const calendar = () => control().state<CalendarState>('google').byUser.get(ADA)!.calendar;
  const stored = (id: string, calendarId = ADA_EMAIL) => calendar().events.get(calendarId)?.get(id)?.resource;
  const mailsAbout = (eventId: string) => calendar().outbox.filter((m) => m.eventId === eventId);

  async function ok(tool_name: string, tool_input: Record<string, unknown>): Promise<Json> {
    const res = await run(tool_name, tool_input);
    expect(res.status, `${tool_name}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body.data as Json;
  }

  /** Google Calendar through the gateway's proxy, as the same end user (to change the calendar list). */
  async function google(method: string, path: string, json?: unknown): Promise<Response> {
    return t.api(`/proxy${path}`, {
      method,
      ...(json === undefined ? {} : { json }),
      headers: { connection_name: connection, identifier: ID },
    });
  }

  beforeAll(async () => {
    t = await startTestGateway(backend);
    ({ connection } = await sandboxAccount(t, {
      provider: 'google_calendar',
      identifier: ID,
      userId: ADA,
    }));
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('calendar_create_event', () => {
    it('takes send_updates true and transparency "free", lasting one hour; versions may sit in tool_input', async () => {
      const event = await ok('calendar_create_event', {
        summary: 'Analytical Engine review',
        start_datetime: '2032-03-01T10:00:00+01:00',
        attendees_emails: [GRACE_EMAIL],
        send_updates: true,
        transparency: 'free',
        schema_version: '1',
        tool_version: '1',
      });
      const ev = stored(event.id)!;
      expect(ev).toMatchObject({ summary: 'Analytical Engine review', transparency: 'transparent' });
      const start = Date.parse((ev.start as { dateTime: string }).dateTime);
      expect(start).toBe(Date.parse('2032-03-01T09:00:00Z'));
      expect(Date.parse((ev.end as { dateTime: string }).dateTime) - start).toBe(3_600_000);
      // true is Google's sendUpdates=all: the guest got an invitation.
      expect(mailsAbout(event.id)).toEqual([
        expect.objectContaining({ to: GRACE_EMAIL, kind: 'invitation' }),
      ]);
    });

    it("recurrence without timezone: the series repeats in the calendar's own zone", async () => {
      // The specification leaves timezone optional; Google needs a zone for a recurring event.
      const event = await ok('calendar_create_event', {
        summary: 'Weekly engine notes',
        start_datetime: '2032-03-04T09:00:00Z',
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
      });
      const ev = stored(event.id)!;
      expect(ev.recurrence).toEqual(['RRULE:FREQ=WEEKLY;COUNT=3']);
      expect(ev.start).toMatchObject({ timeZone: 'Europe/London' });
      expect(Date.parse((ev.start as { dateTime: string }).dateTime)).toBe(
        Date.parse('2032-03-04T09:00:00Z'),
      );
    });

    it('takes send_updates false and transparency "busy"', async () => {
      const event = await ok('calendar_create_event', {
        summary: 'Difference Engine budget',
        start_datetime: '2032-03-02T15:30:00',
        timezone: 'Europe/London',
        event_duration_hour: 1,
        event_duration_minutes: 30,
        attendees_emails: [GRACE_EMAIL],
        send_updates: false,
        transparency: 'busy',
      });
      expect(stored(event.id)).toMatchObject({
        transparency: 'opaque',
        start: { dateTime: '2032-03-02T15:30:00+00:00', timeZone: 'Europe/London' },
        end: { dateTime: '2032-03-02T17:00:00+00:00', timeZone: 'Europe/London' },
      });
      expect(mailsAbout(event.id)).toEqual([]);
    });

    it('still takes Google’s own values "transparent" and "externalOnly"', async () => {
      const event = await ok('calendar_create_event', {
        summary: 'Talk with the Royal Society',
        start_datetime: '2032-03-03T11:00:00Z',
        attendees_emails: [GRACE_EMAIL, 'secretary@royalsociety.org'],
        send_updates: 'externalOnly',
        transparency: 'transparent',
      });
      expect(stored(event.id)?.transparency).toBe('transparent');
      expect(mailsAbout(event.id).map((m) => m.to)).toEqual(['secretary@royalsociety.org']);
    });

    it('refuses a missing summary before calling Google', async () => {
      await expectInvalid(
        'calendar_create_event',
        { start_datetime: '2032-03-01T10:00:00Z', send_updates: true },
        '/tool_input/summary',
        /required/,
      );
    });
  });

  describe('calendar_get_event_by_id', () => {
    let eventId: string;
    let updated: string;

    beforeAll(async () => {
      const event = await ok('calendar_create_event', {
        summary: 'Quarterly budget review',
        description: 'Bernoulli numbers for Note G',
        location: 'The Athenaeum, London',
        start_datetime: '2032-04-05T09:00:00Z',
        event_duration_minutes: 45,
        attendees_emails: [GRACE_EMAIL],
      });
      eventId = event.id;
      updated = event.updated;
    });

    /** The event is found with `filters`, or not found because of `excludedBy`. */
    async function expectFound(filters: Record<string, unknown>) {
      const data = await ok('calendar_get_event_by_id', {
        event_id: eventId,
        calendar_id: 'primary',
        ...filters,
      });
      expect(data.id).toBe(eventId);
      return data;
    }
    async function expectExcluded(filters: Record<string, unknown>, excludedBy: string) {
      const res = await run('calendar_get_event_by_id', {
        event_id: eventId,
        calendar_id: 'primary',
        ...filters,
      });
      const body = expectUpstreamError(res, { status: 404, code: 'upstream_not_found' });
      expect(String(body.detail)).toContain(excludedBy);
      expect(body.errors).toEqual([expect.objectContaining({ path: `/tool_input/${excludedBy}` })]);
    }

    it('reads the event by id', async () => {
      const data = await expectFound({});
      expect(data).toMatchObject({ summary: 'Quarterly budget review', status: 'confirmed' });
    });

    it('query: found when every word occurs in title, description, location or guests', async () => {
      await expectFound({ query: 'budget bernoulli' });
      await expectFound({ query: 'ATHENAEUM grace.hopper' });
      await expectExcluded({ query: 'budget babbage' }, 'query');
    });

    it('event_types: found when the event’s type is listed', async () => {
      await expectFound({ event_types: ['default', 'focusTime'] });
      await expectExcluded({ event_types: ['focusTime', 'outOfOffice'] }, 'event_types');
    });

    it('time_min/time_max: found when the event overlaps the window', async () => {
      await expectFound({ time_min: '2032-04-05T09:30:00Z', time_max: '2032-04-05T12:00:00Z' });
      await expectFound({ time_max: '2032-04-05T09:00:01Z' });
      await expectExcluded({ time_min: '2032-04-05T09:45:00Z' }, 'time_min');
      await expectExcluded(
        { time_min: '2032-04-01T00:00:00Z', time_max: '2032-04-05T09:00:00Z' },
        'time_max',
      );
    });

    it('updated_min: found when the event changed at or after it', async () => {
      await expectFound({ updated_min: updated.replace(/\.\d+Z$/, 'Z') });
      await expectFound({ updated_min: '2020-01-01T00:00:00+01:00' });
      await expectExcluded({ updated_min: '2099-01-01T00:00:00Z' }, 'updated_min');
    });

    it('single_events: a recurring event comes with its occurrences within the window', async () => {
      const series = await ok('calendar_create_event', {
        summary: 'Lecture series',
        start_datetime: '2032-05-03T18:00:00',
        timezone: 'Europe/London',
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=5'],
      });
      const all = await ok('calendar_get_event_by_id', {
        event_id: series.id,
        calendar_id: 'primary',
        single_events: true,
      });
      expect(all.recurrence).toEqual(['RRULE:FREQ=WEEKLY;COUNT=5']);
      expect(all.instances).toHaveLength(5);
      expect(all.instances.every((o: Json) => o.recurringEventId === series.id)).toBe(true);

      const window = { time_min: '2032-05-09T00:00:00Z', time_max: '2032-05-20T00:00:00Z' };
      const two = await ok('calendar_get_event_by_id', {
        event_id: series.id,
        single_events: true,
        ...window,
      });
      expect(two.instances.map((o: Json) => o.start.dateTime)).toEqual([
        '2032-05-10T18:00:00+01:00',
        '2032-05-17T18:00:00+01:00',
      ]);
      // The id of one occurrence reads that occurrence.
      const occurrence = await ok('calendar_get_event_by_id', { event_id: two.instances[0].id });
      expect(occurrence).toMatchObject({ recurringEventId: series.id, summary: 'Lecture series' });

      // A series is in a window when one of its occurrences is.
      await ok('calendar_get_event_by_id', { event_id: series.id, ...window });
      const outside = await run('calendar_get_event_by_id', {
        event_id: series.id,
        single_events: true,
        time_min: '2032-07-01T00:00:00Z',
      });
      expectUpstreamError(outside, { status: 404, code: 'upstream_not_found', detail: /time_min/ });
    });

    it('refuses an empty window or a date that does not exist before calling Google', async () => {
      await expectInvalid(
        'calendar_get_event_by_id',
        { event_id: eventId, time_min: '2032-04-06T00:00:00Z', time_max: '2032-04-05T00:00:00Z' },
        '/tool_input/time_max',
        /must not be empty/,
      );
      await expectInvalid(
        'calendar_get_event_by_id',
        { event_id: eventId, updated_min: '2032-02-30T00:00:00Z' },
        '/tool_input/updated_min',
      );
      await expectInvalid('calendar_get_event_by_id', { event_id: eventId, event_types: ['meeting'] }, [
        '/tool_input/event_types/0',
      ]);
    });
  });

  describe('calendar_update_event and calendar_delete_event', () => {
    it('updates only the given fields of an event in the calendar named by calendar_id', async () => {
      const team = [...calendar().calendars.values()].find((c) => !c.primary && c.accessRole === 'owner')!;
      const event = await ok('calendar_create_event', {
        calendar_id: team.id,
        summary: 'Engine design',
        description: 'Cards and the mill',
        start_datetime: '2032-06-07T10:00:00Z',
        attendees_emails: [GRACE_EMAIL],
      });
      const data = await ok('calendar_update_event', {
        calendar_id: team.id,
        event_id: event.id,
        summary: 'Engine design (moved)',
        start_datetime: '2032-06-08T14:00:00Z',
        end_datetime: '2032-06-08T16:00:00Z',
        transparency: 'free',
        send_updates: true,
      });
      expect(data.summary).toBe('Engine design (moved)');
      const ev = stored(event.id, team.id)!;
      expect(ev).toMatchObject({
        summary: 'Engine design (moved)',
        description: 'Cards and the mill',
        transparency: 'transparent',
      });
      expect(Date.parse((ev.start as { dateTime: string }).dateTime)).toBe(
        Date.parse('2032-06-08T14:00:00Z'),
      );
      expect(Date.parse((ev.end as { dateTime: string }).dateTime)).toBe(Date.parse('2032-06-08T16:00:00Z'));
      expect(mailsAbout(event.id)).toEqual([expect.objectContaining({ to: GRACE_EMAIL, kind: 'update' })]);

      // The same event type is accepted; Google keeps an event's type for good.
      await ok('calendar_update_event', { calendar_id: team.id, event_id: event.id, event_type: 'default' });
      const changed = await run('calendar_update_event', {
        calendar_id: team.id,
        event_id: event.id,
        event_type: 'focusTime',
      });
      expectUpstreamError(changed, {
        status: 400,
        code: 'upstream_validation',
        upstreamStatus: 400,
        detail: /Event type cannot be changed/,
      });
      expect(stored(event.id, team.id)?.eventType).toBe('default');
    });

    it('requires calendar_id ("primary" names the main calendar)', async () => {
      const event = await ok('calendar_create_event', {
        summary: 'Tea with Mary Somerville',
        start_datetime: '2032-06-09T16:00:00Z',
      });
      await expectInvalid(
        'calendar_update_event',
        { event_id: event.id, summary: 'Tea' },
        '/tool_input/calendar_id',
        /required/,
      );
      await ok('calendar_update_event', {
        calendar_id: 'primary',
        event_id: event.id,
        visibility: 'private',
        send_updates: false,
      });
      expect(stored(event.id)).toMatchObject({ visibility: 'private', summary: 'Tea with Mary Somerville' });
    });

    it('deletes an event; it is then found only with show_deleted true, cancelled', async () => {
      const event = await ok('calendar_create_event', {
        summary: 'Cancelled seminar',
        start_datetime: '2032-06-10T09:00:00Z',
        attendees_emails: [GRACE_EMAIL],
      });
      const deleted = await ok('calendar_delete_event', { event_id: event.id, calendar_id: 'primary' });
      expect(deleted).toEqual({ deleted: true, event_id: event.id, calendar_id: 'primary' });
      expect(stored(event.id)?.status).toBe('cancelled');

      const hidden = await run('calendar_get_event_by_id', { event_id: event.id, calendar_id: 'primary' });
      const body = expectUpstreamError(hidden, {
        status: 404,
        code: 'upstream_not_found',
        detail: /show_deleted/,
      });
      expect(body.errors).toEqual([expect.objectContaining({ path: '/tool_input/show_deleted' })]);
      const found = await ok('calendar_get_event_by_id', { event_id: event.id, show_deleted: true });
      expect(found).toMatchObject({ id: event.id, status: 'cancelled' });

      const again = await run('calendar_delete_event', { event_id: event.id });
      // Google answers a second delete 410 deleted.
      expectUpstreamError(again, { status: 404, code: 'upstream_not_found', upstreamStatus: 410 });
      const unknown = await run('calendar_get_event_by_id', {
        event_id: 'doesnotexist00000',
        show_deleted: true,
      });
      expectUpstreamError(unknown, notFound(/Not Found/));
    });
  });

  describe('calendar_list_events', () => {
    it('takes every parameter of the specification', async () => {
      const first = await ok('calendar_list_events', {
        calendar_id: 'primary',
        time_min: '2032-05-01T00:00:00Z',
        time_max: '2032-06-01T00:00:00Z',
        query: 'lecture',
        single_events: true,
        order_by: 'startTime',
        max_results: 3,
      });
      expect(first.results).toHaveLength(3);
      expect(first.has_more).toBe(true);
      const rest = await ok('calendar_list_events', {
        calendar_id: 'primary',
        time_min: '2032-05-01T00:00:00Z',
        time_max: '2032-06-01T00:00:00Z',
        query: 'lecture',
        single_events: true,
        order_by: 'startTime',
        max_results: 3,
        ...first.next_page,
      });
      expect(rest.results).toHaveLength(2);
      expect(rest.has_more).toBe(false);
    });
  });

  describe('calendar_list_calendars', () => {
    it('hands out a sync token; a later call with it returns only what changed', async () => {
      const full = await ok('calendar_list_calendars', { max_results: 250 });
      expect(full.results.map((c: Json) => c.id)).toContain(ADA_EMAIL);
      expect(full.next_sync_token).toEqual(expect.any(String));

      const unchanged = await ok('calendar_list_calendars', { sync_token: full.next_sync_token });
      expect(unchanged.results).toEqual([]);

      // Three changes at Google: a new calendar, a hidden one and one removed from the list.
      const created = await google('POST', '/calendar/v3/calendars', {
        summary: 'Poetical science',
        timeZone: 'Europe/London',
      });
      expect(created.status).toBe(200);
      const newId = ((await created.json()) as { id: string }).id;
      const [, team, onCall] = full.results as Json[];
      expect(
        (
          await google('PATCH', `/calendar/v3/users/me/calendarList/${encodeURIComponent(team!.id)}`, {
            hidden: true,
          })
        ).status,
      ).toBe(200);
      expect(
        (await google('DELETE', `/calendar/v3/users/me/calendarList/${encodeURIComponent(onCall!.id)}`))
          .status,
      ).toBe(204);

      const changes = await ok('calendar_list_calendars', { sync_token: full.next_sync_token });
      expect(changes.results.map((c: Json) => c.id).sort()).toEqual([newId, team!.id, onCall!.id].sort());
      const byId = new Map(changes.results.map((c: Json) => [c.id, c]));
      expect(byId.get(newId)).toMatchObject({ summary: 'Poetical science', accessRole: 'owner' });
      expect(byId.get(team!.id)).toMatchObject({ hidden: true });
      expect(byId.get(onCall!.id)).toMatchObject({ deleted: true });

      const next = await ok('calendar_list_calendars', { sync_token: changes.next_sync_token });
      expect(next.results).toEqual([]);

      // A full listing leaves out hidden and removed calendars unless asked for them.
      const visible = (await ok('calendar_list_calendars', {})).results.map((c: Json) => c.id);
      expect(visible).toContain(newId);
      expect(visible).not.toContain(team!.id);
      expect(visible).not.toContain(onCall!.id);
      const everything = await ok('calendar_list_calendars', { show_deleted: true, show_hidden: true });
      expect(everything.results.map((c: Json) => c.id)).toEqual(
        expect.arrayContaining([newId, team!.id, onCall!.id]),
      );
      const withHidden = await ok('calendar_list_calendars', { show_hidden: true, min_access_role: 'owner' });
      expect(withHidden.results.map((c: Json) => c.id)).toContain(team!.id);
    });

    it('pages an incremental sync with page_token and the same sync_token', async () => {
      const { next_sync_token: token } = await ok('calendar_list_calendars', {});
      for (const summary of ['Notes on Menabrea', 'Correspondence']) {
        expect((await google('POST', '/calendar/v3/calendars', { summary })).status).toBe(200);
      }
      const page1 = await ok('calendar_list_calendars', { sync_token: token, max_results: 1 });
      expect(page1).toMatchObject({ has_more: true, next_sync_token: null });
      const page2 = await ok('calendar_list_calendars', {
        sync_token: token,
        max_results: 1,
        ...page1.next_page,
      });
      expect(page2.has_more).toBe(false);
      expect(page2.next_sync_token).toEqual(expect.any(String));
      expect([...page1.results, ...page2.results].map((c: Json) => c.summary).sort()).toEqual([
        'Correspondence',
        'Notes on Menabrea',
      ]);
    });

    it('answers a bad sync token as Google’s 410 fullSyncRequired, and refuses restrictions beside one', async () => {
      const res = await run('calendar_list_calendars', { sync_token: 'not-a-token' });
      const body = expectUpstreamError(res, { status: 404, code: 'upstream_not_found', upstreamStatus: 410 });
      expect(JSON.stringify(body.upstream)).toContain('fullSyncRequired');

      const { next_sync_token: token } = await ok('calendar_list_calendars', {});
      await expectInvalid(
        'calendar_list_calendars',
        { sync_token: token, min_access_role: 'writer' },
        '/tool_input/min_access_role',
        /sync_token/,
      );
      await expectInvalid(
        'calendar_list_calendars',
        { sync_token: token, show_deleted: false, show_hidden: false },
        ['/tool_input/show_deleted', '/tool_input/show_hidden'],
      );
      // Google refuses the same combinations itself.
      for (const query of ['minAccessRole=writer', 'showDeleted=false', 'showHidden=false']) {
        const direct = await google('GET', `/calendar/v3/users/me/calendarList?syncToken=${token}&${query}`);
        expect(direct.status, query).toBe(400);
      }
    });
  });
});
