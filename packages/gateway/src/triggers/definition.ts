import type { TSchema } from '@sinclair/typebox';
import type { ProviderClient } from '../accounts/provider-client.js';

/** The changes a trigger reports, in Portico's words; a type may name deletions its provider's way. */
export type Change = 'created' | 'updated' | 'deleted';

/** Where a subscription stands at the provider: the type's own cursor, kept as JSON. */
export type Cursor = Record<string, unknown>;

/**
 * One item as the provider listed it: its id, a version that changes whenever the item does (an
 * etag, a modification time), and what the event carries.
 */
export interface Observation {
  id: string;
  version: string;
  /** The provider says the item is gone (a cancelled event, a removed file). */
  deleted?: boolean;
  /**
   * When the provider created it (epoch ms): an item the subscription has not seen is "created"
   * only if it was created after the subscription started; otherwise it is "updated". Types whose
   * baseline records every item leave it out (an unseen item is new).
   */
  createdAt?: number;
  /** The item as the event delivers it. */
  item: Record<string, unknown>;
}

export interface PollResult {
  cursor: Cursor;
  observations: Observation[];
  /**
   * The observations are the whole set (a baseline, or a full resync after the provider refused an
   * old cursor): items seen before but missing now were deleted.
   */
  complete?: boolean;
}

export interface PollContext<C> {
  /** The provider as the subscription's end user: credential, refresh and rate governor included. */
  client: ProviderClient;
  config: C;
  /** Epoch ms when the subscription started (its baseline). */
  since: number;
}

/**
 * A trigger type: what it watches at which provider, how it is configured, and how it reads the
 * provider's change feed. `baseline` sets the starting point when a subscription is created
 * (nothing is reported for it); `poll` reads what changed since the cursor.
 */
export interface TriggerType<C = Record<string, unknown>> {
  name: string;
  /** The provider key of the connections it runs on. */
  provider: string;
  description: string;
  /** JSON Schema (TypeBox) of `config`, validated when a subscription is created. */
  config: TSchema;
  /** The changes it can report; a subscription may ask for some of them (config.changes). */
  changes: readonly Change[];
  /** Names used in events for its changes where the provider has its own (Calendar: cancelled). */
  changeNames?: Partial<Record<Change, string>>;
  /** How it learns of changes: the provider's cursor it polls with. */
  mechanism: string;
  baseline(ctx: PollContext<C>): Promise<PollResult>;
  poll(ctx: PollContext<C>, cursor: Cursor): Promise<PollResult>;
  /** The provider's push channel per subscription, where it has one (Google, Graph). */
  push?: PushChannel<C>;
  /** The provider's app-level webhooks, where they carry its changes (HubSpot, Notion). */
  webhook?: AppWebhook<C>;
}

/** What Portico asks a provider for when it opens a channel. */
export interface ChannelRequest {
  /** Portico's id for it (Google echoes it in X-Goog-Channel-ID; Graph assigns its own). */
  id: string;
  /** Google's channel token, Graph's clientState: every notification must carry it. */
  secret: string;
  /** Where notifications go: the gateway's public receiving route for the provider. */
  address: string;
  /** Epoch ms the channel is asked to last until. */
  expiresAt: number;
}

export interface OpenedChannel {
  /** The provider's id for the channel (Graph's subscription id; Google: the one asked for). */
  id: string;
  /** Google's X-Goog-Resource-ID. */
  resourceId?: string;
  /** Epoch ms the provider will keep it until. */
  expiresAt: number;
}

/**
 * A push channel: the provider notifies the gateway's receiving route that something changed, and
 * the subscription is polled at once (the cursor stays the one source of events).
 */
export interface PushChannel<C> {
  /** The receiving route its notifications arrive at: /push/{route}. */
  route: 'google' | 'microsoft';
  /** The longest the provider keeps a channel, in seconds. */
  maxSeconds: number;
  open(ctx: PollContext<C>, cursor: Cursor, channel: ChannelRequest): Promise<OpenedChannel>;
  /** Extends a channel in place (Graph's PATCH); without it a new channel replaces the old (Google). */
  renew?(ctx: PollContext<C>, channel: { id: string; expiresAt: number }): Promise<{ expiresAt: number }>;
  close(ctx: PollContext<C>, channel: { id: string; resourceId: string | null }): Promise<void>;
}

/** App-level webhooks: one URL per app, every account's changes; which of them concern a subscription. */
export interface AppWebhook<C> {
  route: 'hubspot' | 'notion';
  concerns(config: C, event: Record<string, unknown>): boolean;
}

/** A type's definition, erased to what the catalog holds. */
// biome-ignore lint/suspicious/noExplicitAny: each type narrows its own config.
export type AnyTriggerType = TriggerType<any>;
