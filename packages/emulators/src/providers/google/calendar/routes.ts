import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import { authorizeGoogle, GOOGLE_API_SCOPES } from '../scopes.js';
import { acceptEmptyJson, sendGoogleError } from '../shared.js';
import type { GoogleDataOf } from '../user-data.js';
import {
  type CalendarEntry,
  type CalendarEvent,
  type CalendarInputError,
  eventIdFor,
  instanceOf,
  instancesOf,
  isoMs,
  isValidEventId,
  matchesQuery,
  nextEtag,
  occurrenceFor,
  parseInstanceId,
  type StoredEvent,
  timingOf,
  writeEvent,
} from './model.js';
import type { CalendarData } from './seed.js';
import { parseDateTime } from './time.js';

export type { CalendarData } from './seed.js';
export { seedCalendar } from './seed.js';

const SERVICE = 'calendar-json.googleapis.com';
const DAY_MS = 86_400_000;
/** How far ahead an open-ended recurrence is expanded when the query sets no timeMax. */
const OPEN_HORIZON_MS = 730 * DAY_MS;

type Query = Record<string, string | undefined>;

function badParam(reply: FastifyReply, location: string, message = 'Invalid Value', reason = 'invalid') {
  return sendGoogleError(reply, 400, message, { reason, location, locationType: 'parameter' });
}

function notFound(reply: FastifyReply) {
  return sendGoogleError(reply, 404, 'Not Found', { reason: 'notFound' });
}

function sendInputError(reply: FastifyReply, e: CalendarInputError) {
  return sendGoogleError(reply, e.status, e.message, { reason: e.reason, location: e.location });
}

function parseBool(value: string | undefined): boolean {
  return value === 'true';
}

/** Page tokens are opaque to clients; an offset is all the emulator needs to resume. */
function encodePageToken(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

function decodePageToken(token: string): number | null {
  try {
    const o = (JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { o?: unknown }).o;
    return typeof o === 'number' && Number.isInteger(o) && o >= 0 ? o : null;
  } catch {
    return null;
  }
}

/** Sync tokens carry the instant of the listing; a later sync returns what changed since. */
function encodeSyncToken(ms: number): string {
  return `CP${Buffer.from(JSON.stringify({ s: ms })).toString('base64url')}`;
}

function decodeSyncToken(token: string): number | null {
  if (!token.startsWith('CP')) return null;
  try {
    const s = (JSON.parse(Buffer.from(token.slice(2), 'base64url').toString('utf8')) as { s?: unknown }).s;
    return typeof s === 'number' ? s : null;
  } catch {
    return null;
  }
}

function parseMaxResults(value: string | undefined, fallback: number, ceiling: number): number | null {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) return null;
  return Math.min(n, ceiling);
}

function resolveCalendar(data: CalendarData, user: EmulatedUser, id: string): CalendarEntry | undefined {
  return data.calendars.get(id === 'primary' ? user.email : id);
}

function canWrite(calendar: CalendarEntry): boolean {
  return calendar.accessRole === 'owner' || calendar.accessRole === 'writer';
}

function defaultReminders(calendar: CalendarEntry) {
  return canWrite(calendar) ? [{ method: 'popup', minutes: 10 }] : [];
}

function listEntry(c: CalendarEntry) {
  const out: Record<string, unknown> = {
    kind: 'calendar#calendarListEntry',
    etag: c.etag,
    id: c.id,
    summary: c.summary,
  };
  if (c.description) out.description = c.description;
  Object.assign(out, {
    timeZone: c.timeZone,
    colorId: c.colorId,
    backgroundColor: c.backgroundColor,
    foregroundColor: c.foregroundColor,
    selected: true,
    accessRole: c.accessRole,
    defaultReminders: defaultReminders(c),
  });
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
  out.conferenceProperties = { allowedConferenceSolutionTypes: ['hangoutsMeet'] };
  return out;
}

const ACCESS_RANK: Record<CalendarEntry['accessRole'], number> = {
  freeBusyReader: 0,
  reader: 1,
  writer: 2,
  owner: 3,
};

interface Located {
  stored: StoredEvent;
  /** Set when the id names one instance of a recurring event. */
  instanceKey?: string;
  event: CalendarEvent;
}

/** Finds an event or one instance of a recurring event (`<id>_<start>`), as events.get accepts both. */
function locateEvent(
  events: Map<string, StoredEvent>,
  eventId: string,
  calendar: CalendarEntry,
): Located | undefined {
  const stored = events.get(eventId);
  if (stored) return { stored, event: stored.resource };
  const parsed = parseInstanceId(eventId);
  if (!parsed) return undefined;
  const master = events.get(parsed.masterId);
  if (!master?.resource.recurrence) return undefined;
  const exception = master.exceptions.get(parsed.key);
  if (exception) return { stored: master, instanceKey: parsed.key, event: exception };
  const occurrence = occurrenceFor(master, parsed.key, calendar.timeZone);
  if (!occurrence) return undefined;
  return {
    stored: master,
    instanceKey: parsed.key,
    event: instanceOf(master.resource, occurrence, calendar.timeZone),
  };
}

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

/** What every group of calendar routes needs: the emulator, the user's data and the scope check. */
interface CalendarRoutes {
  ctx: ProviderContext;
  dataOf: GoogleDataOf;
  auth(
    req: FastifyRequest,
    reply: FastifyReply,
    anyOf: readonly string[],
    method: string,
  ): ReturnType<typeof authorizeGoogle>;
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

function writeParams(reply: FastifyReply, q: Query): { conferenceDataVersion: number } | null {
  const version = q.conferenceDataVersion === undefined ? 0 : Number(q.conferenceDataVersion);
  if (!Number.isInteger(version) || version < 0 || version > 1) {
    badParam(reply, 'conferenceDataVersion');
    return null;
  }
  if (q.sendUpdates !== undefined && !['all', 'externalOnly', 'none'].includes(q.sendUpdates)) {
    badParam(reply, 'sendUpdates');
    return null;
  }
  return { conferenceDataVersion: version };
}

function requireWriter(reply: FastifyReply, calendar: CalendarEntry): boolean {
  if (canWrite(calendar)) return true;
  sendGoogleError(reply, 403, 'You need to have writer access to this calendar.', {
    reason: 'requiredAccessLevel',
  });
  return false;
}

function bodyOf(req: FastifyRequest): Record<string, unknown> | null {
  return req.body && typeof req.body === 'object' && !Array.isArray(req.body)
    ? (req.body as Record<string, unknown>)
    : null;
}

/** The user's calendar list and calendars. */
function calendarListRoutes(app: FastifyInstance, { ctx, dataOf, auth }: CalendarRoutes): void {
  const scopes = GOOGLE_API_SCOPES;
  app.get('/calendar/v3/users/me/calendarList', async (req, reply) => {
    const who = auth(req, reply, scopes.calendarList.read, 'CalendarList.List');
    if (!who) return reply;
    const q = req.query as Query;
    const data = dataOf(who.user.id).calendar;
    const max = parseMaxResults(q.maxResults, 100, 250);
    if (max === null) return badParam(reply, 'maxResults');
    const minRole = q.minAccessRole as CalendarEntry['accessRole'] | undefined;
    if (minRole !== undefined && ACCESS_RANK[minRole] === undefined) return badParam(reply, 'minAccessRole');
    const all = [...data.calendars.values()].filter(
      (c) => !minRole || ACCESS_RANK[c.accessRole] >= ACCESS_RANK[minRole],
    );
    const offset = q.pageToken === undefined ? 0 : decodePageToken(q.pageToken);
    if (offset === null) return badParam(reply, 'pageToken');
    const page = all.slice(offset, offset + max);
    const body: Record<string, unknown> = { kind: 'calendar#calendarList', etag: `"p${ctx.clock()}"` };
    if (offset + max < all.length) body.nextPageToken = encodePageToken(offset + max);
    else body.nextSyncToken = encodeSyncToken(ctx.clock());
    body.items = page.map(listEntry);
    return reply.send(body);
  });

  app.get<{ Params: { calendarId: string } }>(
    '/calendar/v3/users/me/calendarList/:calendarId',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendarList.read, 'CalendarList.Get');
      if (!who) return reply;
      const calendar = resolveCalendar(dataOf(who.user.id).calendar, who.user, req.params.calendarId);
      return calendar ? reply.send(listEntry(calendar)) : notFound(reply);
    },
  );

  app.get<{ Params: { calendarId: string } }>('/calendar/v3/calendars/:calendarId', async (req, reply) => {
    const who = auth(req, reply, scopes.calendarList.read, 'Calendars.Get');
    if (!who) return reply;
    const c = resolveCalendar(dataOf(who.user.id).calendar, who.user, req.params.calendarId);
    if (!c) return notFound(reply);
    return reply.send({
      kind: 'calendar#calendar',
      etag: c.etag,
      id: c.id,
      summary: c.summary,
      ...(c.description ? { description: c.description } : {}),
      timeZone: c.timeZone,
      conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
    });
  });
}

/** Listing (with recurrence expansion, sync tokens and paging) and reading events. */
function eventReadRoutes(app: FastifyInstance, { ctx, dataOf, auth }: CalendarRoutes): void {
  const scopes = GOOGLE_API_SCOPES;
  app.get<{ Params: { calendarId: string } }>(
    '/calendar/v3/calendars/:calendarId/events',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendar.read, 'Events.List');
      if (!who) return reply;
      const q = req.query as Query;
      const data = dataOf(who.user.id).calendar;
      const calendar = resolveCalendar(data, who.user, req.params.calendarId);
      if (!calendar) return notFound(reply);
      const events = data.events.get(calendar.id) ?? new Map<string, StoredEvent>();

      const singleEvents = parseBool(q.singleEvents);
      if (q.orderBy !== undefined) {
        if (q.orderBy !== 'startTime' && q.orderBy !== 'updated') return badParam(reply, 'orderBy');
        if (q.orderBy === 'startTime' && !singleEvents) {
          return badParam(
            reply,
            'orderBy',
            'The requested ordering is not available for the particular query.',
          );
        }
      }
      const max = parseMaxResults(q.maxResults, 250, 2500);
      if (max === null) return badParam(reply, 'maxResults');
      const timeMin = q.timeMin === undefined ? undefined : parseDateTime(q.timeMin);
      const timeMax = q.timeMax === undefined ? undefined : parseDateTime(q.timeMax);
      const updatedMin = q.updatedMin === undefined ? undefined : parseDateTime(q.updatedMin);
      if (timeMin === null || timeMax === null || updatedMin === null) {
        return sendGoogleError(reply, 400, 'Bad Request', { reason: 'badRequest' });
      }
      if (timeMin !== undefined && timeMax !== undefined && timeMin >= timeMax) {
        return badParam(reply, 'timeMax', 'The specified time range is empty.', 'timeRangeEmpty');
      }
      let changedSince = updatedMin;
      if (q.syncToken !== undefined) {
        if (q.timeMin || q.timeMax || q.q || q.orderBy || q.updatedMin || q.iCalUID) {
          return badParam(reply, 'syncToken', 'Sync token cannot be used with other request restrictions.');
        }
        const since = decodeSyncToken(q.syncToken);
        if (since === null) {
          return sendGoogleError(reply, 410, 'Sync token is no longer valid, a full sync is required.', {
            reason: 'fullSyncRequired',
          });
        }
        changedSince = since;
      }
      // Deleted events only appear when asked for, or in incremental results.
      const showDeleted = parseBool(q.showDeleted) || changedSince !== undefined;
      const offset = q.pageToken === undefined ? 0 : decodePageToken(q.pageToken);
      if (offset === null) return badParam(reply, 'pageToken');

      const horizon = (ev: CalendarEvent) =>
        timeMax ??
        Math.max(ctx.clock(), timeMin ?? 0, timingOf(ev, calendar.timeZone).startMs) + OPEN_HORIZON_MS;
      const overlaps = (ev: CalendarEvent) => {
        const t = timingOf(ev, calendar.timeZone);
        return (timeMin === undefined || t.endMs > timeMin) && (timeMax === undefined || t.startMs < timeMax);
      };
      const keep = (ev: CalendarEvent) =>
        (showDeleted || ev.status !== 'cancelled') &&
        (changedSince === undefined || Date.parse(ev.updated) >= changedSince) &&
        (q.q === undefined || matchesQuery(ev, q.q)) &&
        (q.iCalUID === undefined || ev.iCalUID === q.iCalUID);

      const items: CalendarEvent[] = [];
      for (const stored of events.values()) {
        const ev = stored.resource;
        if (!ev.recurrence) {
          if (keep(ev) && overlaps(ev)) items.push(ev);
          continue;
        }
        if (ev.status === 'cancelled') {
          if (keep(ev)) items.push(ev);
          continue;
        }
        const instances = instancesOf(stored, calendar.timeZone, horizon(ev));
        if (singleEvents) {
          items.push(...instances.filter((i) => keep(i) && overlaps(i)));
        } else {
          if (keep(ev) && instances.some(overlaps)) items.push(ev);
          // Changed instances are listed beside their master, as Calendar does.
          for (const ex of stored.exceptions.values()) if (keep(ex) && overlaps(ex)) items.push(ex);
        }
      }
      if (q.orderBy === 'startTime') {
        items.sort(
          (a, b) =>
            timingOf(a, calendar.timeZone).startMs - timingOf(b, calendar.timeZone).startMs ||
            a.id.localeCompare(b.id),
        );
      } else if (q.orderBy === 'updated') {
        items.sort((a, b) => a.updated.localeCompare(b.updated) || a.id.localeCompare(b.id));
      }

      const page = items.slice(offset, offset + max);
      const updated = isoMs(items.reduce((m, e) => Math.max(m, Date.parse(e.updated)), ctx.clock() - DAY_MS));
      const body: Record<string, unknown> = {
        kind: 'calendar#events',
        etag: `"p${Date.parse(updated)}"`,
        summary: calendar.summary,
        ...(calendar.description ? { description: calendar.description } : {}),
        updated,
        timeZone: calendar.timeZone,
        accessRole: calendar.accessRole,
        defaultReminders: defaultReminders(calendar),
      };
      if (offset + max < items.length) body.nextPageToken = encodePageToken(offset + max);
      else body.nextSyncToken = encodeSyncToken(ctx.clock());
      body.items = page;
      return reply.send(body);
    },
  );

  app.get<{ Params: { calendarId: string; eventId: string } }>(
    '/calendar/v3/calendars/:calendarId/events/:eventId/instances',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendar.read, 'Events.Instances');
      if (!who) return reply;
      const q = req.query as Query;
      const data = dataOf(who.user.id).calendar;
      const calendar = resolveCalendar(data, who.user, req.params.calendarId);
      const stored = calendar ? data.events.get(calendar.id)?.get(req.params.eventId) : undefined;
      if (!calendar || !stored) return notFound(reply);
      const max = parseMaxResults(q.maxResults, 250, 2500);
      if (max === null) return badParam(reply, 'maxResults');
      const timeMin = q.timeMin === undefined ? undefined : parseDateTime(q.timeMin);
      const timeMax = q.timeMax === undefined ? undefined : parseDateTime(q.timeMax);
      if (timeMin === null || timeMax === null)
        return sendGoogleError(reply, 400, 'Bad Request', { reason: 'badRequest' });
      const offset = q.pageToken === undefined ? 0 : decodePageToken(q.pageToken);
      if (offset === null) return badParam(reply, 'pageToken');
      const horizon = (ev: CalendarEvent) =>
        timeMax ??
        Math.max(ctx.clock(), timeMin ?? 0, timingOf(ev, calendar.timeZone).startMs) + OPEN_HORIZON_MS;
      const items = (
        stored.resource.recurrence
          ? instancesOf(stored, calendar.timeZone, horizon(stored.resource))
          : [stored.resource]
      ).filter((ev) => {
        const t = timingOf(ev, calendar.timeZone);
        return (
          (parseBool(q.showDeleted) || ev.status !== 'cancelled') &&
          (timeMin === undefined || t.endMs > timeMin) &&
          (timeMax === undefined || t.startMs < timeMax)
        );
      });
      const body: Record<string, unknown> = {
        kind: 'calendar#events',
        etag: stored.resource.etag,
        summary: calendar.summary,
        updated: stored.resource.updated,
        timeZone: calendar.timeZone,
        accessRole: calendar.accessRole,
        defaultReminders: defaultReminders(calendar),
      };
      if (offset + max < items.length) body.nextPageToken = encodePageToken(offset + max);
      body.items = items.slice(offset, offset + max);
      return reply.send(body);
    },
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
function eventWriteRoutes(app: FastifyInstance, { ctx, dataOf, auth }: CalendarRoutes): void {
  const scopes = GOOGLE_API_SCOPES;
  app.post<{ Params: { calendarId: string } }>(
    '/calendar/v3/calendars/:calendarId/events',
    async (req, reply) => {
      const who = auth(req, reply, scopes.calendar.write, 'Events.Insert');
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
      return reply.send(event);
    },
  );

  const change = (merge: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const { calendarId, eventId } = req.params as { calendarId: string; eventId: string };
    const who = auth(req, reply, scopes.calendar.write, merge ? 'Events.Patch' : 'Events.Update');
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
    return reply.send(updated);
  };
  app.patch('/calendar/v3/calendars/:calendarId/events/:eventId', change(true));
  app.put('/calendar/v3/calendars/:calendarId/events/:eventId', change(false));

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
      return reply.code(204).send();
    },
  );
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
