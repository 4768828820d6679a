import { createHash, randomBytes } from 'node:crypto';
import type { EmulatedUser } from '../../../core/types.js';
import { type EventStart, expandRecurrence, type Occurrence, parseRecurrence } from './recurrence.js';
import { formatDate, formatInZone, isValidTimeZone, localPartsAt, parseDate, parseDateTime } from './time.js';

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
}

export interface StoredEvent {
  /** A single event, or the master of a recurring one. */
  resource: CalendarEvent;
  /** Changed or cancelled instances of a recurring event, by occurrence key. */
  exceptions: Map<string, CalendarEvent>;
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

function htmlLinkFor(eventId: string, calendarId: string): string {
  const eid = Buffer.from(`${eventId} ${calendarId}`).toString('base64').replace(/=+$/, '');
  return `https://www.google.com/calendar/event?eid=${eid}`;
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

/** Fields a client may set that the emulator keeps as given. */
const PASS_THROUGH = [
  'anyoneCanAddSelf',
  'attachments',
  'colorId',
  'description',
  'endTimeUnspecified',
  'extendedProperties',
  'gadget',
  'guestsCanInviteOthers',
  'guestsCanModify',
  'guestsCanSeeOtherGuests',
  'location',
  'privateCopy',
  'source',
  'summary',
  'focusTimeProperties',
  'outOfOfficeProperties',
  'workingLocationProperties',
  'birthdayProperties',
] as const;

const ENUMS: Record<string, readonly string[]> = {
  status: ['confirmed', 'tentative', 'cancelled'],
  transparency: ['opaque', 'transparent'],
  visibility: ['default', 'public', 'private', 'confidential'],
  eventType: ['default', 'outOfOffice', 'focusTime', 'workingLocation', 'fromGmail', 'birthday'],
};

function bad(message: string, reason = 'invalid', status = 400): CalendarInputError {
  return { status, message, reason };
}

function normalizeDateTime(
  value: unknown,
  which: 'start' | 'end',
  calendarTimeZone: string,
): EventDateTime | CalendarInputError {
  if (!value || typeof value !== 'object') return bad(`Missing ${which} time.`, 'required');
  const v = value as Record<string, unknown>;
  let zone: string | undefined;
  if (v.timeZone !== undefined && v.timeZone !== null) {
    if (typeof v.timeZone !== 'string' || !isValidTimeZone(v.timeZone)) {
      return bad(`Invalid time zone definition for ${which} time.`);
    }
    zone = v.timeZone;
  }
  const withZone = (out: EventDateTime): EventDateTime => (zone ? { ...out, timeZone: zone } : out);
  if (typeof v.date === 'string' && v.date !== '') {
    if (typeof v.dateTime === 'string' && v.dateTime !== '') return bad(`Invalid ${which} time.`);
    if (!parseDate(v.date)) return bad(`Invalid ${which} time.`);
    return withZone({ date: v.date });
  }
  if (typeof v.dateTime !== 'string' || v.dateTime === '') return bad(`Missing ${which} time.`, 'required');
  const hasOffset = /([Zz]|[+-]\d{2}:\d{2})$/.test(v.dateTime);
  if (!hasOffset && !zone) return bad(`Missing time zone definition for ${which} time.`, 'required');
  const ms = parseDateTime(v.dateTime, zone);
  if (ms === null) return bad(`Invalid ${which} time.`);
  // Calendar answers in the event's zone (else the calendar's), dropping fractions of a second.
  return withZone({ dateTime: formatInZone(ms, zone ?? calendarTimeZone) });
}

function normalizeAttendees(value: unknown, organizerEmail: string): EventAttendee[] | CalendarInputError {
  if (!Array.isArray(value)) return bad('Invalid attendees.');
  const out: EventAttendee[] = [];
  for (const raw of value) {
    const a = (raw ?? {}) as Record<string, unknown>;
    if (typeof a.email !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(a.email))
      return bad('Invalid attendee email.');
    const attendee: EventAttendee = {
      email: a.email,
      responseStatus: 'needsAction',
    };
    if (typeof a.displayName === 'string') attendee.displayName = a.displayName;
    if (a.optional === true) attendee.optional = true;
    if (a.resource === true) attendee.resource = true;
    if (typeof a.comment === 'string') attendee.comment = a.comment;
    if (typeof a.additionalGuests === 'number') attendee.additionalGuests = a.additionalGuests;
    const status = a.responseStatus;
    if (status === 'declined' || status === 'tentative' || status === 'accepted')
      attendee.responseStatus = status;
    if (a.email.toLowerCase() === organizerEmail.toLowerCase()) {
      attendee.organizer = true;
      attendee.self = true;
      if (status === undefined) attendee.responseStatus = 'accepted';
    }
    out.push(attendee);
  }
  return out;
}

/** A Meet link derived from the event id, so the same event always gets the same meeting. */
function meetConference(eventId: string, createRequest: Record<string, unknown>): Record<string, unknown> {
  const letters = createHash('sha256')
    .update(`meet:${eventId}`)
    .digest()
    .subarray(0, 10)
    .reduce((s, b) => s + String.fromCharCode(97 + (b % 26)), '');
  const code = `${letters.slice(0, 3)}-${letters.slice(3, 7)}-${letters.slice(7, 10)}`;
  const key = (createRequest.conferenceSolutionKey as { type?: string } | undefined)?.type ?? 'hangoutsMeet';
  return {
    createRequest: {
      requestId: createRequest.requestId,
      conferenceSolutionKey: { type: key },
      status: { statusCode: 'success' },
    },
    entryPoints: [
      { entryPointType: 'video', uri: `https://meet.google.com/${code}`, label: `meet.google.com/${code}` },
    ],
    conferenceSolution: {
      key: { type: key },
      name: 'Google Meet',
      iconUri:
        'https://fonts.gstatic.com/s/i/productlogos/meet_2020q4/v6/web-512dp/logo_meet_2020q4_color_2x_web_512dp.png',
    },
    conferenceId: code,
  };
}

export interface WriteOptions {
  calendar: CalendarEntry;
  user: EmulatedUser;
  now: number;
  conferenceDataVersion: number;
  /** The stored event being changed (patch/update); absent on insert. */
  existing?: CalendarEvent;
  /** PATCH keeps fields the body does not mention; insert and PUT start from nothing. */
  merge: boolean;
  /** Id for a new event (insert). */
  newId?: string;
}

/**
 * Builds the stored Event from a request body, applying Calendar's defaults and checks. Read-only
 * fields in the body (id on update, created, htmlLink, …) are ignored as Google ignores them.
 */
export function writeEvent(
  body: Record<string, unknown>,
  opts: WriteOptions,
): CalendarEvent | CalendarInputError {
  const { calendar, user, now, existing } = opts;
  const source: Record<string, unknown> = opts.merge && existing ? { ...existing, ...body } : { ...body };
  for (const [k, v] of Object.entries(body)) if (v === null) delete source[k];
  const id = existing?.id ?? opts.newId ?? eventIdFor();
  const organizerEmail = existing?.organizer.email ?? calendar.id;

  const start = normalizeDateTime(source.start, 'start', calendar.timeZone);
  if ('message' in start) return start;
  const end = normalizeDateTime(source.end, 'end', calendar.timeZone);
  if ('message' in end) return end;
  if ((start.date === undefined) !== (end.date === undefined)) {
    return bad('Start and end times must either both be date or both be dateTime.');
  }
  const timing = timingOf({ start, end }, calendar.timeZone);
  if (timing.endMs < timing.startMs || (timing.allDay && timing.endMs === timing.startMs)) {
    return bad('The specified time range is empty.', 'timeRangeEmpty');
  }

  const event: CalendarEvent = {
    kind: 'calendar#event',
    etag: nextEtag(now),
    id,
    status: 'confirmed',
    htmlLink: existing?.htmlLink ?? htmlLinkFor(id, calendar.id),
    created: existing?.created ?? isoMs(now),
    updated: isoMs(now),
    creator: existing?.creator ?? { email: user.email, self: true },
    organizer:
      existing?.organizer ??
      (calendar.primary
        ? { email: calendar.id, self: true }
        : { email: calendar.id, displayName: calendar.summary, self: true }),
    start,
    end,
    iCalUID: existing?.iCalUID ?? (typeof body.iCalUID === 'string' ? body.iCalUID : `${id}@google.com`),
    sequence: existing?.sequence ?? 0,
    reminders: { useDefault: true },
    eventType: 'default',
  };
  const loose = event as Record<string, unknown>;
  for (const field of PASS_THROUGH) if (source[field] !== undefined) loose[field] = source[field];
  for (const [field, allowed] of Object.entries(ENUMS)) {
    const value = source[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !allowed.includes(value))
      return bad(`Invalid value for ${field}: ${String(value)}`);
    loose[field] = value;
  }
  if (source.reminders && typeof source.reminders === 'object') {
    const r = source.reminders as { useDefault?: unknown; overrides?: unknown };
    event.reminders = { useDefault: r.useDefault === true };
    if (Array.isArray(r.overrides)) {
      if (r.useDefault === true)
        return bad('Cannot specify both default reminders and overrides at the same time.');
      event.reminders.overrides = r.overrides as Array<{ method: string; minutes: number }>;
    }
  }
  if (source.attendees !== undefined) {
    const attendees = normalizeAttendees(source.attendees, organizerEmail);
    if (!Array.isArray(attendees)) return attendees;
    // A guest who already answered keeps their answer when the organizer edits the list.
    for (const a of attendees) {
      const before = existing?.attendees?.find((b) => b.email.toLowerCase() === a.email.toLowerCase());
      const given = (source.attendees as Array<Record<string, unknown>>).find((x) => x?.email === a.email);
      if (before && given?.responseStatus === undefined) a.responseStatus = before.responseStatus;
    }
    if (attendees.length > 0) event.attendees = attendees;
  }
  if (source.recurrence !== undefined) {
    if (!Array.isArray(source.recurrence) || source.recurrence.some((l) => typeof l !== 'string')) {
      return bad('Invalid recurrence rule.');
    }
    const lines = source.recurrence as string[];
    if (lines.length > 0) {
      if (start.dateTime && !start.timeZone)
        return bad('Missing time zone definition for start time.', 'required');
      if (typeof parseRecurrence(lines, start.timeZone, start.date !== undefined) === 'string') {
        return bad('Invalid recurrence rule.');
      }
      event.recurrence = lines;
    }
  }
  if (existing?.recurringEventId) {
    event.recurringEventId = existing.recurringEventId;
    if (existing.originalStartTime) event.originalStartTime = existing.originalStartTime;
  }

  // Conference data is only read when the client declares it understands version 1.
  if (opts.conferenceDataVersion >= 1 && source.conferenceData && typeof source.conferenceData === 'object') {
    const cd = source.conferenceData as Record<string, unknown>;
    if (cd.createRequest && typeof cd.createRequest === 'object' && !existing?.conferenceData) {
      event.conferenceData = meetConference(id, cd.createRequest as Record<string, unknown>);
    } else {
      event.conferenceData = cd;
    }
  } else if (existing?.conferenceData) {
    event.conferenceData = existing.conferenceData;
  }
  const video = (
    event.conferenceData?.entryPoints as Array<{ entryPointType?: string; uri?: string }> | undefined
  )?.find((e) => e.entryPointType === 'video');
  if (video?.uri?.startsWith('https://meet.google.com/')) event.hangoutLink = video.uri;

  if (existing) {
    const moved =
      JSON.stringify([existing.start, existing.end, existing.recurrence, existing.location]) !==
      JSON.stringify([event.start, event.end, event.recurrence, event.location]);
    if (moved) event.sequence = existing.sequence + 1;
  }
  return inWireOrder(event);
}

const WIRE_ORDER = [
  'kind',
  'etag',
  'id',
  'status',
  'htmlLink',
  'created',
  'updated',
  'summary',
  'description',
  'location',
  'colorId',
  'creator',
  'organizer',
  'start',
  'end',
  'endTimeUnspecified',
  'recurrence',
  'recurringEventId',
  'originalStartTime',
  'transparency',
  'visibility',
  'iCalUID',
  'sequence',
  'attendees',
  'hangoutLink',
  'conferenceData',
];

/** Field order as Calendar prints it, so dumps of emulated and real events read alike. */
function inWireOrder(event: CalendarEvent): CalendarEvent {
  const out: Record<string, unknown> = {};
  for (const k of WIRE_ORDER) if (event[k] !== undefined) out[k] = event[k];
  for (const [k, v] of Object.entries(event)) if (!(k in out) && v !== undefined) out[k] = v;
  return out as CalendarEvent;
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
