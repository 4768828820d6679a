import { type calendar_v3, google } from 'googleapis';
import { beforeEach, describe, expect, it } from 'vitest';
import { mintToken, useEmulators } from './helpers/emulators.js';
import { failure, type GoogleErrorBody, googleClient, googleClientFor } from './helpers/googleapis.js';

const CALENDAR = 'https://www.googleapis.com/auth/calendar';
const ADA = 'ada.lovelace@example.com';

describe('Google Calendar v3 emulator, through googleapis', () => {
  const emu = useEmulators({ modules: ['google'] });
  let cal: calendar_v3.Calendar;
  let token: string;

  beforeEach(() => {
    token = mintToken(emu, 'google', ADA, [CALENDAR]);
    cal = googleClient(emu, token, (auth) => google.calendar({ version: 'v3', auth }));
  });

  const raw = (path: string, init: RequestInit = {}) =>
    fetch(`${emu.urls.google}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    });

  it('lists the calendar list with the primary calendar named by the user email, page by page', async () => {
    const all = await cal.calendarList.list();
    expect(all.data.kind).toBe('calendar#calendarList');
    const items = all.data.items ?? [];
    expect(items).toHaveLength(3);
    const primary = items.find((c) => c.primary);
    expect(primary).toMatchObject({ id: ADA, accessRole: 'owner', timeZone: 'Europe/London' });
    expect(items.map((c) => c.accessRole)).toContain('reader');

    const first = await cal.calendarList.list({ maxResults: 2 });
    expect(first.data.items).toHaveLength(2);
    expect(first.data.nextPageToken).toBeTruthy();
    const second = await cal.calendarList.list({ maxResults: 2, pageToken: first.data.nextPageToken! });
    expect(second.data.items).toHaveLength(1);
    expect(second.data.nextPageToken).toBeUndefined();
    expect(second.data.nextSyncToken).toBeTruthy();

    const owned = await cal.calendarList.list({ minAccessRole: 'owner' });
    expect(owned.data.items?.every((c) => c.accessRole === 'owner')).toBe(true);
  });

  it('lists this week on primary with recurring instances expanded and ordered by start', async () => {
    const now = Date.now();
    const res = await cal.events.list({
      calendarId: 'primary',
      singleEvents: true,
      orderBy: 'startTime',
      timeMin: new Date(now - 8 * 86_400_000).toISOString(),
      timeMax: new Date(now + 8 * 86_400_000).toISOString(),
    });
    expect(res.data.kind).toBe('calendar#events');
    expect(res.data.timeZone).toBe('Europe/London');
    const items = res.data.items ?? [];
    const sync = items.filter((e) => e.summary === 'Weekly team sync');
    expect(sync.length).toBeGreaterThanOrEqual(2);
    for (const instance of sync) {
      expect(instance.recurringEventId).toBeTruthy();
      const utc = new Date(instance.start!.dateTime!).toISOString().replace(/[-:]|\.\d{3}/g, '');
      expect(instance.id).toBe(`${instance.recurringEventId}_${utc}`);
      expect(instance.originalStartTime?.dateTime).toBe(instance.start?.dateTime);
      expect(instance.recurrence).toBeUndefined();
      expect(new Date(instance.start!.dateTime!).getUTCDay()).toBe(1);
    }
    const starts = items.map((e) => Date.parse(e.start?.dateTime ?? `${e.start?.date}T00:00:00Z`));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(items.some((e) => e.summary?.startsWith('1:1 with'))).toBe(true);
  });

  it('without singleEvents returns the recurring master with its rule', async () => {
    const res = await cal.events.list({ calendarId: 'primary' });
    const master = res.data.items?.find((e) => e.summary === 'Weekly team sync');
    expect(master?.recurrence).toEqual(['RRULE:FREQ=WEEKLY;BYDAY=MO']);
    expect(master?.recurringEventId).toBeUndefined();
  });

  it('inserts an event with attendees and a Meet conference, and reads it back', async () => {
    const inserted = await cal.events.insert({
      calendarId: 'primary',
      conferenceDataVersion: 1,
      sendUpdates: 'all',
      requestBody: {
        summary: 'Design review',
        description: 'Walk through the engine plans',
        location: 'Room 101',
        start: { dateTime: '2030-03-04T10:00:00', timeZone: 'Europe/Paris' },
        end: { dateTime: '2030-03-04T11:00:00', timeZone: 'Europe/Paris' },
        attendees: [{ email: 'grace.hopper@example.com', displayName: 'Grace Hopper' }, { email: ADA }],
        guestsCanModify: true,
        guestsCanInviteOthers: false,
        guestsCanSeeOtherGuests: false,
        transparency: 'transparent',
        visibility: 'private',
        conferenceData: {
          createRequest: { requestId: 'req-1', conferenceSolutionKey: { type: 'hangoutsMeet' } },
        },
      },
    });
    expect(inserted.status).toBe(200);
    const ev = inserted.data;
    expect(ev).toMatchObject({
      kind: 'calendar#event',
      status: 'confirmed',
      summary: 'Design review',
      start: { dateTime: '2030-03-04T10:00:00+01:00', timeZone: 'Europe/Paris' },
      end: { dateTime: '2030-03-04T11:00:00+01:00', timeZone: 'Europe/Paris' },
      creator: { email: ADA, self: true },
      organizer: { email: ADA, self: true },
      guestsCanModify: true,
      guestsCanInviteOthers: false,
      guestsCanSeeOtherGuests: false,
      transparency: 'transparent',
      visibility: 'private',
      sequence: 0,
      eventType: 'default',
    });
    expect(ev.id).toMatch(/^[0-9a-v]{5,}$/);
    expect(ev.etag).toMatch(/^"\d+"$/);
    expect(ev.iCalUID).toBe(`${ev.id}@google.com`);
    expect(ev.htmlLink).toMatch(/^https:\/\/www\.google\.com\/calendar\/event\?eid=/);
    expect(ev.attendees?.find((a) => a.email === 'grace.hopper@example.com')?.responseStatus).toBe(
      'needsAction',
    );
    expect(ev.attendees?.find((a) => a.email === ADA)).toMatchObject({ organizer: true, self: true });
    expect(ev.hangoutLink).toMatch(/^https:\/\/meet\.google\.com\/[a-z]{3}-[a-z]{4}-[a-z]{3}$/);
    expect(ev.conferenceData?.entryPoints?.[0]).toMatchObject({
      entryPointType: 'video',
      uri: ev.hangoutLink,
    });
    expect(ev.conferenceData?.createRequest?.status?.statusCode).toBe('success');

    const got = await cal.events.get({ calendarId: 'primary', eventId: ev.id! });
    expect(got.data).toEqual(ev);
  });

  it('ignores conferenceData unless conferenceDataVersion=1', async () => {
    const ev = await cal.events.insert({
      calendarId: 'primary',
      requestBody: {
        summary: 'No meet',
        start: { dateTime: '2030-03-04T10:00:00Z' },
        end: { dateTime: '2030-03-04T10:30:00Z' },
        conferenceData: { createRequest: { requestId: 'req-2' } },
      },
    });
    expect(ev.data.conferenceData).toBeUndefined();
    expect(ev.data.hangoutLink).toBeUndefined();
  });

  it('patch changes only the given fields; update replaces the event', async () => {
    const created = await cal.events.insert({
      calendarId: 'primary',
      requestBody: {
        summary: 'Draft',
        description: 'keep me',
        location: 'Library',
        start: { date: '2030-05-01' },
        end: { date: '2030-05-02' },
      },
    });
    const id = created.data.id!;
    const patched = await cal.events.patch({
      calendarId: 'primary',
      eventId: id,
      requestBody: { summary: 'Final' },
    });
    expect(patched.data).toMatchObject({
      summary: 'Final',
      description: 'keep me',
      location: 'Library',
      sequence: 0,
    });
    expect(patched.data.etag).not.toBe(created.data.etag);
    expect(patched.data.created).toBe(created.data.created);

    const moved = await cal.events.patch({
      calendarId: 'primary',
      eventId: id,
      requestBody: { start: { date: '2030-05-03' }, end: { date: '2030-05-04' } },
    });
    expect(moved.data.sequence).toBe(1);
    expect(moved.data.start).toEqual({ date: '2030-05-03' });

    const replaced = await cal.events.update({
      calendarId: 'primary',
      eventId: id,
      requestBody: { summary: 'Replaced', start: { date: '2030-05-03' }, end: { date: '2030-05-04' } },
    });
    expect(replaced.data.summary).toBe('Replaced');
    expect(replaced.data.description).toBeUndefined();
    expect(replaced.data.location).toBeUndefined();
    expect(replaced.data.id).toBe(id);
  });

  it('delete answers 204, keeps a cancelled tombstone and a second delete is 410 deleted', async () => {
    const created = await cal.events.insert({
      calendarId: 'primary',
      requestBody: {
        summary: 'Doomed',
        start: { dateTime: '2030-01-01T09:00:00Z' },
        end: { dateTime: '2030-01-01T10:00:00Z' },
      },
    });
    const id = created.data.id!;
    const del = await cal.events.delete({ calendarId: 'primary', eventId: id });
    expect(del.status).toBe(204);

    const got = await cal.events.get({ calendarId: 'primary', eventId: id });
    expect(got.data.status).toBe('cancelled');
    const listed = await cal.events.list({ calendarId: 'primary', q: 'Doomed' });
    expect(listed.data.items).toEqual([]);
    const withDeleted = await cal.events.list({ calendarId: 'primary', q: 'Doomed', showDeleted: true });
    expect(withDeleted.data.items?.map((e) => e.status)).toEqual(['cancelled']);

    const again = await failure(cal.events.delete({ calendarId: 'primary', eventId: id }));
    expect(again.status).toBe(410);
    expect(again.body.error).toMatchObject({
      code: 410,
      message: 'Resource has been deleted',
      errors: [{ domain: 'global', reason: 'deleted', message: 'Resource has been deleted' }],
    });
  });

  it('answers 404 notFound for an unknown event or calendar', async () => {
    const missing = await failure(cal.events.get({ calendarId: 'primary', eventId: 'nosuchevent123' }));
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      code: 404,
      message: 'Not Found',
      errors: [{ domain: 'global', reason: 'notFound', message: 'Not Found' }],
    });
    const noCal = await failure(cal.events.list({ calendarId: 'nobody@example.com' }));
    expect(noCal.status).toBe(404);
  });

  it('searches with q across summary, description, location and attendees', async () => {
    await cal.events.insert({
      calendarId: 'primary',
      requestBody: {
        summary: 'Budget planning',
        location: 'Babbage Hall',
        attendees: [{ email: 'charles@example.com', displayName: 'Charles Babbage' }],
        start: { dateTime: '2030-02-01T09:00:00Z' },
        end: { dateTime: '2030-02-01T10:00:00Z' },
      },
    });
    const byLocation = await cal.events.list({ calendarId: 'primary', q: 'babbage hall' });
    expect(byLocation.data.items?.map((e) => e.summary)).toEqual(['Budget planning']);
    const byAttendee = await cal.events.list({ calendarId: 'primary', q: 'charles@example.com' });
    expect(byAttendee.data.items?.map((e) => e.summary)).toEqual(['Budget planning']);
    const none = await cal.events.list({ calendarId: 'primary', q: 'budget zebra' });
    expect(none.data.items).toEqual([]);
  });

  it('pages events with maxResults and pageToken without loss or repetition', async () => {
    const full = await cal.events.list({ calendarId: 'primary', singleEvents: true, orderBy: 'startTime' });
    const expected = full.data.items?.map((e) => e.id) ?? [];
    expect(expected.length).toBeGreaterThan(5);
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const res = await cal.events.list({
        calendarId: 'primary',
        singleEvents: true,
        orderBy: 'startTime',
        maxResults: 4,
        pageToken,
      });
      expect(res.data.items!.length).toBeLessThanOrEqual(4);
      seen.push(...(res.data.items ?? []).map((e) => e.id!));
      pageToken = res.data.nextPageToken ?? undefined;
      pages++;
    } while (pageToken);
    expect(pages).toBe(Math.ceil(expected.length / 4));
    expect(seen).toEqual(expected);
  });

  it('orders by updated without singleEvents', async () => {
    const res = await cal.events.list({ calendarId: 'primary', orderBy: 'updated' });
    const updated = res.data.items?.map((e) => e.updated!) ?? [];
    expect([...updated].sort()).toEqual(updated);
  });

  it('returns only changes after a sync token', async () => {
    const first = await cal.events.list({ calendarId: 'primary' });
    const syncToken = first.data.nextSyncToken!;
    expect(syncToken).toBeTruthy();
    await new Promise((r) => setTimeout(r, 5));
    const added = await cal.events.insert({
      calendarId: 'primary',
      requestBody: { summary: 'Fresh', start: { date: '2030-07-01' }, end: { date: '2030-07-02' } },
    });
    const changes = await cal.events.list({ calendarId: 'primary', syncToken });
    expect(changes.data.items?.map((e) => e.id)).toEqual([added.data.id]);
  });

  it('writes to the secondary calendar and refuses writes to a read-only one', async () => {
    const list = await cal.calendarList.list();
    const team = list.data.items!.find((c) => !c.primary && c.accessRole === 'owner')!;
    const shared = list.data.items!.find((c) => c.accessRole === 'reader')!;
    const ev = await cal.events.insert({
      calendarId: team.id!,
      requestBody: { summary: 'Team thing', start: { date: '2030-08-01' }, end: { date: '2030-08-02' } },
    });
    expect(ev.data.organizer).toMatchObject({ email: team.id, displayName: team.summary, self: true });
    const onShared = await cal.events.list({ calendarId: shared.id! });
    expect(onShared.data.accessRole).toBe('reader');
    expect(onShared.data.items!.length).toBeGreaterThan(0);
    const refused = await failure(
      cal.events.insert({
        calendarId: shared.id!,
        requestBody: { summary: 'Nope', start: { date: '2030-08-01' }, end: { date: '2030-08-02' } },
      }),
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error.errors?.[0]?.reason).toBe('requiredAccessLevel');
  });

  it('keeps data per user', async () => {
    const { api: graceCal } = googleClientFor(emu, 'grace.hopper@example.com', [CALENDAR], (auth) =>
      google.calendar({ version: 'v3', auth }),
    );
    const primary = await graceCal.calendars.get({ calendarId: 'primary' });
    expect(primary.data).toMatchObject({ id: 'grace.hopper@example.com', timeZone: 'America/New_York' });
    const adaOnly = await cal.events.insert({
      calendarId: 'primary',
      requestBody: { summary: 'Private to Ada', start: { date: '2030-09-01' }, end: { date: '2030-09-02' } },
    });
    const miss = await failure(graceCal.events.get({ calendarId: 'primary', eventId: adaOnly.data.id! }));
    expect(miss.status).toBe(404);
  });

  describe('errors on the wire', () => {
    it('refuses orderBy=startTime without singleEvents', async () => {
      const res = await raw('/calendar/v3/calendars/primary/events?orderBy=startTime');
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: {
          code: 400,
          message: 'The requested ordering is not available for the particular query.',
          errors: [{ domain: 'global', reason: 'invalid', location: 'orderBy', locationType: 'parameter' }],
        },
      });
    });

    it('refuses a timeMin without an offset and an empty time range', async () => {
      const noOffset = await raw('/calendar/v3/calendars/primary/events?timeMin=2030-01-01T00:00:00');
      expect(noOffset.status).toBe(400);
      const empty = await raw(
        '/calendar/v3/calendars/primary/events?timeMin=2030-01-02T00:00:00Z&timeMax=2030-01-01T00:00:00Z',
      );
      expect(empty.status).toBe(400);
      expect(((await empty.json()) as GoogleErrorBody).error.errors?.[0]?.reason).toBe('timeRangeEmpty');
    });

    it('answers 401 in Google shape for a bad or missing token', async () => {
      const bad = await fetch(`${emu.urls.google}/calendar/v3/users/me/calendarList`, {
        headers: { authorization: 'Bearer ya29.not-a-token' },
      });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toMatch(
        /^Bearer realm="https:\/\/accounts\.google\.com\/"/,
      );
      expect(await bad.json()).toEqual({
        error: {
          code: 401,
          message: expect.stringMatching(
            /^Request had invalid authentication credentials\. Expected OAuth 2 access token/,
          ),
          errors: [
            {
              message: 'Invalid Credentials',
              domain: 'global',
              reason: 'authError',
              location: 'Authorization',
              locationType: 'header',
            },
          ],
          status: 'UNAUTHENTICATED',
        },
      });
      const missing = await fetch(`${emu.urls.google}/calendar/v3/users/me/calendarList`);
      expect(missing.status).toBe(401);
      expect(((await missing.json()) as GoogleErrorBody).error.errors?.[0]?.reason).toBe('required');
    });

    it('answers 401 once the token has expired', async () => {
      emu.control.expireAccessTokens('google');
      const res = await raw('/calendar/v3/users/me/calendarList');
      expect(res.status).toBe(401);
    });

    it('answers 403 insufficientPermissions for a token without a Calendar scope', async () => {
      const drive = emu.control.issueToken('google', {
        userId: ADA,
        scopes: ['https://www.googleapis.com/auth/drive'],
      }).access_token;
      const res = await fetch(`${emu.urls.google}/calendar/v3/calendars/primary/events`, {
        headers: { authorization: `Bearer ${drive}` },
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
      expect(await res.json()).toMatchObject({
        error: {
          code: 403,
          message: 'Request had insufficient authentication scopes.',
          errors: [
            { message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' },
          ],
          status: 'PERMISSION_DENIED',
        },
      });
    });

    it('lets a read-only token list but not insert', async () => {
      const readonly = emu.control.issueToken('google', {
        userId: ADA,
        scopes: ['https://www.googleapis.com/auth/calendar.readonly'],
      }).access_token;
      const headers = { authorization: `Bearer ${readonly}`, 'content-type': 'application/json' };
      const list = await fetch(`${emu.urls.google}/calendar/v3/calendars/primary/events`, { headers });
      expect(list.status).toBe(200);
      const insert = await fetch(`${emu.urls.google}/calendar/v3/calendars/primary/events`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ summary: 'x', start: { date: '2030-01-01' }, end: { date: '2030-01-02' } }),
      });
      expect(insert.status).toBe(403);
    });

    it('validates event bodies', async () => {
      const noEnd = await raw('/calendar/v3/calendars/primary/events', {
        method: 'POST',
        body: JSON.stringify({ summary: 'x', start: { dateTime: '2030-01-01T10:00:00Z' } }),
      });
      expect(noEnd.status).toBe(400);
      expect(((await noEnd.json()) as GoogleErrorBody).error).toMatchObject({
        message: 'Missing end time.',
        errors: [{ reason: 'required' }],
      });
      const backwards = await raw('/calendar/v3/calendars/primary/events', {
        method: 'POST',
        body: JSON.stringify({
          start: { dateTime: '2030-01-01T10:00:00Z' },
          end: { dateTime: '2030-01-01T09:00:00Z' },
        }),
      });
      expect(((await backwards.json()) as GoogleErrorBody).error.errors?.[0]?.reason).toBe('timeRangeEmpty');
      const duplicate = await raw('/calendar/v3/calendars/primary/events', {
        method: 'POST',
        body: JSON.stringify({
          id: 'abcdef00001',
          start: { date: '2030-01-01' },
          end: { date: '2030-01-02' },
        }),
      });
      expect(duplicate.status).toBe(200);
      const again = await raw('/calendar/v3/calendars/primary/events', {
        method: 'POST',
        body: JSON.stringify({
          id: 'abcdef00001',
          start: { date: '2030-01-01' },
          end: { date: '2030-01-02' },
        }),
      });
      expect(again.status).toBe(409);
      const badRule = await raw('/calendar/v3/calendars/primary/events', {
        method: 'POST',
        body: JSON.stringify({
          recurrence: ['RRULE:FREQ=SOMETIMES'],
          start: { date: '2030-01-01' },
          end: { date: '2030-01-02' },
        }),
      });
      expect(badRule.status).toBe(400);
    });
  });
});
