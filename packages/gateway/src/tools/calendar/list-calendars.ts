import { Type } from '@sinclair/typebox';
import { paged } from '../pagination.js';
import { defineTool } from '../types.js';

interface CalendarList {
  items?: Record<string, unknown>[];
  nextPageToken?: string;
}

export const calendarListCalendars = defineTool({
  name: 'calendar_list_calendars',
  provider: 'google_calendar',
  description: [
    "Lists the calendars in the user's Google Calendar list: id, summary (name), time zone, access role (owner, writer, reader, freeBusyReader) and which one is primary.",
    'Use it to find the calendar_id for the other calendar_ tools (the user\'s main calendar is always "primary"). Paginated: when has_more is true, call again with next_page merged into the input.',
    'Example: {"min_access_role":"writer","max_results":50}',
  ].join(' '),
  input: Type.Object(
    {
      min_access_role: Type.Optional(
        Type.Union(
          [
            Type.Literal('freeBusyReader'),
            Type.Literal('reader'),
            Type.Literal('writer'),
            Type.Literal('owner'),
          ],
          {
            description:
              'Only calendars where the user has at least this role: "freeBusyReader", "reader", "writer" (can create events) or "owner".',
          },
        ),
      ),
      max_results: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 250, description: 'Calendars per page (1–250, default 100).' }),
      ),
      page_token: Type.Optional(
        Type.String({ minLength: 1, description: 'Cursor from next_page of the previous call.' }),
      ),
      show_hidden: Type.Optional(
        Type.Boolean({ description: 'Include calendars the user hid from the list (default false).' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(i, { client }) {
    const res = await client.request<CalendarList>({
      method: 'GET',
      path: '/calendar/v3/users/me/calendarList',
      query: {
        minAccessRole: i.min_access_role,
        maxResults: i.max_results,
        pageToken: i.page_token,
        showHidden: i.show_hidden,
      },
    });
    return { results: res.data.items ?? [], ...paged('page_token', res.data.nextPageToken) };
  },
});
