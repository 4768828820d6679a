import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  attendeesParam,
  calendarIdParam,
  calendarTimeZone,
  checkDateTime,
  checkRecurrence,
  checkTimezone,
  createMeetingRoomParam,
  dateTimeParam,
  eventBody,
  eventsPath,
  eventTypeParam,
  guestPermissionParams,
  recurrenceParam,
  sendUpdatesParam,
  timezoneParam,
  transparencyParam,
  visibilityParam,
  writeQuery,
} from './shared.js';
import { endText, instantOf, normalizeDateTime, parseDateTime } from './time.js';

const input = Type.Object(
  {
    start_datetime: dateTimeParam('Start of the event'),
    summary: Type.String({ maxLength: 1024, description: 'Title of the event, e.g. "Design review".' }),
    calendar_id: Type.Optional(calendarIdParam),
    attendees_emails: Type.Optional(attendeesParam),
    create_meeting_room: Type.Optional(createMeetingRoomParam),
    description: Type.Optional(
      Type.String({ maxLength: 8192, description: 'Description of the event; may contain HTML.' }),
    ),
    event_duration_hour: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 744,
        description:
          'Hours the event lasts (0–744), added to event_duration_minutes. When both durations are omitted the event lasts one hour.',
      }),
    ),
    event_duration_minutes: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 59,
        description:
          'Minutes the event lasts in addition to event_duration_hour (0–59). When both durations are omitted the event lasts one hour.',
      }),
    ),
    event_type: Type.Optional(
      Type.Union(eventTypeParam.anyOf, { default: 'default', description: eventTypeParam.description }),
    ),
    ...guestPermissionParams,
    location: Type.Optional(
      Type.String({ maxLength: 1024, description: 'Free-form place of the event, e.g. an address.' }),
    ),
    recurrence: Type.Optional(recurrenceParam),
    send_updates: Type.Optional(sendUpdatesParam),
    timezone: Type.Optional(timezoneParam),
    transparency: Type.Optional(transparencyParam),
    visibility: Type.Optional(visibilityParam),
  },
  { additionalProperties: false },
);

type Input = Static<typeof input>;

/** Minutes the event lasts: one hour unless a duration is given. */
function durationMinutes(i: Input): number {
  if (i.event_duration_hour === undefined && i.event_duration_minutes === undefined) return 60;
  return (i.event_duration_hour ?? 0) * 60 + (i.event_duration_minutes ?? 0);
}

export const calendarCreateEvent = defineTool({
  name: 'calendar_create_event',
  provider: 'google_calendar',
  description: [
    'Creates an event in a Google Calendar and returns the created event (id, htmlLink, and hangoutLink when a meeting room was requested).',
    'For meetings, focus time or recurring series. summary and start_datetime (RFC 3339) are required; the end is start plus event_duration_hour and event_duration_minutes (one hour when both are omitted).',
    'Rules: "timezone" must be an IANA name; a start without a UTC offset needs "timezone"; a recurring event without it repeats in the calendar’s zone; recurrence lines are RRULE/EXRULE/RDATE/EXDATE with a FREQ; the event must last at least one minute.',
    'create_meeting_room adds a Google Meet link; send_updates true emails the guests; transparency is "busy" (default) or "free". ("attendees" is another name for attendees_emails.)',
    'Example: {"summary":"Design review","start_datetime":"2025-06-02T15:00:00","timezone":"Europe/Paris","event_duration_minutes":45,"attendees_emails":["grace@example.com"],"create_meeting_room":true,"transparency":"busy","send_updates":true}',
  ].join(' '),
  input,
  aliases: { attendees: { to: 'attendees_emails' } },
  annotations: { read_only: false, destructive: false, idempotent: false },
  check(i) {
    const errors: FieldError[] = [];
    checkTimezone(i.timezone, errors);
    checkDateTime('start_datetime', i.start_datetime, i.timezone, errors);
    checkRecurrence(i.recurrence, errors);
    if (durationMinutes(i) < 1) {
      errors.push({
        path: '/event_duration_hour',
        message:
          'the duration adds up to 0 minutes; give event_duration_hour and/or event_duration_minutes totalling at least 1, or omit both for one hour (rule: an event lasts at least one minute).',
      });
    }
    return errors;
  },
  async run(i, { client }) {
    const start = parseDateTime(i.start_datetime)!;
    const startMs = instantOf(start, i.timezone);
    const endMs = startMs + durationMinutes(i) * 60_000;
    const calendarId = i.calendar_id ?? 'primary';
    // Google refuses a recurring event whose start names no zone; the specification leaves
    // "timezone" optional, so the series repeats in the calendar's own zone.
    const timeZone =
      i.timezone ??
      ((i.recurrence?.length ?? 0) > 0 ? await calendarTimeZone(client, calendarId) : undefined);
    const zone = timeZone === undefined ? {} : { timeZone };
    const body: Record<string, unknown> = {
      ...eventBody(i),
      start: { dateTime: normalizeDateTime(start), ...zone },
      end: { dateTime: endText(endMs, start, i.timezone), ...zone },
    };
    if (i.event_type !== undefined && i.event_type !== 'default') body.eventType = i.event_type;
    const res = await client.request<Record<string, unknown>>({
      method: 'POST',
      path: eventsPath(calendarId),
      query: writeQuery(i),
      json: body,
    });
    return res.data;
  },
});
