import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { paged } from '../pagination.js';
import { defineTool } from '../types.js';

interface CalendarList {
  items?: Record<string, unknown>[];
  nextPageToken?: string;
  nextSyncToken?: string;
}

export const calendarListCalendars = defineTool({
  name: 'calendar_list_calendars',
  provider: 'google_calendar',
  description: [
    "Lists the calendars in the user's Google Calendar list: id, summary (name), time zone, access role (owner, writer, reader, freeBusyReader) and which one is primary.",
    'Use it to find the calendar_id for the other calendar_ tools (the user\'s main calendar is always "primary"). Paginated: when has_more is true, call again with next_page merged into the input.',
    'The last page carries next_sync_token: a later call with sync_token set to it returns only the calendars added, changed, hidden or removed since (removed ones with deleted: true). With sync_token, min_access_role is not allowed and show_deleted/show_hidden cannot be false. An expired token answers upstream_not_found (Google 410): list again without sync_token.',
    'Example: {"min_access_role":"writer","max_results":50}',
  ].join(' '),
  input: Type.Object(
    {
      max_results: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 250, description: 'Calendars per page (1–250, default 100).' }),
      ),
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
              'Only calendars where the user has at least this role: "freeBusyReader", "reader", "writer" (can create events) or "owner". Not with sync_token.',
          },
        ),
      ),
      page_token: Type.Optional(
        Type.String({ minLength: 1, description: 'Cursor from next_page of the previous call.' }),
      ),
      show_deleted: Type.Optional(
        Type.Boolean({
          description:
            'Include calendars removed from the list, each with deleted: true (default false). With sync_token removals are always included.',
        }),
      ),
      show_hidden: Type.Optional(
        Type.Boolean({
          description:
            'Include calendars the user hid from the list, each with hidden: true (default false). With sync_token hidden ones are always included.',
        }),
      ),
      sync_token: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          description:
            'next_sync_token of an earlier listing: returns only the calendars that changed since then (updates since the last sync).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  check(i) {
    const errors: FieldError[] = [];
    if (i.sync_token === undefined) return errors;
    // Google's rules for calendarList.list with a syncToken, checked before the call.
    if (i.min_access_role !== undefined) {
      errors.push({
        path: '/min_access_role',
        message:
          'cannot be combined with sync_token; omit it (rule: an incremental sync returns every changed calendar, whatever the role).',
      });
    }
    for (const field of ['show_deleted', 'show_hidden'] as const) {
      if (i[field] === false) {
        errors.push({
          path: `/${field}`,
          message: `cannot be false with sync_token; omit it (rule: an incremental sync always includes removed and hidden calendars).`,
        });
      }
    }
    return errors;
  },
  async run(i, { client }) {
    const res = await client.request<CalendarList>({
      method: 'GET',
      path: '/calendar/v3/users/me/calendarList',
      query: {
        minAccessRole: i.min_access_role,
        maxResults: i.max_results,
        pageToken: i.page_token,
        showDeleted: i.show_deleted,
        showHidden: i.show_hidden,
        syncToken: i.sync_token,
      },
    });
    return {
      results: res.data.items ?? [],
      ...paged('page_token', res.data.nextPageToken),
      // Only the last page has one; it is the sync_token of the next incremental call.
      next_sync_token: res.data.nextSyncToken ?? null,
    };
  },
});
