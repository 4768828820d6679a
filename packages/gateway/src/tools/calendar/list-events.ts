import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { paged } from '../pagination.js';
import { defineTool } from '../types.js';
import {
  calendarIdParam,
  checkInstants,
  checkTimezone,
  eventsPath,
  instantParam,
  timezoneParam,
} from './shared.js';

interface EventList {
  items?: Record<string, unknown>[];
  nextPageToken?: string;
  timeZone?: string;
  summary?: string;
}

export const calendarListEvents = defineTool({
  name: 'calendar_list_events',
  provider: 'google_calendar',
  description: [
    'Lists events of a Google Calendar, optionally in a time window (time_min/time_max) and matching free text (query: every word must appear in the title, description, location or guests).',
    'Use single_events=true to expand recurring events into their occurrences (each with its own id) — needed to answer "what is on my calendar this week"; otherwise a recurring series is listed once. order_by is "startTime" (only with single_events=true) or "updated".',
    'Paginated: when has_more is true, call again with the same input plus next_page. Deleted events are left out unless show_deleted is true.',
    'Example: {"time_min":"2025-06-02T00:00:00Z","time_max":"2025-06-09T00:00:00Z","single_events":true,"order_by":"startTime","max_results":50}',
  ].join(' '),
  input: Type.Object(
    {
      calendar_id: Type.Optional(calendarIdParam),
      max_results: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 2500, description: 'Events per page (1–2500, default 250).' }),
      ),
      order_by: Type.Optional(
        Type.Union([Type.Literal('startTime'), Type.Literal('updated')], {
          description:
            'Order of the results: "startTime" (ascending start; requires single_events=true) or "updated" (last modification, ascending). Default: unspecified order.',
        }),
      ),
      page_token: Type.Optional(
        Type.String({ minLength: 1, description: 'Cursor from next_page of the previous call.' }),
      ),
      query: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 1024,
          description:
            'Free-text search; every word must occur in the event (title, description, location, guests).',
        }),
      ),
      single_events: Type.Optional(
        Type.Boolean({
          description:
            'true expands recurring events into single occurrences; false (default) lists each series once.',
        }),
      ),
      time_max: Type.Optional(instantParam('Only events starting before this instant')),
      time_min: Type.Optional(instantParam('Only events ending after this instant')),
      show_deleted: Type.Optional(
        Type.Boolean({ description: 'Include cancelled (deleted) events (default false).' }),
      ),
      timezone: Type.Optional(
        Type.String({
          ...timezoneParam,
          description:
            'IANA time zone for the times in the answer, e.g. "Asia/Tokyo"; default the calendar\'s zone.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  check(i) {
    const errors: FieldError[] = [];
    checkTimezone(i.timezone, errors);
    if (i.order_by === 'startTime' && i.single_events !== true) {
      errors.push({
        path: '/order_by',
        message:
          '"startTime" needs "single_events": true (rule: ordering by start time is only available when recurring events are expanded into single events).',
      });
    }
    checkInstants({ time_min: i.time_min, time_max: i.time_max }, errors);
    return errors;
  },
  async run(i, { client }) {
    const res = await client.request<EventList>({
      method: 'GET',
      path: eventsPath(i.calendar_id ?? 'primary'),
      query: {
        timeMin: i.time_min,
        timeMax: i.time_max,
        q: i.query,
        singleEvents: i.single_events,
        orderBy: i.order_by,
        maxResults: i.max_results,
        pageToken: i.page_token,
        showDeleted: i.show_deleted,
        timeZone: i.timezone,
      },
    });
    return {
      results: res.data.items ?? [],
      ...paged('page_token', res.data.nextPageToken),
      calendar_summary: res.data.summary ?? null,
      time_zone: res.data.timeZone ?? null,
    };
  },
});
