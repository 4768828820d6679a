import type { Logger } from 'pino';
import type { AccountTokens } from '../accounts/account-tokens.js';
import type { EndUserDeps } from '../accounts/as-end-user.js';
import { ProviderClient } from '../accounts/provider-client.js';
import { Problem } from '../errors/problem.js';
import { recordEvent } from '../events/outbox.js';
import { findAccountByIdentifier } from '../store/accounts.js';
import { findConnectionByName } from '../store/connections.js';
import type { Database, Queryable } from '../store/db.js';
import { newId } from '../store/ids.js';
import {
  countTriggersByState,
  deleteTrigger,
  findTrigger,
  findTriggerByKey,
  insertTrigger,
  listTriggers,
  lockTrigger,
  saveItems,
  type TriggerRow,
  type TriggerState,
  updateTrigger,
} from '../store/triggers.js';
import { TRIGGER_TYPES, triggerType, triggerTypeView, validateConfig } from './catalog.js';
import type { TriggerChannels } from './channels.js';
import type { Cursor } from './definition.js';
import {
  type CreateTriggerBody,
  type ListTriggersQuery,
  type TriggerView,
  triggerView,
  type UpdateTriggerBody,
} from './schemas.js';

/** The interval a subscription polls at when it does not say. */
export const DEFAULT_INTERVAL_SECONDS = 60;

/** A subscription's cursor as stored: when it started and where the type's own cursor stands. */
export interface StoredCursor {
  since: number;
  at: Cursor;
}

export interface TriggerServiceDeps {
  db: Database;
  logger: Logger;
  accountTokens: AccountTokens;
  /** The provider calls' transport and rate governor (the tools' and the proxy's own). */
  endUser: Omit<EndUserDeps, 'accountTokens'>;
  /** The least interval a subscription may ask for (PORTICO_TRIGGER_MIN_INTERVAL_SECONDS). */
  minIntervalSeconds: number;
  /** Push channels: opened with the subscription, stopped with it. */
  channels?: TriggerChannels;
  /** Tells this process's poller a subscription's next poll moved (it sleeps until the next due). */
  wake?: () => void;
}

/**
 * Trigger subscriptions: what to watch for which end user, checked against the type's schema and
 * the provider (a subscription starts from the provider's current cursor, so every change after
 * its creation is reported). Polling them is the TriggerPoller's.
 */
export class TriggerService {
  constructor(private readonly deps: TriggerServiceDeps) {}

  view(row: TriggerRow): TriggerView {
    return triggerView(row);
  }

  types() {
    return { data: TRIGGER_TYPES.map(triggerTypeView) };
  }

  type(name: string) {
    return triggerTypeView(triggerType(name, '/name'));
  }

  notFound(id: string): Problem {
    return new Problem(
      'trigger_not_found',
      `No trigger ${id}; list them with GET /api/v1/triggers or create one with POST /api/v1/triggers.`,
    );
  }

  async get(environmentId: string, id: string): Promise<TriggerRow> {
    const row = await findTrigger(this.deps.db, id);
    if (!row || row.environment_id !== environmentId) throw this.notFound(id);
    return row;
  }

  async create(environmentId: string, body: CreateTriggerBody): Promise<TriggerRow> {
    const { db } = this.deps;
    const type = triggerType(body.trigger_type);
    const config = validateConfig(type, body.config ?? {});
    const interval =
      body.interval_seconds ?? Math.max(DEFAULT_INTERVAL_SECONDS, this.deps.minIntervalSeconds);
    this.checkInterval(interval);
    const connection = await findConnectionByName(db, environmentId, body.connection_name);
    if (!connection) {
      throw new Problem(
        'connection_not_found',
        `No connection is named "${body.connection_name}"; list them with GET /api/v1/connections.`,
      );
    }
    if (connection.provider !== type.provider) {
      throw new Problem(
        'invalid_input',
        `Connection "${connection.name}" is for ${connection.provider}, but ${type.name} watches ${type.provider}; name a ${type.provider} connection, or pick a ${connection.provider} trigger type from GET /api/v1/trigger-types.`,
        { errors: [{ path: '/trigger_type', message: `needs a ${type.provider} connection` }] },
      );
    }
    const account = await findAccountByIdentifier(db, environmentId, connection.name, body.identifier);
    if (!account) {
      throw new Problem(
        'account_not_found',
        `Identifier "${body.identifier}" has no account on "${connection.name}"; authorize it first with POST /api/v1/connected-accounts/authorization-link.`,
      );
    }
    const configKey = canonicalJson(config);
    const existing = await findTriggerByKey(db, account.id, type.name, configKey);
    if (existing) throw this.exists(existing);
    // The starting point at the provider; an account that is not ACTIVE answers with its link.
    const since = Date.now();
    const credential = await this.deps.accountTokens.forAccount(account.id);
    const client = new ProviderClient(credential, {
      ...this.deps.endUser,
      accountTokens: this.deps.accountTokens,
    });
    const baseline = await type.baseline({ client, config, since });
    const id = newId('trg');
    const cursor: StoredCursor = { since, at: baseline.cursor };
    const inserted = await db.transaction(async (tx) => {
      const ok = await insertTrigger(tx, {
        id,
        environment_id: environmentId,
        connection_id: connection.id,
        account_id: account.id,
        identifier: body.identifier,
        trigger_type: type.name,
        config,
        config_key: configKey,
        interval_seconds: interval,
        cursor: cursor as unknown as Record<string, unknown>,
      });
      if (ok) {
        await saveItems(
          tx,
          id,
          baseline.observations.filter((o) => !o.deleted).map((o) => ({ id: o.id, version: o.version })),
        );
      }
      return ok;
    });
    if (!inserted) {
      const raced = await findTriggerByKey(db, account.id, type.name, configKey);
      if (raced) throw this.exists(raced);
    }
    this.deps.logger.info(
      { trigger_id: id, trigger_type: type.name, account_id: account.id },
      'trigger created',
    );
    if (inserted) this.deps.wake?.();
    // Push from the start (the first poll may be an interval away); a channel that cannot be
    // opened is tried again at that poll, and the subscription's health says so meanwhile.
    if (inserted && this.deps.channels?.pushes(type)) {
      const row = await this.get(environmentId, id);
      const note = await this.deps.channels.maintain(row, type, { client, config, since }, baseline.cursor);
      if (note?.state === 'lapsed') {
        await db.transaction(async (tx) => {
          const locked = await lockTrigger(tx, id);
          if (locked?.state !== 'active') return;
          const next = await updateTrigger(tx, id, { state: 'degraded' });
          if (next) {
            await recordStateChange(
              db,
              tx,
              next,
              'active',
              `the push channel could not be opened (${note.error}); polling every ${interval} s until it is`,
            );
          }
        });
      }
    }
    return this.get(environmentId, id);
  }

  async list(
    environmentId: string,
    query: ListTriggersQuery & { connection_names: readonly string[] | null },
  ): Promise<{ data: TriggerView[]; next_page_token: string | null }> {
    const limit = query.page_size ?? 50;
    const after = query.page_token ? decodeToken(query.page_token) : undefined;
    const rows = await listTriggers(this.deps.db, environmentId, {
      connectionNames: query.connection_name ? [query.connection_name] : query.connection_names,
      ...(query.identifier ? { identifier: query.identifier } : {}),
      ...(query.trigger_type ? { triggerType: query.trigger_type } : {}),
      ...(query.state ? { state: query.state } : {}),
      ...(after ? { after } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map(triggerView),
      next_page_token: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null,
    };
  }

  /** Subscriptions per health state (the dashboard's summary). */
  async summary(environmentId: string, connectionNames: readonly string[] | null) {
    const counts: Record<TriggerState, number> = { active: 0, degraded: 0, failing: 0, paused: 0 };
    for (const c of await countTriggersByState(this.deps.db, environmentId, connectionNames))
      counts[c.state] = c.count;
    return { states: counts };
  }

  /** Pauses or resumes (each recorded as trigger.state_changed), or changes the interval. */
  async update(environmentId: string, id: string, body: UpdateTriggerBody): Promise<TriggerRow> {
    if (body.interval_seconds !== undefined) this.checkInterval(body.interval_seconds);
    const { db } = this.deps;
    await this.get(environmentId, id);
    await db.transaction(async (tx) => {
      const row = await lockTrigger(tx, id);
      if (!row) throw this.notFound(id);
      let next: TriggerRow | undefined = row;
      if (body.interval_seconds !== undefined) {
        next = await updateTrigger(tx, id, { intervalSeconds: body.interval_seconds });
      }
      if (body.paused === true && !(row.state === 'paused' && row.pause_reason === 'requested')) {
        next = await updateTrigger(tx, id, {
          state: 'paused',
          pauseReason: 'requested',
          nextPollInSeconds: null,
        });
      } else if (body.paused === false && row.state === 'paused') {
        // Resumed: looked at now. One the account had paused stays with the account (its next poll
        // finds out whether the account is back).
        next = await updateTrigger(tx, id, {
          state: 'active',
          pauseReason: null,
          consecutiveFailures: 0,
          nextPollInSeconds: 0,
        });
      }
      if (next && next.state !== row.state) {
        await recordStateChange(
          db,
          tx,
          next,
          row.state,
          body.paused ? 'paused on request' : 'resumed on request',
        );
      }
    });
    this.deps.wake?.();
    return this.get(environmentId, id);
  }

  /** Deletes the subscription, its push channel stopped at the provider first (channels.stop, DELETE). */
  async remove(environmentId: string, id: string): Promise<void> {
    const row = await this.get(environmentId, id);
    const type = (() => {
      try {
        return triggerType(row.trigger_type);
      } catch {
        return undefined;
      }
    })();
    if (type?.push && this.deps.channels) {
      try {
        const credential = await this.deps.accountTokens.forAccount(row.account_id);
        const client = new ProviderClient(credential, {
          ...this.deps.endUser,
          accountTokens: this.deps.accountTokens,
        });
        const since = ((row.cursor as { since?: number } | null)?.since ??
          row.created_at.getTime()) as number;
        await this.deps.channels.close(row, type, { client, config: row.config, since });
      } catch (err) {
        // An account that cannot be used any more: the channel expires at the provider on its own.
        this.deps.logger.info({ trigger_id: id, err }, 'trigger push channel left to expire');
      }
    }
    await deleteTrigger(this.deps.db, id);
  }

  private checkInterval(seconds: number): void {
    if (seconds >= this.deps.minIntervalSeconds) return;
    throw new Problem(
      'invalid_input',
      `interval_seconds must be at least ${this.deps.minIntervalSeconds} (PORTICO_TRIGGER_MIN_INTERVAL_SECONDS); ${seconds} is less.`,
      {
        errors: [{ path: '/interval_seconds', message: `must be at least ${this.deps.minIntervalSeconds}` }],
      },
    );
  }

  private exists(row: TriggerRow): Problem {
    return new Problem(
      'trigger_exists',
      `${row.identifier} on "${row.connection_name}" has a ${row.trigger_type} trigger with this config already (${row.id}); use it, or delete it first.`,
      { extensions: { trigger_id: row.id } },
    );
  }
}

/** Records trigger.state_changed for `row` (in its new state) in `tx`. */
export async function recordStateChange(
  db: Database,
  tx: Queryable,
  row: TriggerRow,
  previous: TriggerState,
  reason: string,
): Promise<void> {
  await recordEvent(db, tx, {
    environmentId: row.environment_id,
    type: 'trigger.state_changed',
    subject: row.id,
    data: { ...triggerView(row), previous_state: previous, reason },
  });
}

/** JSON with its keys sorted: equal configs give equal text (the uniqueness of a subscription). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function decodeToken(token: string): string {
  const value = Buffer.from(token, 'base64url').toString('utf8');
  if (!/^trg_[0-9A-Za-z]+$/.test(value)) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the first page.',
      {
        errors: [{ path: '/page_token', message: 'is not a valid page token' }],
      },
    );
  }
  return value;
}
