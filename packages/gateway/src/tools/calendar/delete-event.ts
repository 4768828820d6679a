import { Type } from '@sinclair/typebox';
import { defineTool } from '../types.js';
import { calendarIdParam, eventIdParam, eventsPath, sendUpdatesParam, sendUpdatesQuery } from './shared.js';

export const calendarDeleteEvent = defineTool({
  name: 'calendar_delete_event',
  provider: 'google_calendar',
  description: [
    'Deletes (cancels) an event in a Google Calendar. On a recurring event\'s id it deletes the whole series; on an instance id ("<id>_20250609T100000Z", from calendar_list_events with single_events) only that occurrence.',
    'send_updates true emails the guests about the cancellation, false does not. Deleting an event that is already deleted is an upstream_not_found error; calendar_get_event_by_id with show_deleted true still finds a deleted event.',
    'Example: {"event_id":"5qk3mnd1b2c3d4e5f6g7h8i9j0","calendar_id":"primary"}',
  ].join(' '),
  input: Type.Object(
    {
      event_id: eventIdParam,
      calendar_id: Type.Optional(calendarIdParam),
      send_updates: Type.Optional(sendUpdatesParam),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: false, destructive: true, idempotent: true },
  async run(i, { client }) {
    const calendarId = i.calendar_id ?? 'primary';
    await client.request({
      method: 'DELETE',
      path: eventsPath(calendarId, i.event_id),
      query: { sendUpdates: sendUpdatesQuery(i.send_updates) },
    });
    return { deleted: true, event_id: i.event_id, calendar_id: calendarId };
  },
});
