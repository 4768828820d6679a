import { type Static, Type } from '@sinclair/typebox';
import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import type { Database } from '../store/db.js';
import { type EventRow, findEvent, listEvents, pruneEvents } from '../store/events.js';
import { EVENTS_CHANNEL } from './outbox.js';
import { EVENT_TYPES, type EventType, type EventView } from './types.js';

export const ListEventsQuery = Type.Object(
  {
    type: Type.Optional(Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)))),
    after: Type.Optional(
      Type.String({ maxLength: 64, pattern: '^evt_[0-9A-Za-z]+$', description: 'an event id (evt_…)' }),
    ),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    order: Type.Optional(
      Type.Union([Type.Literal('oldest_first'), Type.Literal('newest_first')], {
        description: 'oldest_first (default, for consumers that poll) or newest_first (for people)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

export function eventView(row: EventRow): EventView {
  return {
    id: row.id,
    type: row.type as EventType,
    created_at: row.created_at.toISOString(),
    data: row.data,
  };
}

/** The recorded events: listing (a polling alternative to webhooks, and replay) and retention. */
export class EventService {
  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly retentionDays: number,
  ) {}

  async list(
    environmentId: string,
    query: ListEventsQuery,
  ): Promise<{ data: EventView[]; has_more: boolean; next_after: string | null }> {
    const limit = query.page_size ?? 50;
    let afterSeq: string | undefined;
    if (query.after) {
      const after = await findEvent(this.db, query.after);
      if (!after || after.environment_id !== environmentId) {
        throw new Problem(
          'invalid_input',
          `after names no event (${query.after}); pass the id of an event this API listed (events are kept ${this.retentionDays} days), or omit it to start from the oldest.`,
          { errors: [{ path: '/after', message: 'is not a known event id' }] },
        );
      }
      afterSeq = after.seq;
    }
    const rows = await listEvents(this.db, environmentId, {
      ...(query.type ? { types: [query.type] } : {}),
      ...(afterSeq ? { afterSeq } : {}),
      newestFirst: query.order === 'newest_first',
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map(eventView),
      has_more: rows.length > limit,
      next_after: page.at(-1)?.id ?? query.after ?? null,
    };
  }

  /** Calls `handler` after any process commits events (it reads what changed itself). */
  onRecorded(handler: () => void): Promise<void> {
    return this.db.listen(EVENTS_CHANNEL, handler);
  }

  /** Removes events past the retention period (PORTICO_EVENT_RETENTION_DAYS); safe on every replica. */
  async prune(): Promise<number> {
    let total = 0;
    for (let removed = -1; removed !== 0; total += removed) {
      removed = await pruneEvents(this.db, this.retentionDays);
    }
    if (total) this.logger.info({ events: total, days: this.retentionDays }, 'old events removed');
    return total;
  }
}
