import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { authorizeGoogle, GOOGLE_API_SCOPES } from '../scopes.js';
import { acceptEmptyJson, sendGoogleError } from '../shared.js';
import type { GoogleDataOf } from '../user-data.js';
import {
  bodyOf,
  type CalendarRoutes,
  locateEvent,
  notFound,
  notifyGuests,
  type Query,
  requireWriter,
  resolveCalendar,
  sendInputError,
  writeParams,
} from './api.js';
import { calendarListRoutes } from './calendar-list.js';
import { listEvents, listInstances } from './event-list.js';
import { writeEvent } from './event-write.js';
import {
  type CalendarEvent,
  type CalendarInputError,
  eventIdFor,
  instancesOf,
  isoMs,
  isValidEventId,
  nextEtag,
  type StoredEvent,
  timingOf,
} from './model.js';
import { parseDateTime } from './time.js';

export type { CalendarData } from './seed.js';
export { seedCalendar } from './seed.js';

const SERVICE = 'calendar-json.googleapis.com';

export function registerCalendarRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  dataOf: GoogleDataOf,
): void {
  app.register(async (scope) => {
    acceptEmptyJson(scope);
    calendarRoutes(scope, ctx, dataOf);
  });
}

function calendarRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  const routes: CalendarRoutes = {
    ctx,
    dataOf,
    auth: (req, reply, anyOf, method) =>
      authorizeGoogle(ctx, req, reply, { anyOf, service: SERVICE, method: `calendar.v3.${method}` }),
  };
  calendarListRoutes(app, routes);
  eventReadRoutes(app, routes);
  eventWriteRoutes(app, routes);
  freeBusyRoutes(app, routes);
}

/** Listing (with recurrence expansion, sync tokens and paging) and reading events. */
function eventReadRoutes(app: FastifyInstance, routes: CalendarRoutes): void {
  const { dataOf, auth } = routes;
  const scopes = GOOGLE_API_SCOPES;
  app.get<{ Params: { calendarId: string } }>('/calendar/v3/calendars/:calendarId/events', (req, reply) =>
    listEvents(routes, req, reply),
  );

  app.get<{ Params: { calendarId: string; eventId: string } }>(
    '/calendar/v3/calendars/:calendarId/events/:eventId/instances',
    (req, reply) => listInstances(routes, req, reply),
  );

  app.get<{ Params: { calendarId: string; eventId: string } }>(
    '/calendar/v3/calendars/:calendarId/events/:eventId',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendar.read, 'Events.Get');
      if (!who) return reply;
      const data = dataOf(who.user.id).calendar;
      const calendar = resolveCalendar(data, who.user, req.params.calendarId);
      const events = calendar ? data.events.get(calendar.id) : undefined;
      const found = calendar && events ? locateEvent(events, req.params.eventId, calendar) : undefined;
      // Cancelled events stay readable: "The get method always returns them."
      return found ? reply.send(found.event) : notFound(reply);
    },
  );
}

/** Creating, changing (patch merges, put replaces) and deleting events. */
function eventWriteRoutes(app: FastifyInstance, routes: CalendarRoutes): void {
  const { ctx, dataOf, auth } = routes;
  const scopes = GOOGLE_API_SCOPES;
  app.post<{ Params: { calendarId: string } }>('/calendar/v3/calendars/:calendarId/events', (req, reply) =>
    insertEvent(routes, req, reply),
  );
  app.patch('/calendar/v3/calendars/:calendarId/events/:eventId', changeEvent(routes, true));
  app.put('/calendar/v3/calendars/:calendarId/events/:eventId', changeEvent(routes, false));

  app.delete<{ Params: { calendarId: string; eventId: string } }>(
    '/calendar/v3/calendars/:calendarId/events/:eventId',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendar.write, 'Events.Delete');
      if (!who) return reply;
      const params = writeParams(reply, req.query as Query);
      if (!params) return reply;
      const data = dataOf(who.user.id).calendar;
      const calendar = resolveCalendar(data, who.user, req.params.calendarId);
      const events = calendar ? data.events.get(calendar.id) : undefined;
      const found = calendar && events ? locateEvent(events, req.params.eventId, calendar) : undefined;
      if (!calendar || !found) return notFound(reply);
      if (!requireWriter(reply, calendar)) return reply;
      if (found.event.status === 'cancelled') {
        return sendGoogleError(reply, 410, 'Resource has been deleted', { reason: 'deleted' });
      }
      const now = ctx.clock();
      // Calendar keeps deleted events as cancelled tombstones so sync clients learn of the deletion.
      const tombstone: CalendarEvent = {
        ...found.event,
        status: 'cancelled',
        updated: isoMs(now),
        etag: nextEtag(now),
      };
      if (found.instanceKey) found.stored.exceptions.set(found.instanceKey, tombstone);
      else found.stored.resource = tombstone;
      notifyGuests(data, calendar.id, tombstone, params.sendUpdates, 'cancellation', now);
      return reply.code(204).send();
    },
  );
}

/** events.insert, with a client-chosen id when given (it must be base32hex and not taken). */
async function insertEvent(
  { ctx, dataOf, auth }: CalendarRoutes,
  req: FastifyRequest<{ Params: { calendarId: string } }>,
  reply: FastifyReply,
) {
  const who = auth(req, reply, GOOGLE_API_SCOPES.calendar.write, 'Events.Insert');
  if (!who) return reply;
  const params = writeParams(reply, req.query as Query);
  if (!params) return reply;
  const data = dataOf(who.user.id).calendar;
  const calendar = resolveCalendar(data, who.user, req.params.calendarId);
  if (!calendar) return notFound(reply);
  if (!requireWriter(reply, calendar)) return reply;
  const body = bodyOf(req);
  if (!body) return sendGoogleError(reply, 400, 'Missing end time.', { reason: 'required' });
  const events = data.events.get(calendar.id) as Map<string, StoredEvent>;
  let newId: string | undefined;
  if (body.id !== undefined) {
    if (typeof body.id !== 'string' || !isValidEventId(body.id)) {
      return sendGoogleError(reply, 400, 'Invalid resource id value.', { reason: 'invalid' });
    }
    if (events.has(body.id)) {
      return sendGoogleError(reply, 409, 'The requested identifier already exists.', {
        reason: 'duplicate',
      });
    }
    newId = body.id;
  }
  const event = writeEvent(body, {
    calendar,
    user: who.user,
    now: ctx.clock(),
    conferenceDataVersion: params.conferenceDataVersion,
    merge: false,
    newId: newId ?? eventIdFor(),
  });
  if ('message' in event) return sendInputError(reply, event as CalendarInputError);
  events.set(event.id, { resource: event as CalendarEvent, exceptions: new Map() });
  notifyGuests(data, calendar.id, event as CalendarEvent, params.sendUpdates, 'invitation', ctx.clock());
  return reply.send(event);
}

/** events.patch (merge) or events.update; an instance id changes that instance alone. */
function changeEvent({ ctx, dataOf, auth }: CalendarRoutes, merge: boolean) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const { calendarId, eventId } = req.params as { calendarId: string; eventId: string };
    const who = auth(req, reply, GOOGLE_API_SCOPES.calendar.write, merge ? 'Events.Patch' : 'Events.Update');
    if (!who) return reply;
    const params = writeParams(reply, req.query as Query);
    if (!params) return reply;
    const data = dataOf(who.user.id).calendar;
    const calendar = resolveCalendar(data, who.user, calendarId);
    const events = calendar ? data.events.get(calendar.id) : undefined;
    const found = calendar && events ? locateEvent(events, eventId, calendar) : undefined;
    if (!calendar || !found) return notFound(reply);
    if (!requireWriter(reply, calendar)) return reply;
    const body = bodyOf(req) ?? {};
    const event = writeEvent(found.instanceKey ? { ...body, recurrence: null } : body, {
      calendar,
      user: who.user,
      now: ctx.clock(),
      conferenceDataVersion: params.conferenceDataVersion,
      merge,
      existing: found.event,
    });
    if ('message' in event) return sendInputError(reply, event as CalendarInputError);
    const updated = event as CalendarEvent;
    if (found.instanceKey) found.stored.exceptions.set(found.instanceKey, updated);
    else found.stored.resource = updated;
    notifyGuests(data, calendar.id, updated, params.sendUpdates, 'update', ctx.clock());
    return reply.send(updated);
  };
}

/** Busy intervals across calendars. */
function freeBusyRoutes(app: FastifyInstance, { dataOf, auth }: CalendarRoutes): void {
  const scopes = GOOGLE_API_SCOPES;
  app.post('/calendar/v3/freeBusy', async (req, reply) => {
    const who = auth(req, reply, scopes.calendar.read, 'Freebusy.Query');
    if (!who) return reply;
    const body = (bodyOf(req) ?? {}) as {
      timeMin?: string;
      timeMax?: string;
      items?: Array<{ id?: string }>;
    };
    const timeMin = typeof body.timeMin === 'string' ? parseDateTime(body.timeMin) : null;
    const timeMax = typeof body.timeMax === 'string' ? parseDateTime(body.timeMax) : null;
    if (timeMin === null)
      return sendGoogleError(reply, 400, 'Missing timeMin parameter.', { reason: 'required' });
    if (timeMax === null)
      return sendGoogleError(reply, 400, 'Missing timeMax parameter.', { reason: 'required' });
    if (timeMin >= timeMax)
      return sendGoogleError(reply, 400, 'The specified time range is empty.', { reason: 'timeRangeEmpty' });
    const data = dataOf(who.user.id).calendar;
    const calendars: Record<string, unknown> = {};
    for (const item of body.items ?? []) {
      const id = item.id ?? '';
      const calendar = resolveCalendar(data, who.user, id);
      if (!calendar) {
        calendars[id] = { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] };
        continue;
      }
      const busy: Array<{ start: string; end: string }> = [];
      for (const stored of data.events.get(calendar.id)?.values() ?? []) {
        const list = stored.resource.recurrence
          ? instancesOf(stored, calendar.timeZone, timeMax)
          : [stored.resource];
        for (const ev of list) {
          if (ev.status === 'cancelled' || ev.transparency === 'transparent') continue;
          const t = timingOf(ev, calendar.timeZone);
          if (t.endMs > timeMin && t.startMs < timeMax) {
            busy.push({
              start: isoMs(Math.max(t.startMs, timeMin)).replace('.000', ''),
              end: isoMs(Math.min(t.endMs, timeMax)).replace('.000', ''),
            });
          }
        }
      }
      busy.sort((a, b) => a.start.localeCompare(b.start));
      calendars[id] = { busy };
    }
    return reply.send({
      kind: 'calendar#freeBusy',
      timeMin: isoMs(timeMin),
      timeMax: isoMs(timeMax),
      calendars,
    });
  });
}
