import type { FastifyReply } from 'fastify';
import { type GraphCall, metadata, sendJson } from './call.js';
import { downloadUrl } from './download.js';
import { sendGraphError } from './errors.js';
import { driveItemId } from './ids.js';
import { type Drive, type DriveItem, graphDate } from './model.js';
import { itemJson } from './serialize.js';
import { siteOfDrive } from './sites.js';

/** What the drive-item handlers and uploads share: names, lookups, stamps and the item's answer. */

/** Characters SharePoint refuses in file and folder names. */
export const INVALID_NAME = /["*:<>?/\\|]/;

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

export type ConflictBehavior = 'fail' | 'replace' | 'rename';

export function accessDenied(call: GraphCall): FastifyReply {
  return sendGraphError(call.req, call.reply, 403, 'accessDenied', 'Access denied');
}

export const nameAlreadyExists = (call: GraphCall) =>
  sendGraphError(call.req, call.reply, 409, 'nameAlreadyExists', 'The specified item name already exists.');

export function childrenOf(drive: Drive, parentId: string): DriveItem[] {
  const out: DriveItem[] = [];
  for (const item of drive.items.values()) if (item.parentId === parentId) out.push(item);
  return out.sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }));
}

/** SharePoint names are case-insensitive. */
export function childNamed(drive: Drive, parentId: string, name: string): DriveItem | undefined {
  const wanted = name.toLowerCase();
  for (const item of drive.items.values()) {
    if (item.parentId === parentId && item.name.toLowerCase() === wanted) return item;
  }
  return undefined;
}

/** "Report.docx" → "Report 1.docx", "Report 2.docx", … until the name is free. */
export function freeName(drive: Drive, parentId: string, name: string): string {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let n = 1; ; n++) {
    const candidate = `${stem} ${n}${ext}`;
    if (!childNamed(drive, parentId, candidate)) return candidate;
  }
}

export function conflictBehavior(value: unknown, fallback: ConflictBehavior): ConflictBehavior | undefined {
  if (value === undefined || value === null || value === '') return fallback;
  return value === 'fail' || value === 'replace' || value === 'rename' ? value : undefined;
}

export function now(call: GraphCall): string {
  return graphDate(call.ctx.clock());
}

export function newItemId(call: GraphCall): string {
  return driveItemId(`new:${call.ctx.randomId(16)}`);
}

export function itemBody(call: GraphCall, drive: Drive, item: DriveItem): Record<string, unknown> {
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
export function applySelect(call: GraphCall, body: Record<string, unknown>): Record<string, unknown> {
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

export function sendItem(call: GraphCall, drive: Drive, item: DriveItem, status = 200): FastifyReply {
  return sendJson(call, status, {
    '@odata.context': metadata(call, `drives('${drive.id}')/items/$entity`),
    ...applySelect(call, itemBody(call, drive, item)),
  });
}

export function touch(call: GraphCall, item: DriveItem, content: boolean): void {
  item.lastModifiedDateTime = now(call);
  item.lastModifiedBy = call.tenant.user.id;
  item.version++;
  if (content) item.contentVersion++;
}

export function mimeTypeFor(name: string, contentType: string | undefined): string {
  const declared = contentType?.split(';')[0]?.trim().toLowerCase();
  if (declared && declared !== 'application/octet-stream') return declared;
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return EXTENSION_TYPES[ext] ?? 'application/octet-stream';
}
