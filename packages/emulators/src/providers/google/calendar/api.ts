import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import type { authorizeGoogle } from '../scopes.js';
import { sendGoogleError } from '../shared.js';
import type { GoogleDataOf } from '../user-data.js';
import {
  type CalendarEntry,
  type CalendarEvent,
  type CalendarInputError,
  type GuestEmail,
  instanceOf,
  occurrenceFor,
  parseInstanceId,
  type StoredEvent,
} from './model.js';
import type { CalendarData } from './seed.js';

// What the Calendar routes share: their context, Calendar's error answers, parameters and tokens,
// and finding calendars and events.

export const DAY_MS = 86_400_000;
/** How far ahead an open-ended recurrence is expanded when the query sets no timeMax. */
export const OPEN_HORIZON_MS = 730 * DAY_MS;

export type Query = Record<string, string | undefined>;

export function badParam(
  reply: FastifyReply,
  location: string,
  message = 'Invalid Value',
  reason = 'invalid',
) {
  return sendGoogleError(reply, 400, message, { reason, location, locationType: 'parameter' });
}

export function notFound(reply: FastifyReply) {
  return sendGoogleError(reply, 404, 'Not Found', { reason: 'notFound' });
}

export function sendInputError(reply: FastifyReply, e: CalendarInputError) {
  return sendGoogleError(reply, e.status, e.message, { reason: e.reason, location: e.location });
}

export function parseBool(value: string | undefined): boolean {
  return value === 'true';
}

/** Page tokens are opaque to clients; an offset is all the emulator needs to resume. */
export function encodePageToken(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

export function decodePageToken(token: string): number | null {
  try {
    const o = (JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { o?: unknown }).o;
    return typeof o === 'number' && Number.isInteger(o) && o >= 0 ? o : null;
  } catch {
    return null;
  }
}

/** Sync tokens carry the instant of the listing; a later sync returns what changed since. */
export function encodeSyncToken(ms: number): string {
  return `CP${Buffer.from(JSON.stringify({ s: ms })).toString('base64url')}`;
}

export function decodeSyncToken(token: string): number | null {
  if (!token.startsWith('CP')) return null;
  try {
    const s = (JSON.parse(Buffer.from(token.slice(2), 'base64url').toString('utf8')) as { s?: unknown }).s;
    return typeof s === 'number' ? s : null;
  } catch {
    return null;
  }
}

export function parseMaxResults(value: string | undefined, fallback: number, ceiling: number): number | null {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) return null;
  return Math.min(n, ceiling);
}

export function resolveCalendar(
  data: CalendarData,
  user: EmulatedUser,
  id: string,
): CalendarEntry | undefined {
  return data.calendars.get(id === 'primary' ? user.email : id);
}

function canWrite(calendar: CalendarEntry): boolean {
  return calendar.accessRole === 'owner' || calendar.accessRole === 'writer';
}

export function defaultReminders(calendar: CalendarEntry) {
  return canWrite(calendar) ? [{ method: 'popup', minutes: 10 }] : [];
}

export interface Located {
  stored: StoredEvent;
  /** Set when the id names one instance of a recurring event. */
  instanceKey?: string;
  event: CalendarEvent;
}

/** Finds an event or one instance of a recurring event (`<id>_<start>`), as events.get accepts both. */
export function locateEvent(
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

/** What every group of calendar routes needs: the emulator, the user's data and the scope check. */
export interface CalendarRoutes {
  ctx: ProviderContext;
  dataOf: GoogleDataOf;
  auth(
    req: FastifyRequest,
    reply: FastifyReply,
    anyOf: readonly string[],
    method: string,
  ): ReturnType<typeof authorizeGoogle>;
}

export type SendUpdates = 'all' | 'externalOnly' | 'none';

export function writeParams(
  reply: FastifyReply,
  q: Query,
): { conferenceDataVersion: number; sendUpdates: SendUpdates | undefined } | null {
  const version = q.conferenceDataVersion === undefined ? 0 : Number(q.conferenceDataVersion);
  if (!Number.isInteger(version) || version < 0 || version > 1) {
    badParam(reply, 'conferenceDataVersion');
    return null;
  }
  if (q.sendUpdates !== undefined && !['all', 'externalOnly', 'none'].includes(q.sendUpdates)) {
    badParam(reply, 'sendUpdates');
    return null;
  }
  return { conferenceDataVersion: version, sendUpdates: q.sendUpdates as SendUpdates | undefined };
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Records the emails Calendar sends the guests of `event` for `sendUpdates`: "all" mails every
 * guest but the organizer, "externalOnly" those outside the organizer's domain; without it (or
 * "none") an API write mails no one.
 */
export function notifyGuests(
  data: CalendarData,
  calendarId: string,
  event: CalendarEvent,
  sendUpdates: SendUpdates | undefined,
  kind: GuestEmail['kind'],
  now: number,
): void {
  if (sendUpdates !== 'all' && sendUpdates !== 'externalOnly') return;
  const organizerDomain = domainOf(event.organizer.email);
  for (const guest of event.attendees ?? []) {
    if (guest.organizer || guest.self) continue;
    if (sendUpdates === 'externalOnly' && domainOf(guest.email) === organizerDomain) continue;
    data.outbox.push({
      to: guest.email,
      calendarId,
      eventId: event.id,
      kind,
      sentAt: new Date(now).toISOString(),
    });
  }
}

export function requireWriter(reply: FastifyReply, calendar: CalendarEntry): boolean {
  if (canWrite(calendar)) return true;
  sendGoogleError(reply, 403, 'You need to have writer access to this calendar.', {
    reason: 'requiredAccessLevel',
  });
  return false;
}

export function bodyOf(req: FastifyRequest): Record<string, unknown> | null {
  return req.body && typeof req.body === 'object' && !Array.isArray(req.body)
    ? (req.body as Record<string, unknown>)
    : null;
}
