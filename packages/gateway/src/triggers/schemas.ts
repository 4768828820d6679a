import { type Static, Type } from '@sinclair/typebox';
import type { TriggerRow } from '../store/triggers.js';

const name = { minLength: 1, maxLength: 200 } as const;

export const CreateTriggerBody = Type.Object(
  {
    connection_name: Type.String({ ...name, description: 'the connection of the account to watch' }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'the end user whose account it is',
    }),
    trigger_type: Type.String({
      ...name,
      description: 'what to watch: a name from GET /api/v1/trigger-types, e.g. calendar_events',
    }),
    config: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'the type’s settings (its config_schema)' }),
    ),
    interval_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86_400,
        description:
          'how often to poll the provider (default 60; at least PORTICO_TRIGGER_MIN_INTERVAL_SECONDS)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateTriggerBody = Static<typeof CreateTriggerBody>;

export const UpdateTriggerBody = Type.Object(
  {
    paused: Type.Optional(Type.Boolean({ description: 'true pauses the trigger; false resumes it' })),
    interval_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateTriggerBody = Static<typeof UpdateTriggerBody>;

const STATES = ['active', 'degraded', 'failing', 'paused'] as const;

export const ListTriggersQuery = Type.Object(
  {
    connection_name: Type.Optional(Type.String(name)),
    identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    trigger_type: Type.Optional(Type.String(name)),
    state: Type.Optional(Type.Union(STATES.map((s) => Type.Literal(s)))),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListTriggersQuery = Static<typeof ListTriggersQuery>;

export interface TriggerView {
  id: string;
  trigger_type: string;
  provider: string;
  connection_name: string;
  identifier: string;
  connected_account_id: string;
  config: Record<string, unknown>;
  interval_seconds: number;
  state: TriggerRow['state'];
  pause_reason: TriggerRow['pause_reason'];
  consecutive_failures: number;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  last_event_at: string | null;
  /**
   * The push channel (Google watch channel, Graph subscription) of a type that has one: active, or
   * lapsed (polling only) with why; null when the type polls only or push is off.
   */
  push: { state: 'active' | 'lapsed'; error: string | null } | null;
  next_poll_at: string | null;
  created_at: string;
  updated_at: string;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A subscription as the API shows it: its health, never its cursor (the provider's, opaque). */
export function triggerView(row: TriggerRow): TriggerView {
  const next = row.next_poll_at;
  return {
    id: row.id,
    trigger_type: row.trigger_type,
    provider: row.provider,
    connection_name: row.connection_name,
    identifier: row.identifier,
    connected_account_id: row.account_id,
    config: row.config,
    interval_seconds: row.interval_seconds,
    state: row.state,
    pause_reason: row.pause_reason,
    consecutive_failures: row.consecutive_failures,
    last_success_at: iso(row.last_success_at),
    last_error: row.last_error,
    last_error_at: iso(row.last_error_at),
    last_event_at: iso(row.last_event_at),
    push: row.channel_state ? { state: row.channel_state, error: row.channel_error } : null,
    // A paused trigger waits for no time ('infinity', which the drivers read as an invalid date).
    next_poll_at: next instanceof Date && Number.isFinite(next.getTime()) ? next.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
