import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import type { Keyring } from '../secrets/keyring.js';
import { TRIGGER_CHANNEL_SECRET } from '../secrets/sealed-columns.js';
import type { Queryable } from '../store/db.js';
import {
  channelOf,
  deleteChannel,
  findChannel,
  saveChannel,
  setChannelState,
  type TriggerChannelRow,
} from '../store/trigger-channels.js';
import type { TriggerRow } from '../store/triggers.js';
import type { AnyTriggerType, Cursor, PollContext } from './definition.js';

export interface ChannelConfig {
  /** PORTICO_TRIGGER_PUSH: open push channels where the provider has them. */
  enabled: boolean;
  /** PORTICO_TRIGGER_CHANNEL_SECONDS: how long a channel is asked to last (capped by the provider). */
  channelSeconds: number;
}

/** Where push stands after a poll looked at the channel, for the poll's health. */
export interface PushNote {
  state: 'active' | 'lapsed';
  error?: string;
  /** Push came back after having lapsed. */
  restored?: boolean;
}

/** The shortest wait before a lapsed channel is tried again. */
const RETRY_MIN_SECONDS = 1;

/**
 * Push channels of trigger subscriptions (Google watch channels, Graph subscriptions): opened when a
 * subscription is created, renewed before they expire by whichever replica holds the
 * subscription's lease (the poller calls `maintain` inside a poll), closed at the provider when the
 * subscription goes. A channel that cannot be opened or renewed lapses: the subscription polls at its
 * interval and its health says so; the channel is tried again at each poll until it works.
 */
export class TriggerChannels {
  constructor(
    private readonly deps: {
      db: Queryable;
      keyring: Keyring;
      logger: Logger;
      publicUrl: string;
      config: ChannelConfig;
    },
  ) {}

  /** Whether the subscription's type pushes here (PORTICO_TRIGGER_PUSH off: none do). */
  pushes(type: AnyTriggerType): boolean {
    return this.deps.config.enabled && type.push !== undefined;
  }

  /**
   * Opens or renews the subscription's channel when it is due; otherwise reads where push stands
   * from the row (no query). Never throws: a failure lapses the channel.
   */
  async maintain(
    row: TriggerRow,
    type: AnyTriggerType,
    ctx: PollContext<Record<string, unknown>>,
    cursor: Cursor,
  ): Promise<PushNote | undefined> {
    if (!this.pushes(type)) return undefined;
    const due = row.channel_due_at ? row.channel_due_at.getTime() : 0;
    if (row.channel_state && due > Date.now()) {
      return row.channel_state === 'active'
        ? { state: 'active' }
        : { state: 'lapsed', error: row.channel_error ?? 'the push channel lapsed' };
    }
    const wasLapsed = row.channel_state === 'lapsed';
    try {
      await this.openOrRenew(row, type, ctx, cursor);
      return { state: 'active', ...(wasLapsed ? { restored: true } : {}) };
    } catch (error) {
      const message = describe(error);
      this.deps.logger.info(
        { trigger_id: row.id, trigger_type: row.trigger_type, error: message },
        'trigger push channel could not be opened or renewed',
      );
      const retry = Math.max(RETRY_MIN_SECONDS, row.interval_seconds);
      await setChannelState(
        this.deps.db,
        row.id,
        'lapsed',
        new Date(Date.now() + retry * 1000),
        message,
      ).catch(() => {});
      return { state: 'lapsed', error: message };
    }
  }

  /** Stops the subscription's channel at the provider (its deletion); a failure is only logged. */
  async close(row: TriggerRow, type: AnyTriggerType, ctx: PollContext<Record<string, unknown>>) {
    if (!type.push) return;
    const channel = await channelOf(this.deps.db, row.id);
    if (!channel) return;
    await type.push
      .close(ctx, { id: channel.id, resourceId: channel.resource_id })
      .catch((err: unknown) =>
        this.deps.logger.info({ trigger_id: row.id, err: describe(err) }, 'trigger push channel not stopped'),
      );
    await deleteChannel(this.deps.db, channel.id);
  }

  /** The channel of this id with its secret opened, for a notification to be checked against. */
  async find(id: string): Promise<(TriggerChannelRow & { plainSecret: string }) | undefined> {
    const row = await findChannel(this.deps.db, id);
    if (!row) return undefined;
    const plainSecret = this.deps.keyring.open(row.secret, { ...TRIGGER_CHANNEL_SECRET, rowId: row.id });
    return { ...row, plainSecret };
  }

  /** The provider said the channel is gone (Graph's subscriptionRemoved): reopened at the next poll. */
  async lapse(subscriptionId: string, reason: string): Promise<void> {
    const channel = await channelOf(this.deps.db, subscriptionId);
    if (channel) await deleteChannel(this.deps.db, channel.id);
    await setChannelState(this.deps.db, subscriptionId, 'lapsed', new Date(), reason);
  }

  private async openOrRenew(
    row: TriggerRow,
    type: AnyTriggerType,
    ctx: PollContext<Record<string, unknown>>,
    cursor: Cursor,
  ): Promise<void> {
    const push = type.push!;
    const seconds = Math.min(push.maxSeconds, this.deps.config.channelSeconds);
    const asked = Date.now() + seconds * 1000;
    let existing = await channelOf(this.deps.db, row.id);
    let expiresAt = 0;
    let renewed = false;
    if (existing && push.renew && existing.expires_at.getTime() > Date.now()) {
      try {
        ({ expiresAt } = await push.renew(ctx, { id: existing.id, expiresAt: asked }));
        renewed = true;
        await this.deps.db.query('UPDATE trigger_channels SET expires_at = $2 WHERE id = $1', [
          existing.id,
          new Date(expiresAt),
        ]);
      } catch (error) {
        // The provider no longer knows it (removed, expired early): a new one instead.
        if (!(error instanceof Problem && error.code === 'upstream_not_found')) throw error;
        await deleteChannel(this.deps.db, existing.id);
        existing = undefined;
      }
    }
    if (!renewed) {
      const secret = randomBytes(24).toString('base64url');
      const opened = await push.open(ctx, cursor, {
        id: `ptc_${randomBytes(16).toString('hex')}`,
        secret,
        address: `${this.deps.publicUrl}/push/${push.route}`,
        expiresAt: asked,
      });
      expiresAt = opened.expiresAt;
      await saveChannel(this.deps.db, {
        id: opened.id,
        subscription_id: row.id,
        resource_id: opened.resourceId ?? null,
        secret: this.deps.keyring.seal(secret, { ...TRIGGER_CHANNEL_SECRET, rowId: opened.id }),
        expires_at: new Date(expiresAt),
      });
      // A Google renewal is a new channel: the old one is stopped once the new one is in place.
      if (existing && existing.id !== opened.id) {
        await push
          .close(ctx, { id: existing.id, resourceId: existing.resource_id })
          .catch((err: unknown) =>
            this.deps.logger.info(
              { trigger_id: row.id, err: describe(err) },
              'replaced trigger push channel not stopped',
            ),
          );
      }
    }
    await setChannelState(
      this.deps.db,
      row.id,
      'active',
      new Date(renewAt(expiresAt, row.interval_seconds)),
      null,
    );
  }
}

/**
 * When a channel expiring at `expiresAt` is renewed: early enough that a poll (at least one per
 * interval) comes before it expires, and not later than four fifths of its life.
 */
export function renewAt(expiresAt: number, intervalSeconds: number): number {
  const life = expiresAt - Date.now();
  return expiresAt - Math.max(2 * intervalSeconds * 1000, life / 5);
}

function describe(error: unknown): string {
  if (error instanceof Problem) return `${error.code}: ${error.detail}`.slice(0, 1000);
  if (error instanceof Error) return error.message.slice(0, 1000);
  return String(error).slice(0, 1000);
}
