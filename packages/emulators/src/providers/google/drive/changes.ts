import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GOOGLE_API_SCOPES } from '../scopes.js';
import { type DriveFile, sendGoogleError } from '../shared.js';
import type { DriveChangeLog, GoogleUserData } from '../user-data.js';
import { type DriveRoutes, invalidParam, type Query } from './api.js';
import { applyFields, type FieldsError, parseFields } from './fields.js';
import { fileResource, sharedDriveOf, version } from './resource.js';

/**
 * Drive's change log (changes.getStartPageToken, changes.list): every change to a file of the
 * user's My Drive, numbered. The emulator keeps the state each file was last seen in and, after
 * every write and whenever the log is read, numbers the files that differ since (created, edited
 * through Drive, Sheets or Docs, renamed, moved, trashed) and those that are gone (removed), so
 * every way a file changes is logged without each write having to say so. A page token is the number of the first change to
 * list; a file changed twice is listed once, at its latest change, as Drive does.
 */
export function newChangeLog(drive: Map<string, DriveFile>): DriveChangeLog {
  const seen = new Map<string, string>();
  for (const f of drive.values()) seen.set(f.id, stateOf(f));
  return { seq: 1, seen, latest: new Map() };
}

function stateOf(f: DriveFile): string {
  return JSON.stringify([
    version(f),
    f.modifiedTime,
    f.name,
    f.parents,
    f.trashed,
    f.starred,
    f.description ?? null,
  ]);
}

/** Logs what changed since the log was last brought up to date; returns the log. */
export function catchUp(data: GoogleUserData, now: number): DriveChangeLog {
  const log = data.driveChanges;
  for (const f of data.drive.values()) {
    const state = stateOf(f);
    if (log.seen.get(f.id) === state) continue;
    log.seen.set(f.id, state);
    log.latest.set(f.id, { seq: ++log.seq, removed: false, time: f.modifiedTime });
  }
  for (const id of log.seen.keys()) {
    if (data.drive.has(id)) continue;
    log.seen.delete(id);
    log.latest.set(id, { seq: ++log.seq, removed: true, time: new Date(now).toISOString() });
  }
  return log;
}

const DEFAULT_FIELDS =
  'kind,nextPageToken,newStartPageToken,changes(kind,changeType,time,removed,fileId,file(kind,id,name,mimeType))';

export function changeRoutes(app: FastifyInstance, routes: DriveRoutes): void {
  const { ctx, dataOf, auth } = routes;
  app.get('/drive/v3/changes/startPageToken', async (req, reply) => {
    const who = auth(req, reply, GOOGLE_API_SCOPES.drive.read, 'GetStartPageToken');
    if (!who) return reply;
    const log = catchUp(dataOf(who.user.id), ctx.clock());
    return reply.send({ kind: 'drive#startPageToken', startPageToken: String(log.seq + 1) });
  });
  app.get('/drive/v3/changes', (req, reply) => listChanges(routes, req, reply));
}

async function listChanges({ ctx, dataOf, auth }: DriveRoutes, req: FastifyRequest, reply: FastifyReply) {
  const who = auth(req, reply, GOOGLE_API_SCOPES.drive.read, 'List');
  if (!who) return reply;
  const q = req.query as Query;
  if (q.pageToken === undefined) {
    return sendGoogleError(reply, 400, 'Required parameter: pageToken', {
      reason: 'required',
      location: 'pageToken',
    });
  }
  const data = dataOf(who.user.id);
  const log = catchUp(data, ctx.clock());
  const from = Number(q.pageToken);
  if (!/^\d+$/.test(q.pageToken) || from < 1 || from > log.seq + 1) return invalidParam(reply, 'pageToken');
  const size = q.pageSize === undefined ? 100 : Number(q.pageSize);
  if (!Number.isInteger(size) || size < 1 || size > 1000) return invalidParam(reply, 'pageSize');
  const includeRemoved = q.includeRemoved !== 'false';
  const allDrives = q.includeItemsFromAllDrives === 'true' && q.supportsAllDrives === 'true';
  let tree: ReturnType<typeof parseFields>;
  try {
    tree = parseFields(q.fields ?? DEFAULT_FIELDS);
  } catch (e) {
    return sendGoogleError(reply, 400, (e as FieldsError).message, {
      reason: 'invalidParameter',
      location: 'fields',
    });
  }
  const due = [...log.latest.entries()]
    .filter(([, c]) => c.seq >= from && (includeRemoved || !c.removed))
    .sort((a, b) => a[1].seq - b[1].seq);
  const changes: Record<string, unknown>[] = [];
  let next: number | undefined;
  for (const [fileId, change] of due) {
    const file = data.drive.get(fileId);
    if (file && sharedDriveOf(file) !== undefined && !allDrives) continue;
    if (changes.length === size) {
      next = change.seq;
      break;
    }
    changes.push({
      kind: 'drive#change',
      changeType: 'file',
      time: change.time,
      removed: change.removed,
      fileId,
      ...(file && !change.removed ? { file: fileResource(file, who.user) } : {}),
    });
  }
  const body: Record<string, unknown> = { kind: 'drive#changeList', changes };
  if (next !== undefined) body.nextPageToken = String(next);
  else body.newStartPageToken = String(log.seq + 1);
  return reply.send(applyFields(body, tree));
}
