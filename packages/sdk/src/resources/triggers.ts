import { camelKeys, snakeKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import { segment } from './connections.js';

type Raw = Record<string, unknown>;

export type TriggerState = 'active' | 'degraded' | 'failing' | 'paused';

/** A trigger subscription and its health. `config` keeps the type's own (snake_case) keys. */
export interface Trigger {
  id: string;
  triggerType: string;
  provider: string;
  connectionName: string;
  identifier: string;
  connectedAccountId: string;
  config: Record<string, unknown>;
  intervalSeconds: number;
  state: TriggerState;
  /** Why a paused trigger is paused: on request, or because its account is not ACTIVE. */
  pauseReason: 'requested' | 'account_not_active' | null;
  consecutiveFailures: number;
  lastSuccessAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  lastEventAt: string | null;
  /** Null while paused. */
  nextPollAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What can be watched: a trigger type, its changes and the JSON Schema of its config. */
export interface TriggerType {
  name: string;
  provider: string;
  description: string;
  changes: string[];
  mechanism: string;
  configSchema: Record<string, unknown>;
}

export interface CreateTriggerInput {
  connectionName: string;
  identifier: string;
  triggerType: string;
  /** The type's settings, with the type's own keys, e.g. `{ calendar_id: 'primary' }`. */
  config?: Record<string, unknown>;
  intervalSeconds?: number;
}

export interface ListTriggersOptions {
  connectionName?: string;
  identifier?: string;
  triggerType?: string;
  state?: TriggerState;
  pageSize?: number;
}

/**
 * Trigger subscriptions: changes at a provider (calendar events, files, CRM records, pages…)
 * delivered as `trigger.fired` events, with each trigger's health in view.
 */
export class Triggers {
  constructor(private readonly transport: Transport) {}

  async types(): Promise<TriggerType[]> {
    const raw = await this.transport.json<{ data: Raw[] }>({ method: 'GET', path: '/api/v1/trigger-types' });
    return raw.data.map((t) => camelKeys<TriggerType>(t));
  }

  async type(name: string): Promise<TriggerType> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/trigger-types/${segment(name)}` }),
    );
  }

  /** Subscribes from the provider's current state: every change after it is reported. */
  async create(input: CreateTriggerInput): Promise<Trigger> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'POST', path: '/api/v1/triggers', json: snakeKeys(input) }),
    );
  }

  list(options: ListTriggersOptions = {}): PageList<Trigger> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/triggers',
        query: {
          connection_name: options.connectionName,
          identifier: options.identifier,
          trigger_type: options.triggerType,
          state: options.state,
          page_size: options.pageSize,
          page_token: pageToken,
        },
      });
      return { data: raw.data.map((t) => camelKeys<Trigger>(t)), nextPageToken: raw.next_page_token };
    });
  }

  async get(id: string): Promise<Trigger> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/triggers/${segment(id)}` }),
    );
  }

  /** How many triggers are active, degraded, failing and paused. */
  async summary(): Promise<{ states: Record<TriggerState, number> }> {
    return this.transport.json({ method: 'GET', path: '/api/v1/triggers/summary' });
  }

  async update(id: string, changes: { paused?: boolean; intervalSeconds?: number }): Promise<Trigger> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'PATCH',
        path: `/api/v1/triggers/${segment(id)}`,
        json: snakeKeys(changes),
      }),
    );
  }

  pause(id: string): Promise<Trigger> {
    return this.update(id, { paused: true });
  }

  resume(id: string): Promise<Trigger> {
    return this.update(id, { paused: false });
  }

  async delete(id: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: `/api/v1/triggers/${segment(id)}` });
  }
}
