import { createHash, randomBytes } from 'node:crypto';
import { bumpVersion } from './drive/resource.js';
import { driveRootIdFor } from './drive/seed.js';
import type { DriveFile } from './shared.js';

/**
 * Native Sheets and Docs files live in the owner's Drive: same id, name = title, native mime
 * type. Drive is the source of truth for existence and title, so a file deleted or renamed in
 * Drive is gone or renamed in Sheets/Docs too.
 */

/** A 44-character id shaped like Google's document ids (`1BxiMVs0XRA5nFMd…`). */
export function documentIdFrom(seed: string): string {
  return `1${createHash('sha256').update(seed).digest('base64url').slice(0, 43)}`;
}

export function randomDocumentId(): string {
  return `1${randomBytes(33).toString('base64url').slice(0, 43)}`;
}

export function fileNativeDocument(
  drive: Map<string, DriveFile>,
  file: { id: string; name: string; mimeType: string; ownerId: string; now: number },
): DriveFile {
  const at = new Date(file.now).toISOString();
  const entry: DriveFile = {
    id: file.id,
    name: file.name,
    mimeType: file.mimeType,
    parents: [driveRootIdFor(file.ownerId)],
    createdTime: at,
    modifiedTime: at,
    trashed: false,
    starred: false,
    ownerId: file.ownerId,
  };
  drive.set(file.id, entry);
  return entry;
}

/** An edit through Sheets or Docs is a new version of the Drive file. */
export function touchDriveFile(drive: Map<string, DriveFile>, id: string, now: number): void {
  const f = drive.get(id);
  if (f) bumpVersion(f, now);
}

/** Drive exports and full-text search read a native file's text from `extra.text`; keep it current. */
export function setDriveText(drive: Map<string, DriveFile>, id: string, text: string): void {
  const f = drive.get(id);
  if (f) f.extra = { ...f.extra, text };
}

/** RFC 4180 CSV, as Drive exports a spreadsheet's first tab. */
export function toCsv(rows: string[][]): string {
  const cell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  return rows.map((r) => r.map(cell).join(',')).join('\r\n');
}
