import type { DriveFile } from '../shared.js';

export interface MultipartPart {
  headers: Record<string, string>;
  body: Buffer;
}

/** The boundary of a `multipart/related; boundary=…` content type, or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\//i.test(contentType)) return null;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? ((m[1] ?? m[2]) as string) : null;
}

/**
 * Splits a multipart body without copying: each part's body is a view into the upload buffer,
 * which matters when the media part is most of a gigabyte.
 */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] | null {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return null;
  for (;;) {
    at += delimiter.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) break; // closing "--"
    if (body[at] === 0x0d && body[at + 1] === 0x0a) at += 2;
    else if (body[at] === 0x0a) at += 1;
    const next = body.indexOf(delimiter, at);
    if (next < 0) return null;
    let end = next;
    if (body[end - 1] === 0x0a) end--;
    if (body[end - 1] === 0x0d) end--;
    const part = body.subarray(at, end);
    let split = part.indexOf('\r\n\r\n');
    let sepLength = 4;
    if (split < 0) {
      split = part.indexOf('\n\n');
      sepLength = 2;
    }
    const headers: Record<string, string> = {};
    const headerText = split < 0 ? '' : part.subarray(0, split).toString('latin1');
    for (const line of headerText.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    parts.push({ headers, body: split < 0 ? part : part.subarray(split + sepLength) });
    at = next;
  }
  return parts;
}

/** A resumable upload in progress: metadata from the first request, bytes from the PUTs. */
export interface UploadSession {
  id: string;
  userId: string;
  /** Set when the session updates an existing file. */
  fileId?: string;
  metadata: Record<string, unknown>;
  mimeType?: string;
  fields?: string;
  /** The session was opened with supportsAllDrives: its last chunk may name shared-drive folders. */
  allDrives: boolean;
  total?: number;
  chunks: Buffer[];
  received: number;
}

/** Sessions live beside the Drive they write to, so a reset (new Drive maps) drops them too. */
const sessionsByDrive = new WeakMap<Map<string, DriveFile>, Map<string, UploadSession>>();

export function uploadSessions(drive: Map<string, DriveFile>): Map<string, UploadSession> {
  let sessions = sessionsByDrive.get(drive);
  if (!sessions) {
    sessions = new Map();
    sessionsByDrive.set(drive, sessions);
  }
  return sessions;
}

/** `bytes 0-99/1000`, `bytes 0-99/*` or `bytes *\/1000`. */
export function parseContentRange(
  header: string | undefined,
): { start?: number; end?: number; total?: number } | null | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(header.trim());
  if (!m) return null;
  return {
    start: m[1] === undefined ? undefined : Number(m[1]),
    end: m[2] === undefined ? undefined : Number(m[2]),
    total: m[3] === '*' ? undefined : Number(m[3]),
  };
}
