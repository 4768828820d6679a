import type { Database, Queryable } from '../store/db.js';
import { insertEvents } from '../store/events.js';
import { newId } from '../store/ids.js';
import { type NewEvent, OPT_IN_EVENT_TYPES } from './types.js';

/** NOTIFY channel: events were committed; delivery workers in every process look for due work. */
export const EVENTS_CHANNEL = 'portico_events';

/**
 * Records events in `tx`, the transaction of the state change they report, so no change commits
 * without its events and no event without its change. Endpoints' deliveries are queued in the same
 * statement; the workers are woken once the transaction commits.
 */
export async function recordEvents(db: Database, tx: Queryable, events: NewEvent[]): Promise<void> {
  if (!events.length) return;
  await insertEvents(
    tx,
    events.map((e) => ({ id: newId('evt'), ...e })),
    OPT_IN_EVENT_TYPES,
  );
  await db.notify(EVENTS_CHANNEL, '', tx);
}

export function recordEvent(db: Database, tx: Queryable, event: NewEvent): Promise<void> {
  return recordEvents(db, tx, [event]);
}
