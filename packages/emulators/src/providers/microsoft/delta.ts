import type { FastifyReply } from 'fastify';
import { type GraphCall, metadata, sendJson } from './call.js';
import { applySelect, itemBody } from './drive-tree.js';
import { invalidRequest, sendGraphError } from './errors.js';
import type { Drive, DriveItem, MicrosoftState } from './model.js';

/**
 * A drive's change log for `root/delta`: the state each item was last seen in and the latest change
 * of each item, numbered. Whenever the log is read it numbers the items that differ since (created,
 * renamed, moved, new content) and those that are gone (deleted); the routes also bring it up to date
 * after every write (logDriveWrites). A delta token carries the number after which changes are listed; one the
 * drive never gave, or from before its log was reset, answers 410 resyncRequired as Graph does.
 */
interface DeltaLog {
  /** Tells this log's tokens from those of a log before a reset. */
  epoch: string;
  seq: number;
  seen: Map<string, string>;
  latest: Map<string, { seq: number; deleted: boolean }>;
}

const logs = new WeakMap<Drive, DeltaLog>();

function stateOf(item: DriveItem): string {
  return `${item.version}|${item.contentVersion}|${item.parentId}|${item.name}`;
}

function catchUp(call: GraphCall, drive: Drive): DeltaLog {
  let log = logs.get(drive);
  if (!log) {
    log = { epoch: call.ctx.randomId(8), seq: 0, seen: new Map(), latest: new Map() };
    for (const item of drive.items.values()) log.seen.set(item.id, stateOf(item));
    logs.set(drive, log);
  }
  return logChanges(drive, log);
}

function logChanges(drive: Drive, log: DeltaLog): DeltaLog {
  for (const item of drive.items.values()) {
    const state = stateOf(item);
    if (log.seen.get(item.id) === state) continue;
    log.seen.set(item.id, state);
    log.latest.set(item.id, { seq: ++log.seq, deleted: false });
  }
  for (const id of log.seen.keys()) {
    if (drive.items.has(id)) continue;
    log.seen.delete(id);
    log.latest.set(id, { seq: ++log.seq, deleted: true });
  }
  return log;
}

/**
 * Brings the logs of every followed drive up to date; the routes call it after each write, so an
 * item created and deleted between two delta queries is listed (as deleted) like Graph does.
 */
export function logDriveWrites(state: MicrosoftState): void {
  for (const tenant of state.tenants.values()) {
    for (const drive of tenant.drives.values()) {
      const log = logs.get(drive);
      if (log) logChanges(drive, log);
    }
  }
}

function encodeToken(log: DeltaLog, after: number): string {
  return Buffer.from(JSON.stringify({ e: log.epoch, s: after })).toString('base64url');
}

function decodeToken(log: DeltaLog, token: string): number | undefined {
  try {
    const { e, s } = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      e?: unknown;
      s?: unknown;
    };
    return e === log.epoch && typeof s === 'number' && s >= 0 && s <= log.seq ? s : undefined;
  } catch {
    return undefined;
  }
}

const PAGE_SIZE = 200;

/**
 * `GET …/root/delta`: without a token every item (the first sync), with `token=latest` none but a
 * delta link for changes from now on, with a token the items changed since (deleted ones carry a
 * `deleted` facet). Pages end with `@odata.nextLink`; the last has `@odata.deltaLink`.
 */
export function sendDelta(call: GraphCall, drive: Drive): FastifyReply {
  const log = catchUp(call, drive);
  const token = call.query.token;
  const skip = call.query.$skiptoken === undefined ? 0 : Number(call.query.$skiptoken);
  if (!Number.isInteger(skip) || skip < 0) return invalidRequest(call.req, call.reply, 'Invalid skip token.');
  let entries: Array<{ item?: DriveItem; id: string; deleted?: boolean }>;
  if (token === undefined) {
    entries = [...drive.items.values()].map((item) => ({ item, id: item.id }));
  } else if (token === 'latest') {
    entries = [];
  } else {
    const after = decodeToken(log, token);
    if (after === undefined) {
      return sendGraphError(
        call.req,
        call.reply,
        410,
        'resyncRequired',
        "Resync required. Replace any local items with the server's version (including deletes) if you're sure that the service was up to date with your local changes when you last sync'd. Upload any local changes that the server doesn't know about.",
      );
    }
    entries = [...log.latest.entries()]
      .filter(([, c]) => c.seq > after)
      .sort((a, b) => a[1].seq - b[1].seq)
      .map(([id, c]) => (c.deleted ? { id, deleted: true } : { id, item: drive.items.get(id)! }));
  }
  const page = entries.slice(skip, skip + PAGE_SIZE);
  const link = `${call.base}${call.path}?token=${token === undefined || token === 'latest' ? encodeToken(log, log.seq) : token}`;
  const body: Record<string, unknown> = { '@odata.context': metadata(call, 'Collection(driveItem)') };
  if (skip + PAGE_SIZE < entries.length) body['@odata.nextLink'] = `${link}&$skiptoken=${skip + PAGE_SIZE}`;
  else body['@odata.deltaLink'] = `${call.base}${call.path}?token=${encodeToken(log, log.seq)}`;
  body.value = page.map((e) =>
    e.item
      ? applySelect(call, itemBody(call, drive, e.item))
      : { id: e.id, deleted: { state: 'deleted' }, parentReference: { driveId: drive.id } },
  );
  return sendJson(call, 200, body);
}
