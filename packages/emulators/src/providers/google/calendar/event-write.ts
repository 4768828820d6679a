import { createHash } from 'node:crypto';
import type { EmulatedUser } from '../../../core/types.js';
import {
  type CalendarEntry,
  type CalendarEvent,
  type CalendarInputError,
  type EventAttendee,
  type EventDateTime,
  eventIdFor,
  isoMs,
  nextEtag,
  timingOf,
} from './model.js';
import { parseRecurrence } from './recurrence.js';
import { formatInZone, isValidTimeZone, parseDate, parseDateTime } from './time.js';

// Writing an event: a request body checked and turned into the stored Event, as insert, patch
// and update do it.

function htmlLinkFor(eventId: string, calendarId: string): string {
  const eid = Buffer.from(`${eventId} ${calendarId}`).toString('base64').replace(/=+$/, '');
  return `https://www.google.com/calendar/event?eid=${eid}`;
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

  const times = eventTimes(source, calendar.timeZone);
  if ('message' in times) return times;
  const { start, end } = times;

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
    // An event keeps the type it was created with (PUT without eventType too).
    eventType: existing?.eventType ?? 'default',
  };
  // Checked in Calendar's order: the first problem found is the one reported.
  const problem =
    keepEventType(body, existing) ??
    applyClientFields(event, source) ??
    applyAttendees(event, source, existing?.organizer.email ?? calendar.id, existing) ??
    applyRecurrence(event, source);
  if (problem) return problem;
  if (existing?.recurringEventId) {
    event.recurringEventId = existing.recurringEventId;
    if (existing.originalStartTime) event.originalStartTime = existing.originalStartTime;
  }
  applyConference(event, source, opts.conferenceDataVersion, existing);

  if (existing) {
    const moved =
      JSON.stringify([existing.start, existing.end, existing.recurrence, existing.location]) !==
      JSON.stringify([event.start, event.end, event.recurrence, event.location]);
    if (moved) event.sequence = existing.sequence + 1;
  }
  return inWireOrder(event);
}

/** Start and end, normalized: both dates or both date-times, and not ending before they start. */
function eventTimes(
  source: Record<string, unknown>,
  calendarTimeZone: string,
): { start: EventDateTime; end: EventDateTime } | CalendarInputError {
  const start = normalizeDateTime(source.start, 'start', calendarTimeZone);
  if ('message' in start) return start;
  const end = normalizeDateTime(source.end, 'end', calendarTimeZone);
  if ('message' in end) return end;
  if ((start.date === undefined) !== (end.date === undefined)) {
    return bad('Start and end times must either both be date or both be dateTime.');
  }
  const timing = timingOf({ start, end }, calendarTimeZone);
  if (timing.endMs < timing.startMs || (timing.allDay && timing.endMs === timing.startMs)) {
    return bad('The specified time range is empty.', 'timeRangeEmpty');
  }
  return { start, end };
}

/** Calendar fixes an event's type at creation: "This cannot be modified after the event is created." */
function keepEventType(
  body: Record<string, unknown>,
  existing: CalendarEvent | undefined,
): CalendarInputError | undefined {
  if (!existing || body.eventType === undefined || body.eventType === null) return undefined;
  return body.eventType === existing.eventType ? undefined : bad('Event type cannot be changed.');
}

/** Fields kept as given, enums and reminders. */
function applyClientFields(
  event: CalendarEvent,
  source: Record<string, unknown>,
): CalendarInputError | undefined {
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
  return undefined;
}

function applyAttendees(
  event: CalendarEvent,
  source: Record<string, unknown>,
  organizerEmail: string,
  existing: CalendarEvent | undefined,
): CalendarInputError | undefined {
  if (source.attendees === undefined) return undefined;
  const attendees = normalizeAttendees(source.attendees, organizerEmail);
  if (!Array.isArray(attendees)) return attendees;
  // A guest who already answered keeps their answer when the organizer edits the list.
  for (const a of attendees) {
    const before = existing?.attendees?.find((b) => b.email.toLowerCase() === a.email.toLowerCase());
    const given = (source.attendees as Array<Record<string, unknown>>).find((x) => x?.email === a.email);
    if (before && given?.responseStatus === undefined) a.responseStatus = before.responseStatus;
  }
  if (attendees.length > 0) event.attendees = attendees;
  return undefined;
}

/** An empty recurrence makes a single event; a rule needs a start with a time zone to expand in. */
function applyRecurrence(
  event: CalendarEvent,
  source: Record<string, unknown>,
): CalendarInputError | undefined {
  if (source.recurrence === undefined) return undefined;
  if (!Array.isArray(source.recurrence) || source.recurrence.some((l) => typeof l !== 'string')) {
    return bad('Invalid recurrence rule.');
  }
  const lines = source.recurrence as string[];
  if (lines.length > 0) {
    const start = event.start;
    if (start.dateTime && !start.timeZone)
      return bad('Missing time zone definition for start time.', 'required');
    if (typeof parseRecurrence(lines, start.timeZone, start.date !== undefined) === 'string') {
      return bad('Invalid recurrence rule.');
    }
    event.recurrence = lines;
  }
  return undefined;
}

function applyConference(
  event: CalendarEvent,
  source: Record<string, unknown>,
  conferenceDataVersion: number,
  existing: CalendarEvent | undefined,
): void {
  // Conference data is only read when the client declares it understands version 1.
  if (conferenceDataVersion >= 1 && source.conferenceData && typeof source.conferenceData === 'object') {
    const cd = source.conferenceData as Record<string, unknown>;
    if (cd.createRequest && typeof cd.createRequest === 'object' && !existing?.conferenceData) {
      event.conferenceData = meetConference(event.id, cd.createRequest as Record<string, unknown>);
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
