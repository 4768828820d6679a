import type { FastifyReply } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import { type DriveFile, GOOGLE_MIME, sendGoogleError } from '../shared.js';
import { descendantsOf, invalidParam, lookup, notFound, type Query, supportsAllDrives } from './api.js';
import { bumpVersion, isFolder, isNative, sharedDriveOf } from './resource.js';
import { driveIdFrom, driveRootIdFor } from './seed.js';

// Changing files: metadata as create, update and copy write it, trash, and content.

function newFileId(ctx: ProviderContext): string {
  return driveIdFrom(`new:${ctx.randomId(16)}`);
}

export interface WriteContext {
  ctx: ProviderContext;
  reply: FastifyReply;
  drive: Map<string, DriveFile>;
  user: EmulatedUser;
  /** The request supports shared drives (supportsAllDrives): their files and folders can be named. */
  allDrives: boolean;
}

/** A write request's context; null when its supportsAllDrives was refused (400 already answered). */
export function writeContext(
  ctx: ProviderContext,
  reply: FastifyReply,
  drive: Map<string, DriveFile>,
  user: EmulatedUser,
  q: Query,
): WriteContext | null {
  const allDrives = supportsAllDrives(reply, q);
  return allDrives === null ? null : { ctx, reply, drive, user, allDrives };
}

/** Applies writable metadata; returns false when it already answered an error. */
export function applyMetadata(
  w: WriteContext,
  f: DriveFile,
  meta: Record<string, unknown>,
  creating: boolean,
): boolean {
  const { reply } = w;
  if (meta.name !== undefined) {
    if (typeof meta.name !== 'string') return !invalidParam(reply, 'name');
    f.name = meta.name;
  }
  if (meta.mimeType !== undefined) {
    if (typeof meta.mimeType !== 'string' || !meta.mimeType.includes('/'))
      return !invalidParam(reply, 'mimeType');
    f.mimeType = meta.mimeType;
  }
  if (meta.description !== undefined) {
    if (meta.description === null) delete f.description;
    else f.description = String(meta.description);
  }
  if (meta.starred !== undefined) f.starred = meta.starred === true;
  if (meta.trashed !== undefined) setTrashed(w.drive, f, meta.trashed === true, w.ctx.clock());
  if (typeof meta.originalFilename === 'string')
    f.extra = { ...f.extra, originalFilename: meta.originalFilename };
  for (const key of ['properties', 'appProperties'] as const) {
    const given = meta[key];
    if (given === undefined) continue;
    if (!given || typeof given !== 'object') return !invalidParam(reply, key);
    const merged: Record<string, string> = {
      ...((f.extra?.[key] as Record<string, string> | undefined) ?? {}),
    };
    for (const [k, v] of Object.entries(given)) {
      if (v === null) delete merged[k];
      else merged[k] = String(v);
    }
    f.extra = { ...f.extra, [key]: merged };
  }
  if (meta.parents !== undefined) {
    if (!creating) {
      sendGoogleError(
        reply,
        403,
        'The parents field is not directly writable in update requests. Use the addParents and removeParents parameters instead.',
        { reason: 'fieldNotWritable' },
      );
      return false;
    }
    if (!Array.isArray(meta.parents) || meta.parents.some((p) => typeof p !== 'string')) {
      return !invalidParam(reply, 'parents');
    }
    if (meta.parents.length > 1) {
      sendGoogleError(reply, 403, 'Increasing the number of parents is not allowed.', {
        reason: 'cannotAddParent',
      });
      return false;
    }
    const parents: string[] = [];
    for (const p of meta.parents as string[]) {
      const parent = lookup(w.drive, w.user.id, p, w.allDrives);
      if (!parent) return !notFound(reply, p);
      if (!isFolder(parent)) return !invalidParam(reply, 'parents', 'The specified parent is not a folder.');
      parents.push(parent.id);
    }
    if (parents.length > 0) f.parents = parents;
  }
  if (creating) placeInDrive(w.drive, f);
  return true;
}

/** A file is in the drive of its parent (a shared drive or My Drive), and so is everything inside it. */
function placeInDrive(drive: Map<string, DriveFile>, f: DriveFile): void {
  const parent = drive.get(f.parents[0] ?? '');
  const driveId = parent ? sharedDriveOf(parent) : undefined;
  for (const file of [f, ...descendantsOf(drive, f.id)]) {
    if (sharedDriveOf(file) === driveId) continue;
    const { driveId: _, ...extra } = file.extra ?? {};
    file.extra = driveId === undefined ? extra : { ...extra, driveId };
  }
}

/** Trashing a folder trashes what is inside it; restoring it brings back what was not trashed on its own. */
function setTrashed(drive: Map<string, DriveFile>, f: DriveFile, trashed: boolean, now: number): void {
  if (f.trashed === trashed) return;
  f.trashed = trashed;
  f.extra = {
    ...f.extra,
    explicitlyTrashed: trashed,
    trashedTime: trashed ? new Date(now).toISOString() : undefined,
  };
  for (const child of descendantsOf(drive, f.id)) {
    if (trashed && !child.trashed) {
      child.trashed = true;
      child.extra = { ...child.extra, explicitlyTrashed: false };
    } else if (!trashed && child.extra?.explicitlyTrashed === false) {
      child.trashed = false;
    }
  }
}

/** Sets a file's bytes; a native type keeps the text (for export and search) instead of bytes. */
export function setContent(f: DriveFile, content: Buffer, now: number): void {
  if (isNative(f)) {
    delete f.content;
    if (f.mimeType !== GOOGLE_MIME.folder) f.extra = { ...f.extra, text: content.toString('utf8') };
  } else {
    f.content = content;
  }
  bumpVersion(f, now);
}

export function blankFile(w: WriteContext): DriveFile {
  const now = new Date(w.ctx.clock()).toISOString();
  return {
    id: newFileId(w.ctx),
    name: 'Untitled',
    mimeType: 'application/octet-stream',
    parents: [driveRootIdFor(w.user.id)],
    createdTime: now,
    modifiedTime: now,
    trashed: false,
    starred: false,
    ownerId: w.user.id,
  };
}

/** PATCH semantics shared by the metadata and upload endpoints; false when it already answered. */
export function updateFile(w: WriteContext, f: DriveFile, meta: Record<string, unknown>, q: Query): boolean {
  const before = JSON.stringify([f.name, f.description, f.parents]);
  if (!applyMetadata(w, f, meta, false)) return false;
  const add = (q.addParents ?? '').split(',').filter(Boolean);
  const remove = (q.removeParents ?? '').split(',').filter(Boolean);
  if (add.length > 0 || remove.length > 0) {
    const next = f.parents.filter(
      (p) => !remove.map((r) => lookup(w.drive, w.user.id, r, w.allDrives)?.id ?? r).includes(p),
    );
    for (const id of add) {
      const parent = lookup(w.drive, w.user.id, id, w.allDrives);
      if (!parent) {
        notFound(w.reply, id);
        return false;
      }
      if (!isFolder(parent)) {
        invalidParam(w.reply, 'addParents', 'The specified parent is not a folder.');
        return false;
      }
      if (parent.id === f.id || descendantsOf(w.drive, f.id).includes(parent)) {
        invalidParam(
          w.reply,
          'addParents',
          'A folder cannot be moved into itself or one of its descendants.',
        );
        return false;
      }
      if (!next.includes(parent.id)) next.push(parent.id);
    }
    if (next.length > 1) {
      sendGoogleError(w.reply, 403, 'Increasing the number of parents is not allowed.', {
        reason: 'cannotAddParent',
      });
      return false;
    }
    f.parents = next;
    placeInDrive(w.drive, f);
  }
  if (JSON.stringify([f.name, f.description, f.parents]) !== before) bumpVersion(f, w.ctx.clock());
  return true;
}
