import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser } from '../../../core/types.js';
import { GOOGLE_API_SCOPES } from '../scopes.js';
import { sendGoogleError } from '../shared.js';
import {
  badParam,
  bodyOf,
  type CalendarRoutes,
  decodePageToken,
  decodeSyncToken,
  defaultReminders,
  encodePageToken,
  encodeSyncToken,
  notFound,
  parseBool,
  parseMaxResults,
  type Query,
  resolveCalendar,
} from './api.js';
import { type CalendarEntry, nextEtag } from './model.js';
import { entry, groupCalendarId } from './seed.js';
import { isValidTimeZone } from './time.js';

// The user's calendar list (calendarList.list/get/patch/delete, with incremental sync) and the
// calendars themselves (calendars.get/insert).

function listEntry(c: CalendarEntry) {
  const out: Record<string, unknown> = {
    kind: 'calendar#calendarListEntry',
    etag: c.etag,
    id: c.id,
    summary: c.summary,
  };
  if (c.description) out.description = c.description;
  if (c.summaryOverride !== undefined) out.summaryOverride = c.summaryOverride;
  Object.assign(out, {
    timeZone: c.timeZone,
    colorId: c.colorId,
    backgroundColor: c.backgroundColor,
    foregroundColor: c.foregroundColor,
  });
  // Google prints these flags only when they are set.
  if (c.hidden) out.hidden = true;
  if (c.selected) out.selected = true;
  out.accessRole = c.accessRole;
  out.defaultReminders = defaultReminders(c);
  if (c.primary) {
    out.notificationSettings = {
      notifications: [
        { type: 'eventCreation', method: 'email' },
        { type: 'eventChange', method: 'email' },
        { type: 'eventCancellation', method: 'email' },
        { type: 'eventResponse', method: 'email' },
      ],
    };
    out.primary = true;
  }
  if (c.deleted) out.deleted = true;
  out.conferenceProperties = { allowedConferenceSolutionTypes: ['hangoutsMeet'] };
  return out;
}

function calendarResource(c: CalendarEntry) {
  return {
    kind: 'calendar#calendar',
    etag: c.etag,
    id: c.id,
    summary: c.summary,
    ...(c.description ? { description: c.description } : {}),
    timeZone: c.timeZone,
    conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
  };
}

const ACCESS_RANK: Record<CalendarEntry['accessRole'], number> = {
  freeBusyReader: 0,
  reader: 1,
  writer: 2,
  owner: 3,
};

/** calendarList.list: a page of the user's entries, or with a sync token those changed since. */
function listCalendarList(
  { ctx, dataOf, auth }: CalendarRoutes,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const scopes = GOOGLE_API_SCOPES;
  const who = auth(req, reply, scopes.calendarList.read, 'CalendarList.List');
  if (!who) return reply;
  const q = req.query as Query;
  const data = dataOf(who.user.id).calendar;
  const max = parseMaxResults(q.maxResults, 100, 250);
  if (max === null) return badParam(reply, 'maxResults');
  const minRole = q.minAccessRole as CalendarEntry['accessRole'] | undefined;
  if (minRole !== undefined && ACCESS_RANK[minRole] === undefined) return badParam(reply, 'minAccessRole');
  let since: number | undefined;
  if (q.syncToken !== undefined) {
    // The discovery document: minAccessRole cannot come with a sync token, and showDeleted and
    // showHidden cannot be false (removed and hidden entries are always in an incremental result).
    if (minRole !== undefined || q.showDeleted === 'false' || q.showHidden === 'false') {
      return badParam(reply, 'syncToken', 'Sync token cannot be used with other request restrictions.');
    }
    const decoded = decodeSyncToken(q.syncToken);
    // A token the emulator did not issue (or from its future) is as good as expired.
    if (decoded === null || decoded > ctx.clock()) {
      return sendGoogleError(reply, 410, 'Sync token is no longer valid, a full sync is required.', {
        reason: 'fullSyncRequired',
      });
    }
    since = decoded;
  }
  const showDeleted = since !== undefined || parseBool(q.showDeleted);
  const showHidden = since !== undefined || parseBool(q.showHidden);
  const all = [...data.calendars.values()].filter(
    (c) =>
      (showDeleted || !c.deleted) &&
      (showHidden || !c.hidden) &&
      (since === undefined || c.updatedMs >= since) &&
      (!minRole || ACCESS_RANK[c.accessRole] >= ACCESS_RANK[minRole]),
  );
  const offset = q.pageToken === undefined ? 0 : decodePageToken(q.pageToken);
  if (offset === null) return badParam(reply, 'pageToken');
  const page = all.slice(offset, offset + max);
  const body: Record<string, unknown> = { kind: 'calendar#calendarList', etag: `"p${ctx.clock()}"` };
  if (offset + max < all.length) body.nextPageToken = encodePageToken(offset + max);
  else body.nextSyncToken = encodeSyncToken(ctx.clock());
  body.items = page.map(listEntry);
  return reply.send(body);
}

/** Marks a list entry as changed now, so the next incremental sync returns it. */
function touch(c: CalendarEntry, now: number): void {
  c.updatedMs = now;
  c.etag = nextEtag(now);
}

export function calendarListRoutes(app: FastifyInstance, routes: CalendarRoutes): void {
  const { ctx, dataOf, auth } = routes;
  const scopes = GOOGLE_API_SCOPES;
  app.get('/calendar/v3/users/me/calendarList', (req, reply) => listCalendarList(routes, req, reply));

  /** The user's list entry for a calendar id ("primary" too); removed entries are not on the list. */
  const onList = (user: EmulatedUser, calendarId: string) => {
    const found = resolveCalendar(dataOf(user.id).calendar, user, calendarId);
    return found && !found.deleted ? found : undefined;
  };

  app.get<{ Params: { calendarId: string } }>(
    '/calendar/v3/users/me/calendarList/:calendarId',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendarList.read, 'CalendarList.Get');
      if (!who) return reply;
      const calendar = onList(who.user, req.params.calendarId);
      return calendar ? reply.send(listEntry(calendar)) : notFound(reply);
    },
  );

  app.patch<{ Params: { calendarId: string } }>(
    '/calendar/v3/users/me/calendarList/:calendarId',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendarList.write, 'CalendarList.Patch');
      if (!who) return reply;
      const calendar = onList(who.user, req.params.calendarId);
      if (!calendar) return notFound(reply);
      const body = bodyOf(req) ?? {};
      for (const field of ['hidden', 'selected'] as const) {
        if (body[field] !== undefined && typeof body[field] !== 'boolean') {
          return sendGoogleError(reply, 400, 'Invalid Value', { reason: 'invalid' });
        }
      }
      for (const field of ['summaryOverride', 'colorId'] as const) {
        if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'string') {
          return sendGoogleError(reply, 400, 'Invalid Value', { reason: 'invalid' });
        }
      }
      if (typeof body.hidden === 'boolean') calendar.hidden = body.hidden;
      if (typeof body.selected === 'boolean') calendar.selected = body.selected;
      if (typeof body.colorId === 'string') calendar.colorId = body.colorId;
      if (body.summaryOverride === null) delete calendar.summaryOverride;
      else if (typeof body.summaryOverride === 'string') calendar.summaryOverride = body.summaryOverride;
      touch(calendar, ctx.clock());
      return reply.send(listEntry(calendar));
    },
  );

  app.delete<{ Params: { calendarId: string } }>(
    '/calendar/v3/users/me/calendarList/:calendarId',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendarList.write, 'CalendarList.Delete');
      if (!who) return reply;
      const calendar = onList(who.user, req.params.calendarId);
      if (!calendar) return notFound(reply);
      // The primary calendar always stays on its owner's list (Google's exact answer is undocumented).
      if (calendar.primary) {
        return sendGoogleError(reply, 400, 'The primary calendar cannot be removed from the calendar list.', {
          reason: 'invalid',
        });
      }
      // The calendar itself stays (events stay readable by id); only the user's entry is removed.
      calendar.deleted = true;
      calendar.selected = false;
      touch(calendar, ctx.clock());
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { calendarId: string } }>('/calendar/v3/calendars/:calendarId', async (req, reply) => {
    const who = auth(req, reply, scopes.calendarList.read, 'Calendars.Get');
    if (!who) return reply;
    const c = resolveCalendar(dataOf(who.user.id).calendar, who.user, req.params.calendarId);
    return c ? reply.send(calendarResource(c)) : notFound(reply);
  });

  app.post('/calendar/v3/calendars', (req, reply) => insertCalendar(routes, req, reply));
}

/** calendars.insert: a new secondary calendar the user owns, added to their list. */
function insertCalendar(
  { ctx, dataOf, auth }: CalendarRoutes,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const scopes = GOOGLE_API_SCOPES;
  const who = auth(req, reply, scopes.calendarList.write, 'Calendars.Insert');
  if (!who) return reply;
  const data = dataOf(who.user.id).calendar;
  const body = bodyOf(req) ?? {};
  if (typeof body.summary !== 'string' || body.summary === '') {
    return sendGoogleError(reply, 400, 'Missing title.', { reason: 'required' });
  }
  if (body.timeZone !== undefined && (typeof body.timeZone !== 'string' || !isValidTimeZone(body.timeZone))) {
    return sendGoogleError(reply, 400, 'Invalid Value', { reason: 'invalid' });
  }
  const primary = resolveCalendar(data, who.user, 'primary');
  const now = ctx.clock();
  // A new secondary calendar: the user owns it and it joins their list, in their own zone unless set.
  const calendar = entry(
    groupCalendarId(randomUUID()),
    body.summary,
    (body.timeZone as string | undefined) ?? primary?.timeZone ?? 'UTC',
    'owner',
    false,
    data.calendars.size,
    now,
  );
  if (typeof body.description === 'string' && body.description !== '')
    calendar.description = body.description;
  touch(calendar, now);
  data.calendars.set(calendar.id, calendar);
  data.events.set(calendar.id, new Map());
  return reply.send(calendarResource(calendar));
}
