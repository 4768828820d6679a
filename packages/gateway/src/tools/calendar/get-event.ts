import { Type } from '@sinclair/typebox';
import { defineTool } from '../types.js';
import { calendarIdParam, checkTimezone, eventIdParam, eventsPath, timezoneParam } from './shared.js';

export const calendarGetEventById = defineTool({
  name: 'calendar_get_event_by_id',
  provider: 'google_calendar',
  description: [
    'Returns one Google Calendar event by its id: title, times, attendees with their responses, recurrence, conference link, status.',
    'Use it to read an event before changing it, or to follow up on an id from calendar_list_events. Cancelled (deleted) events are still returned, with status "cancelled".',
    'Example: {"event_id":"5qk3mnd1b2c3d4e5f6g7h8i9j0","calendar_id":"primary"}',
  ].join(' '),
  input: Type.Object(
    {
      event_id: eventIdParam,
      calendar_id: Type.Optional(calendarIdParam),
      timezone: Type.Optional(
        Type.String({
          ...timezoneParam,
          description:
            'IANA time zone for the times in the answer, e.g. "Asia/Tokyo"; default the calendar\'s own zone.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  check(i) {
    const errors: { path: string; message: string }[] = [];
    checkTimezone(i.timezone, errors);
    return errors;
  },
  async run(i, { client }) {
    const res = await client.request<Record<string, unknown>>({
      method: 'GET',
      path: eventsPath(i.calendar_id ?? 'primary', i.event_id),
      query: { timeZone: i.timezone },
    });
    return res.data;
  },
});
