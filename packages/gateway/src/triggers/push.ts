import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import type { Keyring } from '../secrets/keyring.js';
import { TRIGGER_PUSH_SECRET } from '../secrets/sealed-columns.js';
import type { ConnectionRow } from '../store/connections.js';
import type { Database } from '../store/db.js';
import { newId } from '../store/ids.js';
import {
  findPushSecret,
  insertPushSecret,
  triggersOfAccounts,
  wakeTriggers,
} from '../store/trigger-channels.js';
import { lockTrigger, updateTrigger } from '../store/triggers.js';
import { triggerType } from './catalog.js';
import type { TriggerChannels } from './channels.js';
import { recordStateChange } from './service.js';

/** HubSpot refuses to be trusted with a timestamp older than this (its documented five minutes). */
export const HUBSPOT_MAX_AGE_MS = 5 * 60_000;

export interface TriggerPushDeps {
  db: Database;
  keyring: Keyring;
  logger: Logger;
  channels: TriggerChannels;
  publicUrl: string;
  /** The connection of this id and its plaintext client secret (HubSpot signs with it). */
  connection(id: string): Promise<{ row: ConnectionRow; clientSecret: () => string } | undefined>;
  /** Looks for due subscriptions now (this process's poller). */
  wake(): void;
}

const refused = (detail: string) => new Problem('unauthenticated', detail);

/**
 * What providers push to the gateway's receiving routes (/push/…): each delivery is authenticated
 * by the provider's own mechanism (a channel's token, Graph's clientState, HubSpot's and Notion's
 * signatures) before anything is read from it, and then only wakes the subscriptions it concerns:
 * their polls, from their cursors, report the changes (so a change reaches the application once,
 * whether a notification or a scheduled poll found it).
 */
export class TriggerPush {
  constructor(private readonly deps: TriggerPushDeps) {}

  /** A Google watch notification (no body): X-Goog-Channel-ID and its X-Goog-Channel-Token. */
  async google(headers: Record<string, string | string[] | undefined>): Promise<void> {
    const id = header(headers, 'x-goog-channel-id');
    const token = header(headers, 'x-goog-channel-token');
    const state = header(headers, 'x-goog-resource-state');
    if (!id || !token)
      throw refused('A Google notification carries X-Goog-Channel-ID and X-Goog-Channel-Token.');
    const channel = await this.deps.channels.find(id);
    if (!channel || !same(token, channel.plainSecret)) {
      throw refused('No watch channel of this gateway has this X-Goog-Channel-ID and X-Goog-Channel-Token.');
    }
    if (
      header(headers, 'x-goog-resource-id') &&
      channel.resource_id &&
      header(headers, 'x-goog-resource-id') !== channel.resource_id
    ) {
      throw refused('X-Goog-Resource-ID is not the resource this channel watches.');
    }
    // "sync" only says the channel is open; anything else is a change to read.
    if (state === 'sync') return;
    await this.wake([channel.subscription_id]);
  }

  /**
   * A Graph notification batch: each item's clientState must be its subscription's. Lifecycle
   * events: reauthorizationRequired renews at once, subscriptionRemoved lapses the channel (the
   * next poll opens another), missed polls now.
   */
  async microsoft(body: unknown): Promise<void> {
    const items = (body as { value?: unknown })?.value;
    if (!Array.isArray(items) || !items.length) throw refused('A Graph notification is {"value": [...]}.');
    const woken: string[] = [];
    const verified: Array<{ subscription: string; lifecycle?: string }> = [];
    for (const item of items as Array<Record<string, unknown>>) {
      const id = typeof item.subscriptionId === 'string' ? item.subscriptionId : '';
      const state = typeof item.clientState === 'string' ? item.clientState : '';
      const channel = id ? await this.deps.channels.find(id) : undefined;
      if (!channel || !state || !same(state, channel.plainSecret)) {
        throw refused(
          'A notification names a subscription this gateway did not make, or the wrong clientState.',
        );
      }
      verified.push({
        subscription: channel.subscription_id,
        ...(typeof item.lifecycleEvent === 'string' ? { lifecycle: item.lifecycleEvent } : {}),
      });
    }
    for (const v of verified) {
      if (v.lifecycle === 'subscriptionRemoved') {
        await this.lapse(v.subscription, 'Microsoft Graph removed the subscription (subscriptionRemoved)');
      } else if (v.lifecycle === 'reauthorizationRequired') {
        // Renewed by the next poll (the one holding the lease), which is now.
        await this.deps.db.query('UPDATE trigger_subscriptions SET channel_due_at = now() WHERE id = $1', [
          v.subscription,
        ]);
      }
      woken.push(v.subscription);
    }
    await this.wake(woken);
  }

  /**
   * A HubSpot webhook batch for the app of `connectionId`: X-HubSpot-Signature-v3 is the base64
   * HMAC-SHA256, keyed with the app's client secret, of method + URI + body + timestamp, and the
   * timestamp is at most five minutes old. Each event's portalId names the accounts concerned.
   */
  async hubspot(
    connectionId: string,
    req: {
      method: string;
      url: string;
      rawBody: string;
      headers: Record<string, string | string[] | undefined>;
    },
  ): Promise<void> {
    const signature = header(req.headers, 'x-hubspot-signature-v3');
    const timestamp = header(req.headers, 'x-hubspot-request-timestamp');
    if (!signature || !timestamp) {
      throw refused('A HubSpot delivery carries X-HubSpot-Signature-v3 and X-HubSpot-Request-Timestamp.');
    }
    const at = Number(timestamp);
    if (!Number.isFinite(at) || Math.abs(Date.now() - at) > HUBSPOT_MAX_AGE_MS) {
      throw refused(
        'X-HubSpot-Request-Timestamp is more than five minutes off; HubSpot deliveries are fresh.',
      );
    }
    const connection = await this.connectionFor(connectionId, 'hubspot');
    const uri = `${this.deps.publicUrl}${req.url}`;
    const expected = createHmac('sha256', connection.clientSecret())
      .update(`${req.method}${uri}${req.rawBody}${timestamp}`)
      .digest('base64');
    if (!same(signature, expected)) throw refused('X-HubSpot-Signature-v3 does not match this delivery.');
    const events = parse(req.rawBody);
    if (!Array.isArray(events))
      throw new Problem('invalid_input', 'A HubSpot delivery is a JSON array of events.');
    await this.wakeConcerned(connectionId, 'hub_id', events, (e) => e.portalId);
  }

  /**
   * A Notion webhook delivery for the integration of `connectionId`. The first request carries
   * `verification_token` (kept, sealed: it signs every event after); events carry X-Notion-Signature,
   * `sha256=` and the hex HMAC-SHA256 of the body keyed with that token. Each event's workspace_id
   * names the accounts concerned.
   */
  async notion(
    connectionId: string,
    req: { rawBody: string; headers: Record<string, string | string[] | undefined> },
  ): Promise<'verification' | 'event'> {
    await this.connectionFor(connectionId, 'notion');
    const signature = header(req.headers, 'x-notion-signature');
    const body = parse(req.rawBody) as Record<string, unknown> | undefined;
    const stored = await findPushSecret(this.deps.db, connectionId);
    if (!signature && body && typeof body.verification_token === 'string' && Object.keys(body).length === 1) {
      if (stored)
        throw refused(
          'This connection has Notion’s verification token already; events must be signed with it.',
        );
      const id = newId('pts');
      await insertPushSecret(this.deps.db, {
        id,
        connection_id: connectionId,
        secret: this.deps.keyring.seal(body.verification_token, { ...TRIGGER_PUSH_SECRET, rowId: id }),
      });
      this.deps.logger.info({ connection_id: connectionId }, 'Notion webhook verification token received');
      return 'verification';
    }
    if (!signature) throw refused('A Notion event carries X-Notion-Signature.');
    if (!stored) throw refused('Notion has not sent this connection its verification token yet.');
    const token = this.deps.keyring.open(stored.secret, { ...TRIGGER_PUSH_SECRET, rowId: stored.id });
    const expected = `sha256=${createHmac('sha256', token).update(req.rawBody).digest('hex')}`;
    if (!same(signature, expected)) throw refused('X-Notion-Signature does not match this delivery.');
    if (!body || typeof body !== 'object')
      throw new Problem('invalid_input', 'A Notion event is a JSON object.');
    await this.wakeConcerned(connectionId, 'workspace_id', [body], (e) => e.workspace_id);
    return 'event';
  }

  /** The verification token Notion sent the connection, for the operator to paste in Notion. */
  async notionVerificationToken(connectionId: string): Promise<string | undefined> {
    const stored = await findPushSecret(this.deps.db, connectionId);
    return stored && this.deps.keyring.open(stored.secret, { ...TRIGGER_PUSH_SECRET, rowId: stored.id });
  }

  private async connectionFor(id: string, provider: string) {
    const found = /^[A-Za-z0-9_]{1,64}$/.test(id) ? await this.deps.connection(id) : undefined;
    if (!found || found.row.provider !== provider) {
      throw refused(`No ${provider} connection of this gateway has id ${id.slice(0, 64)}.`);
    }
    return found;
  }

  private async wakeConcerned(
    connectionId: string,
    field: string,
    events: unknown[],
    accountOf: (e: Record<string, unknown>) => unknown,
  ): Promise<void> {
    const ids = new Set<string>();
    const byAccount = new Map<string, Awaited<ReturnType<typeof triggersOfAccounts>>>();
    for (const event of events as Array<Record<string, unknown>>) {
      const account = accountOf(event ?? {});
      if (account === undefined || account === null) continue;
      const key = String(account);
      let subs = byAccount.get(key);
      if (!subs) {
        subs = await triggersOfAccounts(this.deps.db, connectionId, field, key);
        byAccount.set(key, subs);
      }
      for (const s of subs) {
        const type = safeType(s.trigger_type);
        if (type?.webhook?.concerns(s.config, event)) ids.add(s.id);
      }
    }
    await this.wake([...ids]);
  }

  private async wake(ids: string[]): Promise<void> {
    const woken = await wakeTriggers(this.deps.db, [...new Set(ids)]);
    if (woken.length) this.deps.wake();
  }

  /** The channel is gone: polling only, the state and its event say so; the next poll reopens it. */
  private async lapse(subscriptionId: string, reason: string): Promise<void> {
    await this.deps.channels.lapse(subscriptionId, reason);
    await this.deps.db.transaction(async (tx) => {
      const row = await lockTrigger(tx, subscriptionId);
      if (row?.state !== 'active') return;
      const next = await updateTrigger(tx, row.id, { state: 'degraded' });
      if (next) {
        await recordStateChange(
          this.deps.db,
          tx,
          next,
          row.state,
          `${reason}; polling every ${row.interval_seconds} s until a new channel is open`,
        );
      }
    });
  }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function safeType(name: string) {
  try {
    return triggerType(name);
  } catch {
    return undefined;
  }
}
