import { createHash, randomBytes } from 'node:crypto';
import { type EventStart, expandRecurrence, type Occurrence, parseRecurrence } from './recurrence.js';
import { formatDate, formatInZone, localPartsAt, parseDate, parseDateTime } from './time.js';

export interface EventDateTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

export interface EventPerson {
  email: string;
  displayName?: string;
  self?: boolean;
  id?: string;
}

export interface EventAttendee extends EventPerson {
  responseStatus: 'needsAction' | 'declined' | 'tentative' | 'accepted';
  optional?: boolean;
  organizer?: boolean;
  resource?: boolean;
  comment?: string;
  additionalGuests?: number;
}

/** An Event resource exactly as Calendar v3 sends it. */
export interface CalendarEvent {
  kind: 'calendar#event';
  etag: string;
  id: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  htmlLink: string;
  created: string;
  updated: string;
  summary?: string;
  description?: string;
  location?: string;
  creator: EventPerson;
  organizer: EventPerson;
  start: EventDateTime;
  end: EventDateTime;
  recurrence?: string[];
  recurringEventId?: string;
  originalStartTime?: EventDateTime;
  iCalUID: string;
  sequence: number;
  attendees?: EventAttendee[];
  hangoutLink?: string;
  conferenceData?: Record<string, unknown>;
  reminders: { useDefault: boolean; overrides?: Array<{ method: string; minutes: number }> };
  eventType: string;
  [field: string]: unknown;
}

export interface CalendarEntry {
  id: string;
  summary: string;
  description?: string;
  timeZone: string;
  accessRole: 'owner' | 'writer' | 'reader' | 'freeBusyReader';
  primary: boolean;
  colorId: string;
  backgroundColor: string;
  foregroundColor: string;
  etag: string;
  /** The user's own settings for the calendar on their list (CalendarListEntry). */
  hidden: boolean;
  selected: boolean;
  summaryOverride?: string;
  /** Removed from the list; kept so an incremental sync reports the removal (deleted: true). */
  deleted: boolean;
  /** When the list entry last changed: an incremental sync returns the entries changed since its token. */
  updatedMs: number;
}

export interface StoredEvent {
  /** A single event, or the master of a recurring one. */
  resource: CalendarEvent;
  /** Changed or cancelled instances of a recurring event, by occurrence key. */
  exceptions: Map<string, CalendarEvent>;
}

/**
 * An email Calendar sends a guest when a write asks for it (sendUpdates); the emulator records it
 * instead of sending it.
 */
export interface GuestEmail {
  to: string;
  calendarId: string;
  eventId: string;
  kind: 'invitation' | 'update' | 'cancellation';
  sentAt: string;
}

/** A refusal of a request body, spoken as Calendar does. */
export interface CalendarInputError {
  status: number;
  message: string;
  reason: string;
  location?: string;
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

function base32hex(bytes: Uint8Array, length: number): string {
  let out = '';
  for (let i = 0; out.length < length; i++) out += BASE32HEX[(bytes[i % bytes.length] ?? 0) & 31];
  return out;
}

/** Event ids use base32hex, as Calendar's own ids do; seeded ones derive from a name so they never change. */
export function eventIdFor(seed?: string): string {
  const bytes = seed ? createHash('sha256').update(seed).digest() : randomBytes(32);
  return base32hex(bytes, 26);
}

export function isValidEventId(id: string): boolean {
  return /^[0-9a-v]{5,1024}$/.test(id);
}

let etagCounter = 0;
export function nextEtag(updatedMs: number): string {
  etagCounter = (etagCounter + 1) % 1000;
  return `"${updatedMs * 1000 + etagCounter}"`;
}

export function isoMs(ms: number): string {
  return new Date(ms).toISOString();
}

/** The instant range of an event: timed events by their instants, all-day ones by the calendar's days. */
export interface EventTiming {
  allDay: boolean;
  startMs: number;
  endMs: number;
  /** Zone its wall clock lives in (start.timeZone, else the calendar's). */
  timeZone: string;
}

function dayStartMs(date: string, timeZone: string): number {
  const d = parseDate(date);
  if (!d) return Number.NaN;
  const ms = parseDateTime(`${date}T00:00:00`, timeZone);
  return ms ?? Date.UTC(d.year, d.month - 1, d.day);
}

export function timingOf(ev: Pick<CalendarEvent, 'start' | 'end'>, calendarTimeZone: string): EventTiming {
  const timeZone = ev.start.timeZone ?? calendarTimeZone;
  if (ev.start.date) {
    return {
      allDay: true,
      startMs: dayStartMs(ev.start.date, calendarTimeZone),
      endMs: dayStartMs(ev.end.date ?? ev.start.date, calendarTimeZone),
      timeZone,
    };
  }
  return {
    allDay: false,
    startMs: parseDateTime(ev.start.dateTime ?? '', timeZone) ?? Number.NaN,
    endMs: parseDateTime(ev.end.dateTime ?? '', ev.end.timeZone ?? timeZone) ?? Number.NaN,
    timeZone,
  };
}

export function eventStartOf(ev: CalendarEvent, calendarTimeZone: string): EventStart {
  if (ev.start.date) {
    const d = parseDate(ev.start.date);
    if (d) return { allDay: true, date: d };
  }
  const timeZone = ev.start.timeZone ?? calendarTimeZone;
  const ms = parseDateTime(ev.start.dateTime ?? '', timeZone) ?? 0;
  return { allDay: false, local: localPartsAt(ms, timeZone), timeZone };
}

/** The suffix Calendar appends to a recurring event's id to name one instance. */
export function instanceSuffix(o: Occurrence, allDay: boolean): string {
  if (allDay) return formatDate(o.date).replaceAll('-', '');
  return new Date(o.startMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** Splits `masterId_20250106T090000Z` into the master id and the occurrence key. */
export function parseInstanceId(id: string): { masterId: string; key: string } | null {
  const m = /^(.+)_(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z)?$/.exec(id);
  if (!m) return null;
  const [, masterId, y, mo, d, h, mi, s] = m;
  if (!masterId) return null;
  if (h === undefined) return { masterId, key: `${y}-${mo}-${d}` };
  return {
    masterId,
    key: String(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s))),
  };
}

/** One instance of a recurring event, as events.list with singleEvents=true shows it. */
export function instanceOf(master: CalendarEvent, o: Occurrence, calendarTimeZone: string): CalendarEvent {
  const timing = timingOf(master, calendarTimeZone);
  const duration = timing.endMs - timing.startMs;
  const { recurrence: _omit, ...rest } = master;
  const instance: CalendarEvent = {
    ...rest,
    id: `${master.id}_${instanceSuffix(o, timing.allDay)}`,
    recurringEventId: master.id,
  };
  if (timing.allDay) {
    const endDate = new Date(o.startMs + duration);
    const date = formatDate(o.date);
    instance.start = { date };
    instance.end = { date: endDate.toISOString().slice(0, 10) };
    instance.originalStartTime = { date };
  } else {
    const zone = master.start.timeZone ?? calendarTimeZone;
    const endZone = master.end.timeZone ?? zone;
    instance.start = {
      dateTime: formatInZone(o.startMs, zone),
      ...(master.start.timeZone ? { timeZone: zone } : {}),
    };
    instance.end = {
      dateTime: formatInZone(o.startMs + duration, endZone),
      ...(master.end.timeZone ? { timeZone: endZone } : {}),
    };
    instance.originalStartTime = { ...instance.start };
  }
  return instance;
}

/**
 * Instances of a stored recurring event starting before `horizonMs`, with changed instances
 * replaced by their exception and cancelled ones kept (callers drop them unless showDeleted).
 */
export function instancesOf(
  stored: StoredEvent,
  calendarTimeZone: string,
  horizonMs: number,
): CalendarEvent[] {
  const master = stored.resource;
  if (!master.recurrence) return [];
  const start = eventStartOf(master, calendarTimeZone);
  const parsed = parseRecurrence(master.recurrence, master.start.timeZone, start.allDay);
  if (typeof parsed === 'string') return [];
  return expandRecurrence(start, parsed, horizonMs).map(
    (o) => stored.exceptions.get(o.key) ?? instanceOf(master, o, calendarTimeZone),
  );
}

/** The occurrence of a recurring event with this key, if the rule produces one. */
export function occurrenceFor(
  stored: StoredEvent,
  key: string,
  calendarTimeZone: string,
): Occurrence | undefined {
  const master = stored.resource;
  if (!master.recurrence) return undefined;
  const start = eventStartOf(master, calendarTimeZone);
  const parsed = parseRecurrence(master.recurrence, master.start.timeZone, start.allDay);
  if (typeof parsed === 'string') return undefined;
  const horizon = start.allDay ? Date.parse(`${key}T00:00:00Z`) + 1 : Number(key) + 1;
  return expandRecurrence(start, parsed, horizon).find((o) => o.key === key);
}

/** Calendar's free-text search: every term must occur in the event's text fields. */
export function matchesQuery(ev: CalendarEvent, q: string): boolean {
  const haystack = [
    ev.summary,
    ev.description,
    ev.location,
    ev.organizer.email,
    ev.organizer.displayName,
    ...(ev.attendees ?? []).flatMap((a) => [a.email, a.displayName]),
  ]
    .filter((s): s is string => typeof s === 'string')
    .join('\n')
    .toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((term) => haystack.includes(term.replace(/^"|"$/g, '')));
}
