import { type Static, Type } from '@sinclair/typebox';
import { ALL_EVENTS, EVENT_TYPES } from '../events/types.js';
import type { WebhookEndpointRow } from '../store/webhooks.js';

const eventName = Type.Union([...EVENT_TYPES.map((t) => Type.Literal(t)), Type.Literal(ALL_EVENTS)], {
  description: `an event type, or "${ALL_EVENTS}" for every type except tool.execution.failed (which is opt-in)`,
});
const url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'the receiver: an absolute https URL on a public address',
});
const events = Type.Array(eventName, { minItems: 1, maxItems: EVENT_TYPES.length + 1, uniqueItems: true });
const description = Type.String({ maxLength: 500, pattern: '^[^\\u0000-\\u0008\\u000b-\\u001f]*$' });

export const CreateWebhookBody = Type.Object(
  {
    url,
    events,
    description: Type.Optional(description),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    description: Type.Optional(Type.Union([description, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const ListWebhooksQuery = Type.Object(
  {
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListWebhooksQuery = Static<typeof ListWebhooksQuery>;

export const ListDeliveriesQuery = Type.Object(
  {
    event_id: Type.Optional(Type.String({ maxLength: 64, pattern: '^evt_[0-9A-Za-z]+$' })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export interface WebhookView {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  /** Until when the previous secret still signs (after a rotation). */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** An endpoint as the API shows it: never its secrets. */
export function webhookView(row: WebhookEndpointRow, now = Date.now()): WebhookView {
  const previousUntil = row.previous_secret_expires_at;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at:
      row.previous_secret && previousUntil && previousUntil.getTime() > now
        ? previousUntil.toISOString()
        : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
