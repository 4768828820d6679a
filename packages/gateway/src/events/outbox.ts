import { createHash } from 'node:crypto';
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
export async function recordEvents(
  db: Database,
  tx: Queryable,
  events: Array<NewEvent & { id?: string }>,
): Promise<void> {
  if (!events.length) return;
  await insertEvents(
    tx,
    events.map((e) => ({ ...e, id: e.id ?? newId('evt') })),
    OPT_IN_EVENT_TYPES,
  );
  await db.notify(EVENTS_CHANNEL, '', tx);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * An event id derived from what the event reports (a trigger's id, the provider's item and its
 * version): the same change seen twice (a redelivery, a replica taking over a poll, a resync) has
 * the same id, is recorded once, and a receiver can recognise it. Same shape as a random id.
 */
export function derivedEventId(parts: readonly string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let out = '';
  for (let i = 0; out.length < 22; i++) out += BASE62[digest[i]! % 62];
  return `evt_${out}`;
}

export function recordEvent(db: Database, tx: Queryable, event: NewEvent): Promise<void> {
  return recordEvents(db, tx, [event]);
}
