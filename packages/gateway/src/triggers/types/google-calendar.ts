import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { Problem } from '../../errors/problem.js';
import type { Observation, PollResult, TriggerType } from '../definition.js';
import { googleWatch } from './google-push.js';
import { changesParam } from './shared.js';

const Config = Type.Object(
  {
    calendar_id: Type.String({
      minLength: 1,
      maxLength: 1024,
      default: 'primary',
      description: 'The calendar to watch: "primary" (the default) or a calendar id.',
    }),
    changes: changesParam(['created', 'updated', 'cancelled']),
  },
  { additionalProperties: false },
);
type Config = Static<typeof Config>;

interface CalendarEvent {
  id: string;
  etag?: string;
  updated?: string;
  status?: string;
  [field: string]: unknown;
}

interface EventsPage {
  items?: CalendarEvent[];
  nextPageToken?: string;
  nextSyncToken?: string;
}

/** More pages than this in one sync is a calendar too large to watch whole. */
const MAX_PAGES = 40;

/**
 * Calendar events created, updated or cancelled, read with Calendar's sync tokens: a full listing
 * sets the token, each poll lists what changed since (cancelled events included), and a token
 * Calendar no longer accepts (410 Gone) is replaced by a full listing compared with what was seen.
 */
export const calendarEvents: TriggerType<Config> = {
  name: 'calendar_events',
  provider: 'google_calendar',
  description:
    'An event of a calendar was created, updated or cancelled (deleted). The event carries the Calendar event resource.',
  config: Config,
  changes: ['created', 'updated', 'deleted'],
  changeNames: { deleted: 'cancelled' },
  mechanism: 'Calendar sync tokens (events.list with syncToken); a 410 Gone starts a full resync',
  async baseline({ client, config }) {
    return fullSync(client, config.calendar_id);
  },
  async poll({ client, config }, cursor) {
    const token = typeof cursor.sync_token === 'string' ? cursor.sync_token : undefined;
    if (!token) return fullSync(client, config.calendar_id);
    try {
      const { events, syncToken } = await listAll(client, config.calendar_id, { syncToken: token });
      return { cursor: { sync_token: syncToken }, observations: events.map(observe) };
    } catch (error) {
      // "Sync token is no longer valid, a full sync is required."
      if (error instanceof Problem && error.options.upstream?.status === 410) {
        return fullSync(client, config.calendar_id);
      }
      throw error;
    }
  },
  push: googleWatch<Config>({
    async watch(config) {
      return { path: `/calendar/v3/calendars/${encodeURIComponent(config.calendar_id)}/events/watch` };
    },
    stopPath: '/calendar/v3/channels/stop',
  }),
};

async function fullSync(client: ProviderClient, calendarId: string): Promise<PollResult> {
  // Without showDeleted a full listing leaves cancelled events out: one seen before and missing
  // now was cancelled meanwhile.
  const { events, syncToken } = await listAll(client, calendarId, {});
  return { cursor: { sync_token: syncToken }, observations: events.map(observe), complete: true };
}

function observe(event: CalendarEvent): Observation {
  return {
    id: event.id,
    version: event.etag ?? event.updated ?? '',
    deleted: event.status === 'cancelled',
    item: event,
  };
}

async function listAll(
  client: ProviderClient,
  calendarId: string,
  params: { syncToken?: string },
): Promise<{ events: CalendarEvent[]; syncToken: string }> {
  const events: CalendarEvent[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.request<EventsPage>({
      method: 'GET',
      path: `/calendar/v3/calendars/${encodeURIComponent(calendarId)}/events`,
      query: { maxResults: 250, syncToken: params.syncToken, pageToken },
    });
    events.push(...(res.data.items ?? []));
    if (res.data.nextPageToken) {
      pageToken = res.data.nextPageToken;
      continue;
    }
    if (!res.data.nextSyncToken) {
      throw new Problem('upstream_error', 'Google Calendar ended an event listing without a sync token.', {
        retryable: true,
      });
    }
    return { events, syncToken: res.data.nextSyncToken };
  }
  throw new Problem(
    'upstream_error',
    `The calendar has more than ${MAX_PAGES * 250} changed events in one sync; watch a smaller calendar.`,
    { retryable: false },
  );
}
