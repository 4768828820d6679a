import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { type FieldError, Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  attendeesParam,
  checkDateTime,
  checkRecurrence,
  checkTimezone,
  dateTimeParam,
  eventBody,
  eventIdParam,
  eventsPath,
  eventTypeParam,
  guestPermissionParams,
  recurrenceParam,
  requiredCalendarIdParam,
  sendUpdatesParam,
  timezoneParam,
  transparencyParam,
  visibilityParam,
  writeQuery,
} from './shared.js';
import {
  endText,
  formatAtOffset,
  instantOf,
  normalizeDateTime,
  type ParsedDateTime,
  parseDateTime,
} from './time.js';

const input = Type.Object(
  {
    calendar_id: requiredCalendarIdParam,
    event_id: eventIdParam,
    start_datetime: Type.Optional(dateTimeParam('New start of the event')),
    summary: Type.Optional(Type.String({ maxLength: 1024, description: 'New title.' })),
    attendees_emails: Type.Optional(
      Type.Array(attendeesParam.items, {
        ...attendeesParam,
        description:
          'The complete new guest list (it replaces the current one; guests who stay keep their responses). To add a guest, read the event with calendar_get_event_by_id and pass the existing emails plus the new one. [] removes all guests.',
      }),
    ),
    create_meeting_room: Type.Optional(
      Type.Boolean({
        description:
          'true adds a Google Meet link if the event has no conference yet; false or omitted leaves conference data unchanged.',
      }),
    ),
    description: Type.Optional(
      Type.String({ maxLength: 8192, description: 'New description ("" clears it); may contain HTML.' }),
    ),
    event_duration_hour: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 744,
        description:
          'New length in hours (with event_duration_minutes), measured from start_datetime or, if absent, from the current start. Not with end_datetime.',
      }),
    ),
    event_duration_minutes: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 59,
        description: 'New length: minutes added to event_duration_hour (0–59). Not with end_datetime.',
      }),
    ),
    event_type: Type.Optional(
      Type.Union(eventTypeParam.anyOf, {
        description:
          'The event\'s kind: "default", "focusTime" or "outOfOffice". Google fixes it when the event is created, so a different type than the event\'s is refused by Google (upstream_validation); to change it, delete the event and create a new one.',
      }),
    ),
    ...guestPermissionParams,
    location: Type.Optional(Type.String({ maxLength: 1024, description: 'New location ("" clears it).' })),
    recurrence: Type.Optional(
      Type.Array(recurrenceParam.items, {
        ...recurrenceParam,
        description:
          'The new recurrence as RFC 5545 lines (replaces the current rule), e.g. ["RRULE:FREQ=DAILY;COUNT=5"]; [] makes the event non-recurring. Recurring events need a time zone on their start.',
      }),
    ),
    send_updates: Type.Optional(sendUpdatesParam),
    timezone: Type.Optional(timezoneParam),
    transparency: Type.Optional(transparencyParam),
    visibility: Type.Optional(visibilityParam),
    end_datetime: Type.Optional(dateTimeParam('New end of the event')),
  },
  { additionalProperties: false },
);

type Input = Static<typeof input>;

/** Parameters that change something (the rest only address the event or the notification). */
const CHANGES = [
  'summary',
  'description',
  'location',
  'start_datetime',
  'end_datetime',
  'event_duration_hour',
  'event_duration_minutes',
  'attendees_emails',
  'recurrence',
  'create_meeting_room',
  'guests_can_modify',
  'guests_can_invite_others',
  'guests_can_see_other_guests',
  'transparency',
  'visibility',
  'event_type',
] as const;

function hasDuration(i: Input): boolean {
  return i.event_duration_hour !== undefined || i.event_duration_minutes !== undefined;
}

function durationMinutes(i: Input): number {
  return (i.event_duration_hour ?? 0) * 60 + (i.event_duration_minutes ?? 0);
}

interface EventTimes {
  start?: { dateTime?: string; date?: string; timeZone?: string };
  end?: { dateTime?: string; date?: string };
}

interface CurrentTimes {
  /** Start and end instants of a timed event; absent for an all-day event. */
  timed?: { start: ParsedDateTime; startMs: number; endMs: number };
  timeZone?: string;
}

/** The event's current start, end and zone (needed to keep its length or its time zone). */
async function currentTimes(client: ProviderClient, i: Input): Promise<CurrentTimes> {
  const res = await client.request<EventTimes>({
    method: 'GET',
    path: eventsPath(i.calendar_id, i.event_id),
  });
  const start = res.data.start?.dateTime ? parseDateTime(res.data.start.dateTime) : null;
  const end = res.data.end?.dateTime ? parseDateTime(res.data.end.dateTime) : null;
  return {
    ...(start && end
      ? { timed: { start, startMs: instantOf(start, undefined), endMs: instantOf(end, undefined) } }
      : {}),
    ...(res.data.start?.timeZone ? { timeZone: res.data.start.timeZone } : {}),
  };
}

export const calendarUpdateEvent = defineTool({
  name: 'calendar_update_event',
  provider: 'google_calendar',
  description: [
    'Changes a Google Calendar event and returns it: only the fields you give change (PATCH). calendar_id ("primary" is the user\'s main calendar) and event_id are required.',
    'Times: start_datetime moves the start and keeps the current length unless end_datetime or a duration (event_duration_hour/_minutes) is given; end_datetime alone moves only the end; a duration alone is measured from the current start.',
    'Rules: give at least one field to change; end_datetime and the durations are mutually exclusive; the end must not be before the start; a date-time without a UTC offset needs "timezone" (an IANA name), and "timezone" only comes with a start or end.',
    'attendees_emails (alias "attendees") and recurrence replace the current lists. On an instance id of a recurring event only that occurrence changes. send_updates true emails the guests.',
    'Example: {"calendar_id":"primary","event_id":"5qk3mnd1b2c3d4e5f6g7h8i9j0","start_datetime":"2025-06-03T10:00:00+02:00","summary":"Design review (moved)","send_updates":true}',
  ].join(' '),
  input,
  aliases: { attendees: { to: 'attendees_emails' } },
  annotations: { read_only: false, destructive: false, idempotent: true },
  check(i) {
    const errors: FieldError[] = [];
    if (!CHANGES.some((k) => i[k] !== undefined)) {
      errors.push({
        path: '/',
        message: `gives nothing to change; add at least one of ${CHANGES.join(', ')} (rule: an update changes at least one field).`,
      });
    }
    checkTimezone(i.timezone, errors);
    const start = checkDateTime('start_datetime', i.start_datetime, i.timezone, errors);
    const end = checkDateTime('end_datetime', i.end_datetime, i.timezone, errors);
    checkRecurrence(i.recurrence, errors);
    if (i.end_datetime !== undefined && hasDuration(i)) {
      errors.push({
        path: '/end_datetime',
        message:
          'Provide either "end_datetime" or "event_duration_hour"/"event_duration_minutes", not both (rule: the end is given either as a time or as a length).',
      });
    }
    if (hasDuration(i) && durationMinutes(i) < 1) {
      errors.push({
        path: '/event_duration_hour',
        message:
          'the duration adds up to 0 minutes (rule: an event lasts at least one minute); give a total of at least 1 minute.',
      });
    }
    if (
      i.timezone !== undefined &&
      i.start_datetime === undefined &&
      i.end_datetime === undefined &&
      !hasDuration(i)
    ) {
      errors.push({
        path: '/timezone',
        message:
          'is only used with "start_datetime" or "end_datetime"; add the time(s) to set in this zone (rule: "timezone" says how new times are read).',
      });
    }
    const comparable =
      start &&
      end &&
      (i.timezone !== undefined || (start.offsetMinutes !== undefined && end.offsetMinutes !== undefined));
    if (comparable && instantOf(end, i.timezone) < instantOf(start, i.timezone)) {
      errors.push({
        path: '/end_datetime',
        message: `"${i.end_datetime}" is before start_datetime "${i.start_datetime}" (rule: an event must not end before it starts).`,
      });
    }
    return errors;
  },
  async run(i, { client }) {
    const body = eventBody(i);
    if (i.event_type !== undefined) body.eventType = i.event_type;
    const changesTime = i.start_datetime !== undefined || i.end_datetime !== undefined || hasDuration(i);
    // Read the event only when its current times matter: to keep its length or its time zone.
    const current =
      changesTime &&
      (i.timezone === undefined ||
        (i.start_datetime !== undefined && i.end_datetime === undefined && !hasDuration(i)) ||
        (i.start_datetime === undefined && hasDuration(i)))
        ? await currentTimes(client, i)
        : undefined;
    const timeZone = i.timezone ?? current?.timeZone;
    const zone = timeZone === undefined ? {} : { timeZone };
    const start = i.start_datetime === undefined ? undefined : parseDateTime(i.start_datetime)!;
    if (start) {
      body.start = { dateTime: normalizeDateTime(start), ...zone };
      const startMs = instantOf(start, i.timezone);
      if (i.end_datetime !== undefined) {
        body.end = { dateTime: normalizeDateTime(parseDateTime(i.end_datetime)!), ...zone };
      } else {
        // Moving the start keeps the event's length (an all-day event becomes one hour long).
        const minutes = hasDuration(i)
          ? durationMinutes(i)
          : current?.timed
            ? Math.round((current.timed.endMs - current.timed.startMs) / 60_000)
            : 60;
        body.end = { dateTime: endText(startMs + minutes * 60_000, start, i.timezone), ...zone };
      }
    } else if (i.end_datetime !== undefined) {
      body.end = { dateTime: normalizeDateTime(parseDateTime(i.end_datetime)!), ...zone };
    } else if (hasDuration(i)) {
      if (!current?.timed) {
        throw new Problem(
          'invalid_input',
          'The event is an all-day event, so a length in hours or minutes cannot be applied to it; give start_datetime (and optionally a duration) to turn it into a timed event.',
          {
            errors: [
              {
                path: '/tool_input/event_duration_hour',
                message:
                  'cannot apply to an all-day event without start_datetime (rule: a duration is measured from a start time).',
              },
            ],
          },
        );
      }
      const { start: currentStart, startMs } = current.timed;
      body.end = {
        dateTime: formatAtOffset(startMs + durationMinutes(i) * 60_000, currentStart.offsetMinutes ?? 0),
        ...zone,
      };
    }
    const res = await client.request<Record<string, unknown>>({
      method: 'PATCH',
      path: eventsPath(i.calendar_id, i.event_id),
      query: writeQuery(i),
      json: body,
    });
    return res.data;
  },
});
