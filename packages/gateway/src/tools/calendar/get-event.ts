import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { type FieldError, Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  calendarIdParam,
  calendarTimeZone,
  checkInstants,
  checkTimezone,
  EVENT_TYPES,
  eventIdParam,
  eventsPath,
  instantParam,
  timezoneParam,
} from './shared.js';
import { instantOf, parseDateTime } from './time.js';

const input = Type.Object(
  {
    event_id: eventIdParam,
    calendar_id: Type.Optional(calendarIdParam),
    event_types: Type.Optional(
      Type.Array(
        Type.Union(
          EVENT_TYPES.map((t) => Type.Literal(t)),
          { description: 'An event type.' },
        ),
        {
          minItems: 1,
          uniqueItems: true,
          description:
            'Found only if the event\'s type is one of these: "default", "birthday", "focusTime", "fromGmail", "outOfOffice", "workingLocation".',
        },
      ),
    ),
    query: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'Found only if every word occurs (case-insensitively) in the title, description, location, organizer or guests (names and emails), as in calendar_list_events.',
      }),
    ),
    show_deleted: Type.Optional(
      Type.Boolean({
        description:
          'true also finds a deleted event (status "cancelled"); otherwise a deleted event is not found (default false).',
      }),
    ),
    single_events: Type.Optional(
      Type.Boolean({
        description:
          'true on a recurring event also returns its occurrences (each with its own id) under "instances", within time_min/time_max, up to 2,500 (has_more_instances true when there are more; narrow the window then). Default false.',
      }),
    ),
    time_max: Type.Optional(
      instantParam(
        'Found only if the event (a recurring one: one of its occurrences) starts before this instant',
      ),
    ),
    time_min: Type.Optional(
      instantParam(
        'Found only if the event (a recurring one: one of its occurrences) ends after this instant',
      ),
    ),
    updated_min: Type.Optional(
      instantParam('Found only if the event was last changed at or after this instant'),
    ),
    timezone: Type.Optional(
      Type.String({
        ...timezoneParam,
        description:
          'IANA time zone for the times in the answer, e.g. "Asia/Tokyo"; default the calendar\'s own zone.',
      }),
    ),
  },
  { additionalProperties: false },
);

type Input = Static<typeof input>;

interface EventTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

interface Person {
  email?: string;
  displayName?: string;
}

/** The Event fields the filters read; the rest is passed through as Google sent it. */
interface CalendarEvent {
  id: string;
  status?: string;
  summary?: string;
  description?: string;
  location?: string;
  organizer?: Person;
  attendees?: Person[];
  eventType?: string;
  updated?: string;
  start?: EventTime;
  end?: EventTime;
  recurrence?: string[];
  workingLocationProperties?: {
    officeLocation?: { buildingId?: string; deskId?: string; label?: string };
    customLocation?: { label?: string };
  };
  [field: string]: unknown;
}

interface Instances {
  items?: CalendarEvent[];
  nextPageToken?: string;
}

/** The most occurrences one call returns (Google's largest page of events.instances). */
const MAX_INSTANCES = 2500;

/**
 * The text Google's free-text search (`q`) looks in: title, description, location, organizer and
 * attendees (names and emails), and the labels of a working location.
 */
function searchableText(ev: CalendarEvent): string {
  const place = ev.workingLocationProperties;
  return [
    ev.summary,
    ev.description,
    ev.location,
    ev.organizer?.email,
    ev.organizer?.displayName,
    ...(ev.attendees ?? []).flatMap((a) => [a.email, a.displayName]),
    place?.officeLocation?.buildingId,
    place?.officeLocation?.deskId,
    place?.officeLocation?.label,
    place?.customLocation?.label,
  ]
    .filter((s): s is string => typeof s === 'string')
    .join('\n')
    .toLowerCase();
}

/** Every word of the query occurs in the event (quotes around a word are ignored). */
function matchesQuery(ev: CalendarEvent, query: string): boolean {
  const text = searchableText(ev);
  return query
    .toLowerCase()
    .split(/\s+/)
    .map((word) => word.replace(/^"|"$/g, ''))
    .filter(Boolean)
    .every((word) => text.includes(word));
}

/**
 * Why the event's own fields fail the filters that need nothing but the event (show_deleted,
 * event_types, query, updated_min); empty when it passes them.
 */
function fieldExclusions(ev: CalendarEvent, i: Input, updatedMin: number | undefined): FieldError[] {
  const out: FieldError[] = [];
  if (ev.status === 'cancelled' && i.show_deleted !== true) {
    out.push({
      path: '/tool_input/show_deleted',
      message: 'the event is deleted (status "cancelled"); give show_deleted true to find it',
    });
  }
  const type = ev.eventType ?? 'default';
  if (i.event_types !== undefined && !(i.event_types as string[]).includes(type)) {
    out.push({ path: '/tool_input/event_types', message: `the event's type is "${type}"` });
  }
  if (i.query !== undefined && !matchesQuery(ev, i.query)) {
    out.push({
      path: '/tool_input/query',
      message: `"${i.query}" does not occur in the event's title, description, location, organizer or guests`,
    });
  }
  if (updatedMin !== undefined && !(Date.parse(ev.updated ?? '') >= updatedMin)) {
    out.push({
      path: '/tool_input/updated_min',
      message: `the event was last changed at ${ev.updated ?? 'an unknown time'}, before updated_min`,
    });
  }
  return out;
}

/** Start or end of an event as an instant; an all-day date starts at midnight in `dayZone`. */
function instantOfTime(time: EventTime | undefined, dayZone: string | undefined): number | undefined {
  if (time?.dateTime) {
    const parsed = parseDateTime(time.dateTime);
    return parsed ? instantOf(parsed, time.timeZone) : undefined;
  }
  if (time?.date) {
    const parsed = parseDateTime(`${time.date}T00:00:00`);
    return parsed ? instantOf(parsed, dayZone) : undefined;
  }
  return undefined;
}

/** Why a single event lies outside [time_min, time_max): Google's overlap (ends after min, starts before max). */
async function windowExclusions(
  client: ProviderClient,
  calendarId: string,
  ev: CalendarEvent,
  window: { time_min?: number; time_max?: number },
): Promise<FieldError[]> {
  const allDay = ev.start?.date !== undefined;
  const zone = allDay ? await calendarTimeZone(client, calendarId) : undefined;
  const start = instantOfTime(ev.start, zone);
  const end = instantOfTime(ev.end, zone) ?? start;
  const when = `the event runs from ${ev.start?.dateTime ?? ev.start?.date} to ${ev.end?.dateTime ?? ev.end?.date}`;
  const out: FieldError[] = [];
  if (window.time_min !== undefined && end !== undefined && end <= window.time_min) {
    out.push({ path: '/tool_input/time_min', message: `${when}, not after time_min` });
  }
  if (window.time_max !== undefined && start !== undefined && start >= window.time_max) {
    out.push({ path: '/tool_input/time_max', message: `${when}, not before time_max` });
  }
  return out;
}

/** The occurrences of a recurring event within the window, as events.instances lists them. */
async function instancesOf(
  client: ProviderClient,
  calendarId: string,
  i: Input,
  maxResults: number,
): Promise<Instances> {
  const res = await client.request<Instances>({
    method: 'GET',
    path: `${eventsPath(calendarId, i.event_id)}/instances`,
    query: {
      timeMin: i.time_min,
      timeMax: i.time_max,
      showDeleted: i.show_deleted,
      maxResults,
      timeZone: i.timezone,
    },
  });
  return res.data;
}

export const calendarGetEventById = defineTool({
  name: 'calendar_get_event_by_id',
  provider: 'google_calendar',
  description: [
    'Returns one Google Calendar event by its id: title, times, attendees with their responses, recurrence, conference link, status.',
    'Use it to read an event before changing it, or to follow up on an id from calendar_list_events.',
    'The optional filters work as in calendar_list_events: when the event does not match query, event_types, time_min/time_max (overlap; a recurring event by its occurrences) or updated_min, the answer is upstream_not_found with the filter that excluded it. A deleted event is found only with show_deleted true.',
    'single_events true on a recurring event adds its occurrences (within time_min/time_max) as "instances".',
    'Example: {"event_id":"5qk3mnd1b2c3d4e5f6g7h8i9j0","calendar_id":"primary"}',
  ].join(' '),
  input,
  annotations: { read_only: true, destructive: false, idempotent: true },
  check(i) {
    const errors: FieldError[] = [];
    checkTimezone(i.timezone, errors);
    checkInstants({ time_min: i.time_min, time_max: i.time_max, updated_min: i.updated_min }, errors);
    return errors;
  },
  async run(i, { client }) {
    const calendarId = i.calendar_id ?? 'primary';
    const res = await client.request<CalendarEvent>({
      method: 'GET',
      path: eventsPath(calendarId, i.event_id),
      query: { timeZone: i.timezone },
    });
    const event = res.data;
    const limits = checkInstants(
      { time_min: i.time_min, time_max: i.time_max, updated_min: i.updated_min },
      [],
    );
    const excluded = fieldExclusions(event, i, limits.updated_min);
    const recurring = (event.recurrence?.length ?? 0) > 0;
    const windowed = limits.time_min !== undefined || limits.time_max !== undefined;
    // The time window costs upstream reads, so it is checked only once the event's fields match.
    let instances: Instances | undefined;
    if (excluded.length === 0 && recurring && (windowed || i.single_events === true)) {
      // A series is in the window when one of its occurrences is, as events.list decides.
      instances = await instancesOf(client, calendarId, i, i.single_events === true ? MAX_INSTANCES : 1);
      if (windowed && (instances.items ?? []).length === 0) {
        excluded.push({
          path: `/tool_input/${limits.time_min !== undefined ? 'time_min' : 'time_max'}`,
          message: 'none of the occurrences of this recurring event lies within time_min..time_max',
        });
      }
    } else if (excluded.length === 0 && windowed) {
      excluded.push(...(await windowExclusions(client, calendarId, event, limits)));
    }
    if (excluded.length > 0) {
      const filters = [...new Set(excluded.map((e) => e.path.slice('/tool_input/'.length)))];
      throw new Problem(
        'upstream_not_found',
        `Event ${i.event_id} exists in calendar ${calendarId} but ${filters.join(', ')} excluded it: ${excluded
          .map((e) => e.message)
          .join('; ')}.`,
        { errors: excluded },
      );
    }
    if (i.single_events !== true || !instances) return event;
    return {
      ...event,
      // Occurrences pass the same filters as the event (a changed occurrence may no longer match).
      instances: (instances.items ?? []).filter(
        (o) => fieldExclusions(o, i, limits.updated_min).length === 0,
      ),
      ...(instances.nextPageToken ? { has_more_instances: true } : {}),
    };
  },
});
