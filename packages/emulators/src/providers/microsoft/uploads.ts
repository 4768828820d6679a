import type { FastifyReply } from 'fastify';
import type { ReceivedBytes } from './body.js';
import type { GraphCall } from './call.js';
import {
  accessDenied,
  type ConflictBehavior,
  childNamed,
  conflictBehavior,
  freeName,
  INVALID_NAME,
  mimeTypeFor,
  nameAlreadyExists,
  newItemId,
  now,
  sendItem,
  touch,
} from './drive-tree.js';
import { invalidRequest } from './errors.js';
import type { Drive, DriveItem } from './model.js';
import { newItem } from './seed.js';

/** Where an upload lands: an existing file to replace, or a new file under `parent` (after `missingFolders`). */
export interface UploadPlan {
  parent: DriveItem;
  target?: DriveItem;
  missingFolders: string[];
  fileName: string;
  /** Path addressing (`…:/name:/content`) rather than an item id (`items/{id}/content`). */
  byPath: boolean;
  behavior: ConflictBehavior;
}

export type PlanResult = { ok: true; plan: UploadPlan } | { ok: false; send: () => FastifyReply };

/** Resolves an upload's destination without touching the drive, refusing what SharePoint refuses. */
export function planUpload(
  call: GraphCall,
  drive: Drive,
  base: DriveItem,
  path: string[] | undefined,
  behaviorValue: unknown,
): PlanResult {
  const fail = (send: () => FastifyReply): PlanResult => ({ ok: false, send });
  const behavior = conflictBehavior(behaviorValue, 'replace');
  if (!behavior) {
    return fail(() =>
      invalidRequest(call.req, call.reply, 'Invalid value for @microsoft.graph.conflictBehavior.'),
    );
  }
  let parent = base;
  let target: DriveItem | undefined = path === undefined ? base : undefined;
  const missingFolders: string[] = [];
  let fileName = base.name;
  if (path !== undefined) {
    if (path.length === 0)
      return fail(() => invalidRequest(call.req, call.reply, 'A file name is required.'));
    if (path.some((part) => part.trim() === '' || INVALID_NAME.test(part))) {
      return fail(() => invalidRequest(call.req, call.reply, 'The provided name is not valid.'));
    }
    fileName = path[path.length - 1]!;
    for (const folderName of path.slice(0, -1)) {
      if (missingFolders.length > 0) {
        missingFolders.push(folderName);
        continue;
      }
      const next = childNamed(drive, parent.id, folderName);
      if (!next) missingFolders.push(folderName);
      else if (!next.folder) return fail(() => nameAlreadyExists(call));
      else parent = next;
    }
    if (missingFolders.length === 0) target = childNamed(drive, parent.id, fileName);
  }
  if (target?.folder)
    return fail(() => (target.parentId === null ? accessDenied(call) : nameAlreadyExists(call)));
  if (target && path !== undefined && behavior === 'fail') return fail(() => nameAlreadyExists(call));
  return {
    ok: true,
    plan: { parent, target, missingFolders, fileName, byPath: path !== undefined, behavior },
  };
}

/** Stores received bytes where the plan says: 200 with the replaced file, 201 with a new one. */
export function commitUpload(
  call: GraphCall,
  drive: Drive,
  plan: UploadPlan,
  received: ReceivedBytes,
  contentType: string | undefined,
): FastifyReply {
  const stamp = now(call);
  const { target } = plan;
  if (target && !(plan.byPath && plan.behavior === 'rename')) {
    target.chunks = received.chunks;
    target.size = received.size;
    target.quickXorHash = received.quickXorHash;
    target.mimeType = mimeTypeFor(target.name, contentType);
    touch(call, target, true);
    return sendItem(call, drive, target, 200);
  }
  let parent = plan.parent;
  for (const folderName of plan.missingFolders) {
    const folder = newItem({
      id: newItemId(call),
      driveId: drive.id,
      parentId: parent.id,
      name: folderName,
      folder: true,
      createdBy: call.tenant.user.id,
      at: stamp,
    });
    drive.items.set(folder.id, folder);
    parent = folder;
  }
  const name = target ? freeName(drive, parent.id, plan.fileName) : plan.fileName;
  const item = newItem({
    id: newItemId(call),
    driveId: drive.id,
    parentId: parent.id,
    name,
    folder: false,
    createdBy: call.tenant.user.id,
    mimeType: mimeTypeFor(name, contentType),
    at: stamp,
  });
  item.chunks = received.chunks;
  item.size = received.size;
  item.quickXorHash = received.quickXorHash;
  drive.items.set(item.id, item);
  return sendItem(call, drive, item, 201);
}
