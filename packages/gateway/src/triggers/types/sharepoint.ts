import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { Problem } from '../../errors/problem.js';
import type { Cursor, Observation, PollResult, TriggerType } from '../definition.js';
import { changesParam, epochOf } from './shared.js';

const Config = Type.Object(
  {
    drive_id: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9!_.-]+$',
      description: 'The document library (drive) to watch: an id from GET /v1.0/sites/{site}/drives.',
    }),
    changes: changesParam(['created', 'updated', 'deleted']),
  },
  { additionalProperties: false },
);
type Config = Static<typeof Config>;

interface DriveItem {
  id: string;
  name?: string;
  eTag?: string;
  cTag?: string;
  createdDateTime?: string;
  lastModifiedDateTime?: string;
  deleted?: unknown;
  root?: unknown;
  [field: string]: unknown;
}

interface DeltaPage {
  value?: DriveItem[];
  '@odata.nextLink'?: string;
  '@odata.deltaLink'?: string;
}

const MAX_PAGES = 50;

/**
 * Files and folders of a document library created, changed or deleted, read with Graph's delta
 * query: `root/delta?token=latest` sets the starting point, each poll follows the saved delta link.
 * A token Graph no longer accepts (410 resyncRequired) is replaced by a full enumeration, of which
 * only the items changed since the last poll are reported.
 */
export const sharepointDriveItems: TriggerType<Config> = {
  name: 'sharepoint_drive_items',
  provider: 'sharepoint',
  description:
    'A file or folder of a site’s document library (a drive) was created, changed or deleted. The event carries the driveItem.',
  config: Config,
  changes: ['created', 'updated', 'deleted'],
  mechanism: 'Graph delta links (GET /v1.0/drives/{id}/root/delta); a 410 resyncRequired starts a resync',
  async baseline({ client, config }) {
    const { token } = await follow(client, config.drive_id, 'latest');
    return { cursor: { token, checked_at: Date.now() }, observations: [] };
  },
  async poll({ client, config }, cursor) {
    const token = typeof cursor.token === 'string' ? cursor.token : 'latest';
    try {
      const { items, token: next } = await follow(client, config.drive_id, token);
      return { cursor: { token: next, checked_at: Date.now() }, observations: items.map(observe) };
    } catch (error) {
      if (error instanceof Problem && error.options.upstream?.status === 410) {
        return resync(client, config.drive_id, cursor);
      }
      throw error;
    }
  },
  push: {
    route: 'microsoft',
    // Graph keeps a driveItem subscription for at most 42,300 minutes.
    maxSeconds: 42_300 * 60,
    async open({ client, config }, _cursor, channel) {
      const res = await client.request<{ id: string; expirationDateTime?: string }>({
        method: 'POST',
        path: '/v1.0/subscriptions',
        json: {
          // driveItem subscriptions know only "updated" (a create or delete updates the root).
          changeType: 'updated',
          notificationUrl: channel.address,
          lifecycleNotificationUrl: channel.address,
          resource: `/drives/${config.drive_id}/root`,
          expirationDateTime: new Date(channel.expiresAt).toISOString(),
          clientState: channel.secret,
        },
      });
      return { id: res.data.id, expiresAt: epochOf(res.data.expirationDateTime) ?? channel.expiresAt };
    },
    async renew({ client }, channel) {
      const res = await client.request<{ expirationDateTime?: string }>({
        method: 'PATCH',
        path: `/v1.0/subscriptions/${encodeURIComponent(channel.id)}`,
        json: { expirationDateTime: new Date(channel.expiresAt).toISOString() },
      });
      return { expiresAt: epochOf(res.data.expirationDateTime) ?? channel.expiresAt };
    },
    async close({ client }, channel) {
      await client.request({
        method: 'DELETE',
        path: `/v1.0/subscriptions/${encodeURIComponent(channel.id)}`,
      });
    },
  },
};

function observe(item: DriveItem): Observation {
  // SharePoint's times are whole seconds: the end of that second, so an item created in the second
  // the subscription started counts as created.
  const created = epochOf(item.createdDateTime);
  const createdAt = created === undefined ? undefined : created + 999;
  return {
    id: item.id,
    version: item.eTag ?? item.lastModifiedDateTime ?? '',
    ...(item.deleted !== undefined ? { deleted: true } : {}),
    ...(createdAt === undefined ? {} : { createdAt }),
    item,
  };
}

/** Every page of a delta from `token` (or the first enumeration when undefined), and the next token. */
async function follow(
  client: ProviderClient,
  driveId: string,
  token: string | undefined,
): Promise<{ items: DriveItem[]; token: string }> {
  const items: DriveItem[] = [];
  let query: Record<string, string | undefined> = { token };
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.request<DeltaPage>({
      method: 'GET',
      path: `/v1.0/drives/${encodeURIComponent(driveId)}/root/delta`,
      query,
    });
    // The drive's root is in every first enumeration; it is not a file of the library.
    items.push(...(res.data.value ?? []).filter((item) => item.root === undefined));
    const delta = res.data['@odata.deltaLink'];
    if (delta) return { items, token: linkParams(delta).token ?? '' };
    const next = res.data['@odata.nextLink'];
    if (!next) break;
    query = linkParams(next);
  }
  throw new Problem('upstream_error', 'Microsoft Graph ended a delta query without a delta link.', {
    retryable: true,
  });
}

/** The query of a link Graph returned (its host is Graph's; only the parameters are followed). */
function linkParams(link: string): Record<string, string> {
  return Object.fromEntries(new URL(link).searchParams);
}

async function resync(client: ProviderClient, driveId: string, cursor: Cursor): Promise<PollResult> {
  const { items, token } = await follow(client, driveId, undefined);
  const since = (typeof cursor.checked_at === 'number' ? cursor.checked_at : Date.now()) - 60_000;
  // Items untouched since the last poll were reported already, or never changed.
  const changed = items.filter(
    (item) => (epochOf(item.lastModifiedDateTime) ?? Number.POSITIVE_INFINITY) >= since,
  );
  return { cursor: { token, checked_at: Date.now() }, observations: changed.map(observe) };
}
