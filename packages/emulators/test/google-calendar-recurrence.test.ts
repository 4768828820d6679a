import { beforeEach, describe, expect, it } from 'vitest';
import { mintToken, useEmulators } from './helpers/emulators.js';

interface Ev {
  id: string;
  status: string;
  summary?: string;
  start: { dateTime?: string; date?: string; timeZone?: string };
  end: { dateTime?: string; date?: string };
  recurringEventId?: string;
  originalStartTime?: { dateTime?: string; date?: string };
}

describe('Google Calendar emulator: recurring events', () => {
  const emu = useEmulators({ modules: ['google'] });
  let token: string;
  beforeEach(() => {
    token = mintToken(emu, 'google', 'grace.hopper@example.com', [
      'https://www.googleapis.com/auth/calendar.events',
    ]);
  });

  const call = async <T>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${emu.urls.google}/calendar/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (res.status === 204 ? undefined : await res.json()) as T };
  };

  const create = async (event: Record<string, unknown>) => {
    const res = await call<Ev>('POST', '/calendars/primary/events', event);
    expect(res.status).toBe(200);
    return res.body;
  };

  const instances = async (id: string, query = '') => {
    const res = await call<{ items: Ev[] }>(
      'GET',
      `/calendars/primary/events?singleEvents=true&orderBy=startTime&timeMin=2030-01-01T00:00:00Z&timeMax=2031-01-01T00:00:00Z${query}`,
    );
    expect(res.status).toBe(200);
    return res.body.items.filter((e) => e.recurringEventId === id);
  };

  it('expands WEEKLY with BYDAY and COUNT', async () => {
    const ev = await create({
      summary: 'Lab hours',
      start: { dateTime: '2030-01-01T09:00:00', timeZone: 'America/New_York' }, // a Tuesday
      end: { dateTime: '2030-01-01T10:00:00', timeZone: 'America/New_York' },
      recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=5'],
    });
    const list = await instances(ev.id);
    expect(list.map((e) => e.start.dateTime)).toEqual([
      '2030-01-01T09:00:00-05:00',
      '2030-01-03T09:00:00-05:00',
      '2030-01-08T09:00:00-05:00',
      '2030-01-10T09:00:00-05:00',
      '2030-01-15T09:00:00-05:00',
    ]);
    expect(list[1]).toMatchObject({
      id: `${ev.id}_20300103T140000Z`,
      recurringEventId: ev.id,
      originalStartTime: { dateTime: '2030-01-03T09:00:00-05:00', timeZone: 'America/New_York' },
      end: { dateTime: '2030-01-03T10:00:00-05:00' },
      summary: 'Lab hours',
      status: 'confirmed',
    });
  });

  it('keeps the local time across a daylight-saving change', async () => {
    const ev = await create({
      summary: 'Across DST',
      start: { dateTime: '2030-03-07T09:00:00-05:00', timeZone: 'America/New_York' },
      end: { dateTime: '2030-03-07T09:30:00-05:00', timeZone: 'America/New_York' },
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=2'],
    });
    const list = await instances(ev.id);
    expect(list.map((e) => e.start.dateTime)).toEqual([
      '2030-03-07T09:00:00-05:00',
      '2030-03-14T09:00:00-04:00',
    ]);
  });

  it('expands DAILY with INTERVAL and UNTIL, and drops EXDATEs', async () => {
    const ev = await create({
      summary: 'Every other day',
      start: { dateTime: '2030-02-01T08:00:00Z', timeZone: 'UTC' },
      end: { dateTime: '2030-02-01T08:15:00Z', timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20300209T235959Z', 'EXDATE:20300205T080000Z'],
    });
    const list = await instances(ev.id);
    expect(list.map((e) => e.start.dateTime)).toEqual([
      '2030-02-01T08:00:00Z',
      '2030-02-03T08:00:00Z',
      '2030-02-07T08:00:00Z',
      '2030-02-09T08:00:00Z',
    ]);
  });

  it('expands all-day MONTHLY events by weekday ordinal', async () => {
    const ev = await create({
      summary: 'First Monday review',
      start: { date: '2030-01-07' },
      end: { date: '2030-01-08' },
      recurrence: ['RRULE:FREQ=MONTHLY;BYDAY=1MO;COUNT=3'],
    });
    const list = await instances(ev.id);
    expect(list.map((e) => [e.id, e.start.date, e.end.date])).toEqual([
      [`${ev.id}_20300107`, '2030-01-07', '2030-01-08'],
      [`${ev.id}_20300204`, '2030-02-04', '2030-02-05'],
      [`${ev.id}_20300304`, '2030-03-04', '2030-03-05'],
    ]);
  });

  it('limits expansion to the queried window', async () => {
    const ev = await create({
      summary: 'Forever weekly',
      start: { dateTime: '2030-01-02T12:00:00Z', timeZone: 'UTC' },
      end: { dateTime: '2030-01-02T13:00:00Z', timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=WEEKLY'],
    });
    const res = await call<{ items: Ev[] }>(
      'GET',
      '/calendars/primary/events?singleEvents=true&timeMin=2030-03-01T00:00:00Z&timeMax=2030-03-31T00:00:00Z',
    );
    const mine = res.body.items.filter((e) => e.recurringEventId === ev.id);
    expect(mine.map((e) => e.start.dateTime)).toEqual([
      '2030-03-06T12:00:00Z',
      '2030-03-13T12:00:00Z',
      '2030-03-20T12:00:00Z',
      '2030-03-27T12:00:00Z',
    ]);
  });

  it('gets, patches and deletes single instances', async () => {
    const ev = await create({
      summary: 'Series',
      start: { dateTime: '2030-04-01T10:00:00Z', timeZone: 'UTC' },
      end: { dateTime: '2030-04-01T11:00:00Z', timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=4'],
    });
    const second = `${ev.id}_20300402T100000Z`;
    const got = await call<Ev>('GET', `/calendars/primary/events/${second}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: second, recurringEventId: ev.id, summary: 'Series' });

    const patched = await call<Ev>('PATCH', `/calendars/primary/events/${second}`, { summary: 'Moved talk' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: second, summary: 'Moved talk', recurringEventId: ev.id });

    const third = `${ev.id}_20300403T100000Z`;
    expect((await call('DELETE', `/calendars/primary/events/${third}`)).status).toBe(204);
    expect((await call('DELETE', `/calendars/primary/events/${third}`)).status).toBe(410);

    const list = await instances(ev.id);
    expect(list.map((e) => [e.id, e.summary])).toEqual([
      [`${ev.id}_20300401T100000Z`, 'Series'],
      [second, 'Moved talk'],
      [`${ev.id}_20300404T100000Z`, 'Series'],
    ]);
    const withDeleted = await instances(ev.id, '&showDeleted=true');
    expect(withDeleted.find((e) => e.id === third)?.status).toBe('cancelled');

    const viaInstances = await call<{ items: Ev[] }>('GET', `/calendars/primary/events/${ev.id}/instances`);
    expect(viaInstances.body.items.map((e) => e.id)).toEqual(list.map((e) => e.id));

    const notAnInstance = await call('GET', `/calendars/primary/events/${ev.id}_20300402T110000Z`);
    expect(notAnInstance.status).toBe(404);
  });

  it('requires a time zone for a recurring timed event', async () => {
    const res = await call<{ error: { message: string } }>('POST', '/calendars/primary/events', {
      start: { dateTime: '2030-01-01T09:00:00Z' },
      end: { dateTime: '2030-01-01T10:00:00Z' },
      recurrence: ['RRULE:FREQ=DAILY'],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Missing time zone definition for start time.');
  });
});
