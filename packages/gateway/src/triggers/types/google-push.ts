import type { ProviderClient } from '../../accounts/provider-client.js';
import type { ChannelRequest, OpenedChannel, PushChannel } from '../definition.js';

/** The longest a Google watch channel is asked to last: a week, Drive's limit for changes. */
const MAX_SECONDS = 7 * 24 * 3600;

interface Channel {
  id: string;
  resourceId?: string;
  expiration?: string;
}

/**
 * A Google watch channel (Calendar's events.watch, Drive's changes.watch): Google POSTs to the
 * address with X-Goog-Channel-ID and X-Goog-Channel-Token, `sync` first, then one per change.
 * Google has no renewal: a new channel replaces the old, which is stopped (channels.stop).
 */
export function googleWatch<C>(api: {
  /** The watch call: path and query for this subscription. */
  watch(
    config: C,
    cursor: Record<string, unknown>,
    client: ProviderClient,
  ): Promise<{ path: string; query?: Record<string, string> }>;
  /** The API's channels.stop path. */
  stopPath: string;
}): PushChannel<C> {
  return {
    route: 'google',
    maxSeconds: MAX_SECONDS,
    async open({ client, config }, cursor, channel: ChannelRequest): Promise<OpenedChannel> {
      const { path, query } = await api.watch(config, cursor, client);
      const res = await client.request<Channel>({
        method: 'POST',
        path,
        ...(query ? { query } : {}),
        json: {
          id: channel.id,
          type: 'web_hook',
          address: channel.address,
          token: channel.secret,
          expiration: channel.expiresAt,
        },
      });
      const expiration = Number(res.data.expiration);
      return {
        id: res.data.id ?? channel.id,
        ...(res.data.resourceId ? { resourceId: res.data.resourceId } : {}),
        expiresAt: Number.isFinite(expiration) && expiration > 0 ? expiration : channel.expiresAt,
      };
    },
    async close({ client }, channel) {
      await client.request({
        method: 'POST',
        path: api.stopPath,
        json: { id: channel.id, resourceId: channel.resourceId },
      });
    },
  };
}
