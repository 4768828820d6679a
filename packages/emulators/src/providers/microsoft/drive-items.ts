import type { FastifyReply } from 'fastify';
import { receiveBytes, receiveJson } from './body.js';
import { type GraphCall, metadata, permits, sendJson } from './call.js';
import { sendDelta } from './delta.js';
import { downloadUrl } from './download.js';
import {
  accessDenied,
  applySelect,
  childNamed,
  childrenOf,
  conflictBehavior,
  freeName,
  INVALID_NAME,
  itemBody,
  mimeTypeFor,
  nameAlreadyExists,
  newItemId,
  now,
  sendItem,
  touch,
} from './drive-tree.js';
import {
  invalidRequest,
  itemNotFound,
  methodNotAllowed,
  stampGraphHeaders,
  unknownSegment,
} from './errors.js';
import type { Drive, DriveItem } from './model.js';
import { newItem } from './seed.js';
import { sendDrive } from './sites.js';
import { createUploadSession } from './upload-sessions.js';
import { commitUpload, planUpload } from './uploads.js';

const DEFAULT_PAGE_SIZE = 200;
const MAX_PAGE_SIZE = 999;

/** The `$skiptoken` SharePoint hands out is opaque base64; this one carries the offset. */
function encodeSkipToken(offset: number): string {
  return Buffer.from(`Paged=TRUE&p_SortBehavior=0&p_ID=${offset}`).toString('base64url');
}

function decodeSkipToken(token: string): number | undefined {
  const match = /p_ID=(\d+)/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

function listChildren(call: GraphCall, drive: Drive, parent: DriveItem): FastifyReply {
  const topParam = call.query.$top;
  const top = topParam === undefined ? DEFAULT_PAGE_SIZE : Number(topParam);
  if (!Number.isInteger(top) || top < 1) {
    return invalidRequest(call.req, call.reply, `Invalid page size specified: '${topParam}'.`);
  }
  const pageSize = Math.min(top, MAX_PAGE_SIZE);
  let offset = 0;
  if (call.query.$skiptoken !== undefined) {
    const decoded = decodeSkipToken(call.query.$skiptoken);
    if (decoded === undefined) return invalidRequest(call.req, call.reply, 'Invalid skip token.');
    offset = decoded;
  }
  const children = parent.folder ? childrenOf(drive, parent.id) : [];
  const page = children.slice(offset, offset + pageSize);
  const body: Record<string, unknown> = {
    '@odata.context': metadata(call, `drives('${drive.id}')/items('${parent.id}')/children`),
  };
  if (offset + pageSize < children.length) {
    // Graph writes the `$` of OData options unescaped in its links.
    const select = call.query.$select ? `$select=${encodeURIComponent(call.query.$select)}&` : '';
    body['@odata.nextLink'] =
      `${call.base}${call.path}?${select}$top=${pageSize}&$skiptoken=${encodeSkipToken(offset + pageSize)}`;
  }
  body.value = page.map((item) => applySelect(call, itemBody(call, drive, item)));
  return sendJson(call, 200, body);
}

function removeTree(drive: Drive, item: DriveItem): void {
  for (const child of childrenOf(drive, item.id)) removeTree(drive, child);
  drive.items.delete(item.id);
}

function isDescendant(drive: Drive, candidate: DriveItem, ancestorId: string): boolean {
  let parentId: string | null = candidate.id;
  while (parentId) {
    if (parentId === ancestorId) return true;
    parentId = drive.items.get(parentId)?.parentId ?? null;
  }
  return false;
}

async function updateItem(call: GraphCall, drive: Drive, item: DriveItem): Promise<FastifyReply> {
  const parsed = await receiveJson(call.req);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) {
    return invalidRequest(
      call.req,
      call.reply,
      'Unable to read JSON request payload. Please ensure Content-Type header is set and payload is of valid JSON format.',
    );
  }
  if (item.parentId === null) return accessDenied(call);
  const patch = parsed.value as { name?: unknown; parentReference?: { id?: unknown } };
  let parentId = item.parentId;
  if (patch.parentReference && typeof patch.parentReference.id === 'string') {
    const target = drive.items.get(patch.parentReference.id);
    if (!target?.folder) return itemNotFound(call.req, call.reply);
    if (isDescendant(drive, target, item.id)) {
      return invalidRequest(call.req, call.reply, 'Cannot move an item into itself or one of its children.');
    }
    parentId = target.id;
  }
  let name = item.name;
  if (patch.name !== undefined) {
    if (typeof patch.name !== 'string' || patch.name.trim() === '' || INVALID_NAME.test(patch.name)) {
      return invalidRequest(call.req, call.reply, 'The provided name is not valid.');
    }
    name = patch.name;
  }
  const clash = childNamed(drive, parentId, name);
  if (clash && clash.id !== item.id) return nameAlreadyExists(call);
  item.name = name;
  item.parentId = parentId;
  touch(call, item, false);
  return sendItem(call, drive, item);
}

async function createChild(call: GraphCall, drive: Drive, parent: DriveItem): Promise<FastifyReply> {
  const parsed = await receiveJson(call.req);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) {
    return invalidRequest(
      call.req,
      call.reply,
      'Unable to read JSON request payload. Please ensure Content-Type header is set and payload is of valid JSON format.',
    );
  }
  if (!parent.folder) return invalidRequest(call.req, call.reply, 'The parent item is not a folder.');
  const input = parsed.value as Record<string, unknown>;
  const name = input.name;
  if (typeof name !== 'string' || name.trim() === '' || INVALID_NAME.test(name)) {
    return invalidRequest(call.req, call.reply, 'The provided name is not valid.');
  }
  const isFolder = input.folder !== undefined;
  if (!isFolder && input.file === undefined) {
    return invalidRequest(call.req, call.reply, 'A folder or file facet is required to create an item.');
  }
  // Creating a folder fails on a name clash unless the caller says otherwise.
  const behavior = conflictBehavior(input['@microsoft.graph.conflictBehavior'], 'fail');
  if (!behavior)
    return invalidRequest(call.req, call.reply, 'Invalid value for @microsoft.graph.conflictBehavior.');
  let finalName = name;
  const clash = childNamed(drive, parent.id, name);
  if (clash) {
    if (behavior === 'fail') return nameAlreadyExists(call);
    if (behavior === 'rename') finalName = freeName(drive, parent.id, name);
    else removeTree(drive, clash);
  }
  const item = newItem({
    id: newItemId(call),
    driveId: drive.id,
    parentId: parent.id,
    name: finalName,
    folder: isFolder,
    createdBy: call.tenant.user.id,
    mimeType: isFolder ? undefined : mimeTypeFor(finalName, undefined),
    at: now(call),
  });
  drive.items.set(item.id, item);
  return sendItem(call, drive, item, 201);
}

/**
 * `PUT …/content`: replaces an existing file (200) or creates it (201), creating missing folders
 * on the way like SharePoint does. The body streams in as chunks.
 */
async function upload(
  call: GraphCall,
  drive: Drive,
  base: DriveItem,
  path: string[] | undefined,
): Promise<FastifyReply> {
  const planned = planUpload(call, drive, base, path, call.query['@microsoft.graph.conflictBehavior']);
  if (!planned.ok) return planned.send();
  const received = await receiveBytes(call.req);
  return commitUpload(call, drive, planned.plan, received, call.req.headers['content-type']);
}

/** Reads a `…:/a/b:` path: segments up to (and including) the one that ends with a colon. */
function readColonPath(segments: string[], at: number): { path: string[]; next: number } {
  const path: string[] = [];
  let next = at;
  while (next < segments.length) {
    const segment = segments[next++]!;
    if (segment.endsWith(':')) {
      path.push(segment.slice(0, -1));
      break;
    }
    path.push(segment);
  }
  return { path: path.filter((p) => p !== ''), next };
}

function walk(drive: Drive, base: DriveItem, path: string[]): DriveItem | undefined {
  let current: DriveItem | undefined = base;
  for (const name of path) {
    if (!current?.folder) return undefined;
    current = childNamed(drive, current.id, name);
  }
  return current;
}

/**
 * Everything under a drive: the drive itself, `root`, `items/{id}`, path addressing
 * (`root:/a/b.txt:`, `items/{id}:/name:`), then `children` or `content`.
 */
export async function handleDrive(
  call: GraphCall,
  drive: Drive,
  segments: string[],
  at: number,
): Promise<FastifyReply> {
  const method = call.req.method;
  const access = method === 'GET' || method === 'HEAD' ? 'read' : 'write';
  if (!permits(call.token, access)) return accessDenied(call);
  const first = segments[at];
  if (first === undefined)
    return method === 'GET' ? sendDrive(call, drive) : methodNotAllowed(call.req, call.reply);

  let baseId: string;
  let path: string[] | undefined;
  let next: number;
  if (first === 'root' || first === 'root:') {
    baseId = drive.rootId;
    next = at + 1;
    if (first === 'root:') ({ path, next } = readColonPath(segments, next));
  } else if (first === 'items') {
    const id = segments[at + 1];
    if (id === undefined || id === '') return unknownSegment(call.req, call.reply, 'items');
    next = at + 2;
    if (id.endsWith(':')) {
      baseId = id.slice(0, -1);
      ({ path, next } = readColonPath(segments, next));
    } else {
      baseId = id;
    }
  } else {
    return unknownSegment(call.req, call.reply, first);
  }
  const rest = segments.slice(next);
  const action = rest[0];
  if (rest.length > 1) return unknownSegment(call.req, call.reply, rest[1]!);
  if (
    action !== undefined &&
    action !== 'children' &&
    action !== 'content' &&
    action !== 'createUploadSession' &&
    action !== 'delta'
  ) {
    return unknownSegment(call.req, call.reply, action);
  }

  const base = drive.items.get(baseId);
  if (!base) return itemNotFound(call.req, call.reply);
  if (action === 'content' && method === 'PUT') return upload(call, drive, base, path);
  if (action === 'createUploadSession') {
    return method === 'POST'
      ? createUploadSession(call, drive, base, path)
      : methodNotAllowed(call.req, call.reply);
  }
  const item = path === undefined ? base : walk(drive, base, path);
  if (!item) return itemNotFound(call.req, call.reply);
  if (action === 'delta') {
    if (method !== 'GET') return methodNotAllowed(call.req, call.reply);
    // Graph tracks changes from a drive's root (a folder's delta is OneDrive personal's alone).
    if (item.id !== drive.rootId)
      return invalidRequest(call.req, call.reply, 'Delta is only supported on the root.');
    return sendDelta(call, drive);
  }

  if (action === undefined) {
    if (method === 'GET') return sendItem(call, drive, item);
    if (method === 'PATCH') return updateItem(call, drive, item);
    if (method === 'DELETE') {
      if (item.parentId === null) return accessDenied(call);
      removeTree(drive, item);
      return stampGraphHeaders(call.req, call.reply).code(204).send();
    }
    return methodNotAllowed(call.req, call.reply);
  }
  if (action === 'children') {
    if (method === 'GET') return listChildren(call, drive, item);
    if (method === 'POST') return createChild(call, drive, item);
    return methodNotAllowed(call.req, call.reply);
  }
  if (method !== 'GET') return methodNotAllowed(call.req, call.reply);
  if (item.folder) return itemNotFound(call.req, call.reply, 'You cannot get content for a folder');
  const location = downloadUrl(call.base, call.state, call.ctx.clock(), {
    userId: call.tenant.user.id,
    driveId: drive.id,
    item,
  });
  return stampGraphHeaders(call.req, call.reply).code(302).header('location', location).send();
}
