import type { Change, Observation } from './definition.js';

/** What a poll's observations mean against what the subscription had seen. */
export interface Reading {
  /** The changes to report, in the order the provider listed them. */
  changes: Array<{ change: Change; id: string; version: string; item: Record<string, unknown> }>;
  /** Items to remember in their new version. */
  save: Array<{ id: string; version: string }>;
  /** Items to forget (deleted ones, once reported). */
  forget: string[];
}

/** The version a deleted item is remembered with, so its deletion is reported once. */
const GONE = '~deleted';

/**
 * Compares what the provider listed with what the subscription had seen of the same items:
 * an item seen in the same version is nothing new (a provider listing it again, an overlap of
 * cursors, a resync); an unseen one was created (or, when the provider dates its creation before
 * the subscription started, updated); another version is an update; the deletion of an item seen
 * before is reported once.
 * When the listing is `complete`, items seen before and missing now were deleted.
 */
export function readObservations(
  observations: Observation[],
  known: Map<string, string>,
  options: { since: number; complete?: boolean },
): Reading {
  const reading: Reading = { changes: [], save: [], forget: [] };
  const listed = new Set<string>();
  for (const o of observations) {
    if (listed.has(o.id)) continue;
    listed.add(o.id);
    const before = known.get(o.id);
    if (o.deleted) {
      // An item never seen (created and deleted between two polls, or before the subscription
      // without a listing of it) was never there for the subscriber.
      if (before === undefined || before === GONE) continue;
      reading.changes.push({ change: 'deleted', id: o.id, version: GONE, item: o.item });
      reading.save.push({ id: o.id, version: GONE });
      continue;
    }
    if (before === o.version) continue;
    const change: Change =
      before !== undefined && before !== GONE
        ? 'updated'
        : o.createdAt !== undefined && o.createdAt < options.since
          ? 'updated'
          : 'created';
    reading.changes.push({ change, id: o.id, version: o.version, item: o.item });
    reading.save.push({ id: o.id, version: o.version });
  }
  if (options.complete) {
    for (const [id, version] of known) {
      if (listed.has(id)) continue;
      if (version === GONE) {
        // A deletion reported before; the provider has forgotten the item too.
        reading.forget.push(id);
        continue;
      }
      reading.changes.push({ change: 'deleted', id, version: GONE, item: { id } });
      reading.save.push({ id, version: GONE });
    }
  }
  return reading;
}
