import { randomUUID } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import type { FieldError } from '../../errors/problem.js';
import { instantOf, isIanaTimeZone, type ParsedDateTime, parseDateTime } from './time.js';

/**
 * What the `calendar_` tools share: parameter schemas, input rules and the mapping of tool
 * parameters onto Calendar v3's Event resource (times and zones are in ./time.ts).
 */

/** Calendar v3 paths; ids are path segments, so they are encoded (calendar ids are often emails). */
export function eventsPath(calendarId: string, eventId?: string): string {
  const base = `/calendar/v3/calendars/${encodeURIComponent(calendarId)}/events`;
  return eventId === undefined ? base : `${base}/${encodeURIComponent(eventId)}`;
}

const CALENDAR_ID = { minLength: 1, maxLength: 1024 } as const;

export const calendarIdParam = Type.String({
  ...CALENDAR_ID,
  default: 'primary',
  description:
    'Calendar to use: "primary" (the user\'s main calendar, the default) or a calendar id from calendar_list_calendars, e.g. "team@group.calendar.google.com".',
});

/** calendar_id where the specification makes it required (no default then). */
export const requiredCalendarIdParam = Type.String({
  ...CALENDAR_ID,
  description:
    'Calendar that holds the event: "primary" for the user\'s main calendar, or a calendar id from calendar_list_calendars, e.g. "team@group.calendar.google.com".',
});

export const eventIdParam = Type.String({
  minLength: 1,
  maxLength: 1024,
  description:
    'Event id as returned by calendar_list_events or calendar_create_event (an instance of a recurring event has an id like "abc123_20250106T100000Z").',
});

/** RFC 3339 date-time; the UTC offset is optional (then `timezone` says how to read it). */
export const DATE_TIME_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|z|[+-]\\d{2}:\\d{2})?$';

export function dateTimeParam(what: string) {
  return Type.String({
    pattern: DATE_TIME_PATTERN,
    description: `${what} as an RFC 3339 date-time, e.g. "2025-06-02T15:00:00+02:00" or "2025-06-02T15:00:00Z". Without a UTC offset ("2025-06-02T15:00:00") the time is read in \`timezone\`, which is then required.`,
  });
}

/** An RFC 3339 instant with a mandatory offset (Calendar's timeMin/timeMax). */
export const INSTANT_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|z|[+-]\\d{2}:\\d{2})$';

export function instantParam(what: string) {
  return Type.String({
    pattern: INSTANT_PATTERN,
    description: `${what}, as an RFC 3339 date-time with a UTC offset, e.g. "2025-06-02T00:00:00Z" or "2025-06-02T00:00:00+02:00".`,
  });
}

export const timezoneParam = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    'IANA time zone name, e.g. "Europe/Paris", "America/New_York" or "UTC". Sets the zone of the event (recurring events repeat in it) and how start/end times without a UTC offset are read.',
});

/** The specification's boolean first; Google's own sendUpdates values stay accepted. */
export const sendUpdatesParam = Type.Union(
  [Type.Boolean(), Type.Literal('all'), Type.Literal('externalOnly'), Type.Literal('none')],
  {
    description:
      'Whether guests get an email about the change: true notifies all guests, false none. Google\'s own values are accepted too: "all", "externalOnly" (only guests outside the organizer\'s Google Workspace domain) or "none". When omitted Google sends no notifications for API calls.',
  },
);

/** Google's sendUpdates for send_updates: true is "all", false "none". */
export function sendUpdatesQuery(value: Static<typeof sendUpdatesParam> | undefined): string | undefined {
  return typeof value === 'boolean' ? (value ? 'all' : 'none') : value;
}

export const attendeesParam = Type.Array(
  Type.String({ format: 'email', maxLength: 320, description: 'Email address of a guest.' }),
  {
    maxItems: 500,
    uniqueItems: true,
    description:
      'Guests to invite, as email addresses, e.g. ["grace@example.com"]. Each gets an invitation with response status "needsAction".',
  },
);

export const recurrenceParam = Type.Array(
  Type.String({
    minLength: 6,
    maxLength: 1000,
    description:
      'One RFC 5545 line: "RRULE:FREQ=WEEKLY;BYDAY=MO,WE", "EXDATE:20250609T100000Z" or "RDATE:…".',
  }),
  {
    maxItems: 100,
    description:
      'Recurrence of a repeating event as RFC 5545 lines, e.g. ["RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10"]. Lines start with RRULE:, EXRULE:, RDATE: or EXDATE:; an RRULE must name FREQ (SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY). Recurring events need `timezone`.',
  },
);

export const guestPermissionParams = {
  guests_can_invite_others: Type.Optional(
    Type.Boolean({ description: 'Whether guests may invite other people (Google default true).' }),
  ),
  guests_can_modify: Type.Optional(
    Type.Boolean({ description: 'Whether guests may edit the event (Google default false).' }),
  ),
  guests_can_see_other_guests: Type.Optional(
    Type.Boolean({ description: 'Whether guests can see the guest list (Google default true).' }),
  ),
};

/** The specification's free/busy first; Google's own names stay accepted. */
export const transparencyParam = Type.Union(
  [Type.Literal('free'), Type.Literal('busy'), Type.Literal('transparent'), Type.Literal('opaque')],
  {
    description:
      'Whether the event blocks time: "busy" (the default; others see the time as taken) or "free" (others see it as available). Google\'s own names are accepted too: "opaque" (busy) and "transparent" (free).',
  },
);

/** Google's Event.transparency for each accepted value. */
const GOOGLE_TRANSPARENCY: Record<Static<typeof transparencyParam>, 'opaque' | 'transparent'> = {
  free: 'transparent',
  busy: 'opaque',
  transparent: 'transparent',
  opaque: 'opaque',
};

/** Event types Google lets a client create without type-specific properties. */
const CREATABLE_EVENT_TYPES = ['default', 'focusTime', 'outOfOffice'] as const;

export const eventTypeParam = Type.Union(
  CREATABLE_EVENT_TYPES.map((t) => Type.Literal(t)),
  {
    description:
      'Kind of event. Google\'s event types are "default", "focusTime", "outOfOffice", "workingLocation", "fromGmail" and "birthday"; this tool takes "default" (a regular event), "focusTime" (focus block that can decline meetings) and "outOfOffice" (absence). Focus time and out-of-office events exist only on the primary calendar of Google Workspace users; "workingLocation" and "birthday" need properties this tool does not take and "fromGmail" events cannot be created through the API.',
  },
);

/** Every eventType Calendar v3 reports (events.list's eventTypes filter takes the same). */
export const EVENT_TYPES = [
  'default',
  'birthday',
  'focusTime',
  'fromGmail',
  'outOfOffice',
  'workingLocation',
] as const;

export const visibilityParam = Type.Union(
  [Type.Literal('default'), Type.Literal('public'), Type.Literal('private'), Type.Literal('confidential')],
  {
    description:
      'Who can see the event details: "default" (the calendar\'s setting), "public", "private" (only attendees) or "confidential" (same as private, kept for compatibility).',
  },
);

export const createMeetingRoomParam = Type.Boolean({
  description:
    'true adds a Google Meet video-conference link to the event (returned as hangoutLink and conferenceData). false or omitted adds none.',
});

/** Checks a date-time field: a real calendar date and time, and an offset or a `timezone`. */
export function checkDateTime(
  field: string,
  value: string | undefined,
  timezone: string | undefined,
  errors: FieldError[],
): ParsedDateTime | undefined {
  if (value === undefined) return undefined;
  const parsed = parseDateTime(value);
  if (!parsed) {
    errors.push({
      path: `/${field}`,
      message: `"${value}" is not a real date and time; use RFC 3339 such as "2025-06-02T15:00:00+02:00" (rule: months 01–12, days that exist in the month, hours 00–23, offsets within ±18:00).`,
    });
    return undefined;
  }
  if (parsed.offsetMinutes === undefined && timezone === undefined) {
    errors.push({
      path: `/${field}`,
      message: `"${value}" has no UTC offset; add one ("${value}Z", "${value}+02:00") or give "timezone" (rule: a date-time without a UTC offset is read in "timezone").`,
    });
  }
  return parsed;
}

export function checkTimezone(value: string | undefined, errors: FieldError[]): void {
  if (value !== undefined && !isIanaTimeZone(value)) {
    errors.push({
      path: '/timezone',
      message: `"${value}" is not an IANA time zone; use a name such as "Europe/Paris", "America/New_York" or "UTC" (rule: "timezone" must be an IANA time zone name).`,
    });
  }
}

const RECURRENCE_LINE = /^(RRULE|EXRULE|RDATE|EXDATE)(;[^:]*)?:.+$/;
const FREQ = /(^|;)FREQ=(SECONDLY|MINUTELY|HOURLY|DAILY|WEEKLY|MONTHLY|YEARLY)(;|$)/;

export function checkRecurrence(lines: string[] | undefined, errors: FieldError[]): void {
  if (lines === undefined) return;
  lines.forEach((line, i) => {
    if (!RECURRENCE_LINE.test(line)) {
      errors.push({
        path: `/recurrence/${i}`,
        message: `"${line}" is not a recurrence line (rule: each line starts with RRULE:, EXRULE:, RDATE: or EXDATE:, e.g. "RRULE:FREQ=WEEKLY;BYDAY=MO").`,
      });
    } else if (/^(RRULE|EXRULE)/.test(line) && !FREQ.test(line.slice(line.indexOf(':') + 1))) {
      errors.push({
        path: `/recurrence/${i}`,
        message: `"${line}" has no valid FREQ (rule: an RRULE names FREQ=SECONDLY|MINUTELY|HOURLY|DAILY|WEEKLY|MONTHLY|YEARLY).`,
      });
    }
  });
}

export interface EventFields {
  summary?: string;
  description?: string;
  location?: string;
  attendees_emails?: string[];
  recurrence?: string[];
  guests_can_modify?: boolean;
  guests_can_invite_others?: boolean;
  guests_can_see_other_guests?: boolean;
  transparency?: Static<typeof transparencyParam>;
  visibility?: string;
  create_meeting_room?: boolean;
}

/** The Event fields these parameters set (only those given). */
export function eventBody(input: EventFields): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.summary !== undefined) body.summary = input.summary;
  if (input.description !== undefined) body.description = input.description;
  if (input.location !== undefined) body.location = input.location;
  if (input.attendees_emails !== undefined)
    body.attendees = input.attendees_emails.map((email) => ({ email }));
  if (input.recurrence !== undefined) body.recurrence = input.recurrence;
  if (input.guests_can_modify !== undefined) body.guestsCanModify = input.guests_can_modify;
  if (input.guests_can_invite_others !== undefined)
    body.guestsCanInviteOthers = input.guests_can_invite_others;
  if (input.guests_can_see_other_guests !== undefined)
    body.guestsCanSeeOtherGuests = input.guests_can_see_other_guests;
  if (input.transparency !== undefined) body.transparency = GOOGLE_TRANSPARENCY[input.transparency];
  if (input.visibility !== undefined) body.visibility = input.visibility;
  if (input.create_meeting_room === true) {
    body.conferenceData = {
      createRequest: { requestId: randomUUID(), conferenceSolutionKey: { type: 'hangoutsMeet' } },
    };
  }
  return body;
}

/** Query parameters of an event write. */
export function writeQuery(input: {
  send_updates?: Static<typeof sendUpdatesParam>;
  create_meeting_room?: boolean;
}): Record<string, string | number | undefined> {
  return {
    // Without conferenceDataVersion=1 Google ignores conferenceData entirely.
    conferenceDataVersion: input.create_meeting_room === true ? 1 : undefined,
    sendUpdates: sendUpdatesQuery(input.send_updates),
  };
}

/**
 * Checks RFC 3339 instants (their shape is the schema's): real dates and times, and a non-empty
 * time_min..time_max window. Returns the instants in epoch milliseconds.
 */
export function checkInstants<K extends string>(
  values: Partial<Record<K, string>>,
  errors: FieldError[],
): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const [field, text] of Object.entries(values) as [K, string | undefined][]) {
    if (text === undefined) continue;
    const parsed = parseDateTime(text);
    if (parsed === null) {
      errors.push({
        path: `/${field}`,
        message: `"${text}" is not a real date and time (rule: RFC 3339 with valid month, day, hour and offset).`,
      });
    } else {
      out[field] = instantOf(parsed, undefined);
    }
  }
  const window = out as Partial<Record<'time_min' | 'time_max', number>>;
  if (window.time_min !== undefined && window.time_max !== undefined && window.time_min >= window.time_max) {
    errors.push({
      path: '/time_max',
      message: 'must be later than time_min (rule: the time window time_min..time_max must not be empty).',
    });
  }
  return out;
}

/**
 * The calendar's own time zone: Google places all-day events on the time line in it, and a
 * recurring event created without "timezone" repeats in it.
 */
export async function calendarTimeZone(
  client: ProviderClient,
  calendarId: string,
): Promise<string | undefined> {
  const res = await client.request<{ timeZone?: string }>({
    method: 'GET',
    path: `/calendar/v3/calendars/${encodeURIComponent(calendarId)}`,
  });
  return res.data.timeZone;
}
