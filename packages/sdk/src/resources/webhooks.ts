import { camelKeys, snakeKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import { segment } from './connections.js';

type Raw = Record<string, unknown>;

export interface Webhook {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  /** Until when the previous secret still signs (after a rotation). */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateWebhookInput {
  url: string;
  /** Event types, or `*` for every type except the opt-in `tool.execution.failed`. */
  events: string[];
  description?: string;
  enabled?: boolean;
}

export type UpdateWebhookInput = Partial<Omit<CreateWebhookInput, 'description'>> & {
  description?: string | null;
};

/** One attempt to deliver an event to an endpoint, as the delivery log shows it. */
export type WebhookDelivery = Record<string, unknown>;

export interface PorticoEvent {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/** Webhook endpoints: signed (Standard Webhooks), retried, logged. */
export class Webhooks {
  constructor(private readonly transport: Transport) {}

  /** The signing secret is in the answer only. */
  async create(input: CreateWebhookInput): Promise<Webhook & { secret: string }> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'POST', path: '/api/v1/webhooks', json: snakeKeys(input) }),
    );
  }

  list(options: { pageSize?: number } = {}): PageList<Webhook> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/webhooks',
        query: { page_size: options.pageSize, page_token: pageToken },
      });
      return { data: raw.data.map((w) => camelKeys<Webhook>(w)), nextPageToken: raw.next_page_token };
    });
  }

  async get(id: string): Promise<Webhook> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/webhooks/${segment(id)}` }),
    );
  }

  async update(id: string, changes: UpdateWebhookInput): Promise<Webhook> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'PATCH',
        path: `/api/v1/webhooks/${segment(id)}`,
        json: snakeKeys(changes),
      }),
    );
  }

  async delete(id: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: `/api/v1/webhooks/${segment(id)}` });
  }

  /** A new signing secret; the old one keeps signing for 24 hours. */
  async rotateSecret(id: string): Promise<Webhook & { secret: string }> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'POST',
        path: `/api/v1/webhooks/${segment(id)}/rotate-secret`,
      }),
    );
  }

  deliveries(id: string, options: { eventId?: string; pageSize?: number } = {}): PageList<WebhookDelivery> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: `/api/v1/webhooks/${segment(id)}/deliveries`,
        query: { event_id: options.eventId, page_size: options.pageSize, page_token: pageToken },
      });
      return { data: raw.data.map((d) => camelKeys<WebhookDelivery>(d)), nextPageToken: raw.next_page_token };
    });
  }

  /** Sends the event to the endpoint again. */
  async retry(id: string, eventId: string): Promise<WebhookDelivery> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'POST',
        path: `/api/v1/webhooks/${segment(id)}/deliveries/${segment(eventId)}/retry`,
      }),
    );
  }
}

/** The event log: the polling alternative to webhooks, and replay. */
export class Events {
  constructor(private readonly transport: Transport) {}

  /** Oldest first, from `after` (an event id) on; iterating continues past each page's last event. */
  list(options: { type?: string; after?: string; pageSize?: number } = {}): PageList<PorticoEvent> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; has_more: boolean; next_after: string | null }>({
        method: 'GET',
        path: '/api/v1/events',
        query: { type: options.type, after: pageToken ?? options.after, page_size: options.pageSize },
      });
      return {
        data: raw.data.map((e) => camelKeys<PorticoEvent>(e)),
        nextPageToken: raw.has_more ? raw.next_after : null,
      };
    });
  }
}
