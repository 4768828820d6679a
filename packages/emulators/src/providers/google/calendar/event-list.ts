import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { GOOGLE_API_SCOPES } from '../scopes.js';
import { sendGoogleError } from '../shared.js';
import {
  badParam,
  type CalendarRoutes,
  DAY_MS,
  decodePageToken,
  decodeSyncToken,
  defaultReminders,
  encodePageToken,
  encodeSyncToken,
  notFound,
  OPEN_HORIZON_MS,
  parseBool,
  parseMaxResults,
  type Query,
  resolveCalendar,
} from './api.js';
import {
  type CalendarEntry,
  type CalendarEvent,
  instancesOf,
  isoMs,
  matchesQuery,
  type StoredEvent,
  timingOf,
} from './model.js';
import { parseDateTime } from './time.js';

// Listing events: events.list (recurrence expansion, sync tokens, paging) and events.instances.

type CalendarRequest = FastifyRequest<{ Params: { calendarId: string } }>;
type EventRequest = FastifyRequest<{ Params: { calendarId: string; eventId: string } }>;

/** The events list's query once checked: which events, in what order, and which page. */
interface EventListQuery {
  q: Query;
  singleEvents: boolean;
  max: number;
  timeMin: number | undefined;
  timeMax: number | undefined;
  /** From updatedMin, or the instant a sync token carries. */
  changedSince: number | undefined;
  showDeleted: boolean;
  offset: number;
}

/**
 * Until when a recurrence is expanded: the query's timeMax, else a fixed horizon past the latest of
 * now, timeMin and the event's start, as an open-ended rule has no last instance.
 */
function expansionHorizon(
  ctx: ProviderContext,
  calendar: CalendarEntry,
  timeMin: number | undefined,
  timeMax: number | undefined,
): (ev: CalendarEvent) => number {
  return (ev) =>
    timeMax ?? Math.max(ctx.clock(), timeMin ?? 0, timingOf(ev, calendar.timeZone).startMs) + OPEN_HORIZON_MS;
}

/** events.list: one page of a calendar's events, with a page token or, on the last page, a sync token. */
export async function listEvents(
  { ctx, dataOf, auth }: CalendarRoutes,
  req: CalendarRequest,
  reply: FastifyReply,
) {
  const who = auth(req, reply, GOOGLE_API_SCOPES.calendar.read, 'Events.List');
  if (!who) return reply;
  const q = req.query as Query;
  const data = dataOf(who.user.id).calendar;
  const calendar = resolveCalendar(data, who.user, req.params.calendarId);
  if (!calendar) return notFound(reply);
  const events = data.events.get(calendar.id) ?? new Map<string, StoredEvent>();
  const query = checkEventListQuery(reply, q);
  if (!query) return reply;
  const items = sortEvents(matchingEvents(ctx, events, calendar, query), q.orderBy, calendar);
  return reply.send(eventsPage(ctx, calendar, items, query));
}

/** Checks the list's parameters in Calendar's order; null when it already answered the error. */
function checkEventListQuery(reply: FastifyReply, q: Query): EventListQuery | null {
  const singleEvents = parseBool(q.singleEvents);
  if (q.orderBy !== undefined) {
    if (q.orderBy !== 'startTime' && q.orderBy !== 'updated') {
      badParam(reply, 'orderBy');
      return null;
    }
    if (q.orderBy === 'startTime' && !singleEvents) {
      badParam(reply, 'orderBy', 'The requested ordering is not available for the particular query.');
      return null;
    }
  }
  const max = parseMaxResults(q.maxResults, 250, 2500);
  if (max === null) {
    badParam(reply, 'maxResults');
    return null;
  }
  const timeMin = q.timeMin === undefined ? undefined : parseDateTime(q.timeMin);
  const timeMax = q.timeMax === undefined ? undefined : parseDateTime(q.timeMax);
  const updatedMin = q.updatedMin === undefined ? undefined : parseDateTime(q.updatedMin);
  if (timeMin === null || timeMax === null || updatedMin === null) {
    sendGoogleError(reply, 400, 'Bad Request', { reason: 'badRequest' });
    return null;
  }
  if (timeMin !== undefined && timeMax !== undefined && timeMin >= timeMax) {
    badParam(reply, 'timeMax', 'The specified time range is empty.', 'timeRangeEmpty');
    return null;
  }
  let changedSince = updatedMin;
  if (q.syncToken !== undefined) {
    if (q.timeMin || q.timeMax || q.q || q.orderBy || q.updatedMin || q.iCalUID) {
      badParam(reply, 'syncToken', 'Sync token cannot be used with other request restrictions.');
      return null;
    }
    const since = decodeSyncToken(q.syncToken);
    if (since === null) {
      sendGoogleError(reply, 410, 'Sync token is no longer valid, a full sync is required.', {
        reason: 'fullSyncRequired',
      });
      return null;
    }
    changedSince = since;
  }
  // Deleted events only appear when asked for, or in incremental results.
  const showDeleted = parseBool(q.showDeleted) || changedSince !== undefined;
  const offset = q.pageToken === undefined ? 0 : decodePageToken(q.pageToken);
  if (offset === null) {
    badParam(reply, 'pageToken');
    return null;
  }
  return { q, singleEvents, max, timeMin, timeMax, changedSince, showDeleted, offset };
}

/**
 * The events the query selects, in storage order. A recurring event is expanded into its instances
 * with singleEvents; otherwise it is listed once, beside its changed instances.
 */
function matchingEvents(
  ctx: ProviderContext,
  events: Map<string, StoredEvent>,
  calendar: CalendarEntry,
  { q, singleEvents, timeMin, timeMax, changedSince, showDeleted }: EventListQuery,
): CalendarEvent[] {
  const horizon = expansionHorizon(ctx, calendar, timeMin, timeMax);
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
  return items;
}

/** Sorts in place by `orderBy` (ties by id); without it, storage order stands. */
function sortEvents(items: CalendarEvent[], orderBy: string | undefined, calendar: CalendarEntry) {
  if (orderBy === 'startTime') {
    items.sort(
      (a, b) =>
        timingOf(a, calendar.timeZone).startMs - timingOf(b, calendar.timeZone).startMs ||
        a.id.localeCompare(b.id),
    );
  } else if (orderBy === 'updated') {
    items.sort((a, b) => a.updated.localeCompare(b.updated) || a.id.localeCompare(b.id));
  }
  return items;
}

/** The Events collection for one page of the list. */
function eventsPage(
  ctx: ProviderContext,
  calendar: CalendarEntry,
  items: CalendarEvent[],
  { max, offset }: EventListQuery,
): Record<string, unknown> {
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
  return body;
}

/** events.instances: the instances of one recurring event (a single event is its own only instance). */
export async function listInstances(
  { ctx, dataOf, auth }: CalendarRoutes,
  req: EventRequest,
  reply: FastifyReply,
) {
  const who = auth(req, reply, GOOGLE_API_SCOPES.calendar.read, 'Events.Instances');
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
  const horizon = expansionHorizon(ctx, calendar, timeMin, timeMax);
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
}
