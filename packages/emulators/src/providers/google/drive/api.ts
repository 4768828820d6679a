import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import type { authorizeGoogle } from '../scopes.js';
import { type DriveFile, sendGoogleError } from '../shared.js';
import type { GoogleDataOf } from '../user-data.js';
import { applyFields, type FieldsError, type FieldTree, parseFields } from './fields.js';
import { FILE_FIELDS, fileResource, sharedDriveOf } from './resource.js';
import { driveRootIdFor } from './seed.js';

// What the Drive routes share: their context, Drive's error answers, `fields`, and finding files.

export const SERVICE = 'drive.googleapis.com';
const DEFAULT_FILE_FIELDS = 'kind,id,name,mimeType';
const TEXTUAL = /^(text\/|application\/(json|xml|csv|javascript))/;
/** Search reads this much of a file's text, as Drive indexes only the start of large files. */
const INDEXED_BYTES = 1024 * 1024;

export type Query = Record<string, string | undefined>;

export function notFound(reply: FastifyReply, id: string) {
  return sendGoogleError(reply, 404, `File not found: ${id}.`, { reason: 'notFound', location: 'fileId' });
}

export function invalidParam(reply: FastifyReply, location: string, message = 'Invalid Value') {
  return sendGoogleError(reply, 400, message, { reason: 'invalid', location });
}

/** Parses `fields` and checks the File fields it names; null when it already answered 400. */
export function fieldsFor(reply: FastifyReply, text: string, list: boolean): FieldTree | '*' | null {
  let tree: FieldTree | '*';
  try {
    tree = parseFields(text);
  } catch (e) {
    sendGoogleError(reply, 400, (e as FieldsError).message, {
      reason: 'invalidParameter',
      location: 'fields',
    });
    return null;
  }
  if (tree === '*') return tree;
  const fileTrees: Array<FieldTree | true> = [];
  if (list) {
    for (const [k, sub] of tree) {
      if (!['kind', 'nextPageToken', 'incompleteSearch', 'files', '*'].includes(k)) {
        sendGoogleError(reply, 400, `Invalid field selection ${k}`, {
          reason: 'invalidParameter',
          location: 'fields',
        });
        return null;
      }
      if (k === 'files') fileTrees.push(sub);
    }
  } else {
    fileTrees.push(tree);
  }
  for (const sub of fileTrees) {
    if (sub === true) continue;
    for (const k of sub.keys()) {
      if (k !== '*' && !FILE_FIELDS.has(k)) {
        sendGoogleError(reply, 400, `Invalid field selection ${k}`, {
          reason: 'invalidParameter',
          location: 'fields',
        });
        return null;
      }
    }
  }
  return tree;
}

export function textOf(f: DriveFile): string {
  if (typeof f.extra?.text === 'string') return f.extra.text;
  if (f.content && TEXTUAL.test(f.mimeType)) return f.content.subarray(0, INDEXED_BYTES).toString('utf8');
  return '';
}

/**
 * Whether a request declares it supports shared drives (supportsAllDrives, or the deprecated
 * supportsTeamDrives), Drive's default being false; null when it already answered 400.
 */
export function supportsAllDrives(reply: FastifyReply, q: Query): boolean | null {
  return booleanParam(reply, q, 'supportsAllDrives', 'supportsTeamDrives');
}

/** A boolean query parameter under its name or its deprecated one; null when it already answered 400. */
export function booleanParam(
  reply: FastifyReply,
  q: Query,
  name: string,
  deprecated: string,
): boolean | null {
  let on = false;
  for (const key of [name, deprecated]) {
    const value = q[key];
    if (value === undefined) continue;
    if (!/^(true|false)$/i.test(value)) {
      invalidParam(reply, key);
      return null;
    }
    on ||= value.toLowerCase() === 'true';
  }
  return on;
}

/**
 * Drive's resource id for `root`, and the file behind an id (root alias included). A file in a
 * shared drive exists only for a request that supports shared drives: Drive answers 404 otherwise.
 */
export function lookup(
  drive: Map<string, DriveFile>,
  userId: string,
  id: string,
  allDrives: boolean,
): DriveFile | undefined {
  const f = drive.get(id === 'root' ? driveRootIdFor(userId) : id);
  return f && (allDrives || sharedDriveOf(f) === undefined) ? f : undefined;
}

export function isRoot(f: DriveFile): boolean {
  return f.extra?.isRoot === true;
}

export function descendantsOf(drive: Map<string, DriveFile>, id: string): DriveFile[] {
  const out: DriveFile[] = [];
  const queue = [id];
  while (queue.length > 0) {
    const parent = queue.shift() as string;
    for (const f of drive.values()) {
      if (f.parents.includes(parent) && !out.includes(f)) {
        out.push(f);
        queue.push(f.id);
      }
    }
  }
  return out;
}

export function sendFile(reply: FastifyReply, f: DriveFile, user: EmulatedUser, fields: string | undefined) {
  const tree = fieldsFor(reply, fields ?? DEFAULT_FILE_FIELDS, false);
  if (!tree) return reply;
  return reply.send(applyFields(fileResource(f, user), tree));
}

/** What every group of metadata routes needs: the emulator, the user's data and the scope check. */
export interface DriveRoutes {
  ctx: ProviderContext;
  dataOf: GoogleDataOf;
  auth(
    req: FastifyRequest,
    reply: FastifyReply,
    anyOf: readonly string[],
    method: string,
  ): ReturnType<typeof authorizeGoogle>;
}
