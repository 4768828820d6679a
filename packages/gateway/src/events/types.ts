/**
 * The event types Portico records: dotted, past tense. A payload's shape is versioned by its type:
 * a change that would break receivers gets a new type rather than a new shape under the old one.
 */
export const EVENT_TYPES = [
  'connected_account.created',
  'connected_account.authorized',
  'connected_account.authorization_failed',
  'connected_account.expired',
  'connected_account.disconnected',
  'connection.created',
  'connection.updated',
  'connection.deleted',
  'tool.execution.failed',
  'webhook.disabled',
  'approval.requested',
  'approval.approved',
  'approval.denied',
  'approval.expired',
  'trigger.fired',
  'trigger.state_changed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Types an endpoint receives only when it lists them by name: "*" leaves them out. A failed tool
 * call is routine for an agent, and most applications do not want one request per failure.
 */
export const OPT_IN_EVENT_TYPES: readonly EventType[] = ['tool.execution.failed'];

/** "*" in an endpoint's events: every type except the opt-in ones. */
export const ALL_EVENTS = '*';

/** An event as the API lists it and webhooks deliver it. */
export interface EventView {
  id: string;
  type: EventType;
  created_at: string;
  data: Record<string, unknown>;
}

/** A state change to record: `subject` is whose events must reach receivers in order. */
export interface NewEvent {
  environmentId: string;
  type: EventType;
  subject: string | null;
  data: object;
}
