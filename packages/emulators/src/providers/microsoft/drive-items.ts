import type { FastifyReply } from 'fastify';
import { type ReceivedBytes, receiveBytes, receiveJson } from './body.js';
import { type GraphCall, metadata, permits, sendJson } from './call.js';
import { downloadUrl } from './download.js';
import {
  invalidRequest,
  itemNotFound,
  methodNotAllowed,
  sendGraphError,
  stampGraphHeaders,
  unknownSegment,
} from './errors.js';
import { driveItemId } from './ids.js';
import { type Drive, type DriveItem, graphDate } from './model.js';
import { newItem } from './seed.js';
import { itemJson } from './serialize.js';
import { sendDrive, siteOfDrive } from './sites.js';
import { createUploadSession } from './upload-sessions.js';

const DEFAULT_PAGE_SIZE = 200;
const MAX_PAGE_SIZE = 999;
/** Characters SharePoint refuses in file and folder names. */
const INVALID_NAME = /["*:<>?/\\|]/;

const EXTENSION_TYPES: Record<string, string> = {
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

type ConflictBehavior = 'fail' | 'replace' | 'rename';

function accessDenied(call: GraphCall): FastifyReply {
  return sendGraphError(call.req, call.reply, 403, 'accessDenied', 'Access denied');
}

const nameAlreadyExists = (call: GraphCall) =>
  sendGraphError(call.req, call.reply, 409, 'nameAlreadyExists', 'The specified item name already exists.');

function childrenOf(drive: Drive, parentId: string): DriveItem[] {
  const out: DriveItem[] = [];
  for (const item of drive.items.values()) if (item.parentId === parentId) out.push(item);
  return out.sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }));
}

/** SharePoint names are case-insensitive. */
function childNamed(drive: Drive, parentId: string, name: string): DriveItem | undefined {
  const wanted = name.toLowerCase();
  for (const item of drive.items.values()) {
    if (item.parentId === parentId && item.name.toLowerCase() === wanted) return item;
  }
  return undefined;
}

/** "Report.docx" → "Report 1.docx", "Report 2.docx", … until the name is free. */
function freeName(drive: Drive, parentId: string, name: string): string {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let n = 1; ; n++) {
    const candidate = `${stem} ${n}${ext}`;
    if (!childNamed(drive, parentId, candidate)) return candidate;
  }
}

function conflictBehavior(value: unknown, fallback: ConflictBehavior): ConflictBehavior | undefined {
  if (value === undefined || value === null || value === '') return fallback;
  return value === 'fail' || value === 'replace' || value === 'rename' ? value : undefined;
}

function now(call: GraphCall): string {
  return graphDate(call.ctx.clock());
}

function newItemId(call: GraphCall): string {
  return driveItemId(`new:${call.ctx.randomId(16)}`);
}

function itemBody(call: GraphCall, drive: Drive, item: DriveItem): Record<string, unknown> {
  const url = item.folder
    ? undefined
    : downloadUrl(call.base, call.state, call.ctx.clock(), {
        userId: call.tenant.user.id,
        driveId: drive.id,
        item,
      });
  return itemJson(call.tenant, siteOfDrive(call, drive), drive, item, url);
}

/** `$select=id,name` keeps only those properties (annotations such as the download URL only when named). */
function applySelect(call: GraphCall, body: Record<string, unknown>): Record<string, unknown> {
  const select = call.query.$select;
  if (!select) return body;
  const wanted = new Set(select.split(',').map((s) => s.trim().toLowerCase()));
  if (wanted.has('content.downloadurl')) wanted.add('@microsoft.graph.downloadurl');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key.startsWith('@odata.') || wanted.has(key.toLowerCase())) out[key] = value;
  }
  return out;
}

function sendItem(call: GraphCall, drive: Drive, item: DriveItem, status = 200): FastifyReply {
  return sendJson(call, status, {
    '@odata.context': metadata(call, `drives('${drive.id}')/items/$entity`),
    ...applySelect(call, itemBody(call, drive, item)),
  });
}

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

function touch(call: GraphCall, item: DriveItem, content: boolean): void {
  item.lastModifiedDateTime = now(call);
  item.lastModifiedBy = call.tenant.user.id;
  item.version++;
  if (content) item.contentVersion++;
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

function mimeTypeFor(name: string, contentType: string | undefined): string {
  const declared = contentType?.split(';')[0]?.trim().toLowerCase();
  if (declared && declared !== 'application/octet-stream') return declared;
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return EXTENSION_TYPES[ext] ?? 'application/octet-stream';
}

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
    action !== 'createUploadSession'
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
