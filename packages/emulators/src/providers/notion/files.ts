import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { BlockRequest } from './block-content.js';
import { NotionApiError, validationError } from './errors.js';
import type { BlockContent, Workspace } from './model.js';
import { isRecord } from './rich-text.js';
import { notionTime } from './time.js';

/** Notion keeps an unattached upload for an hour, and its file links live an hour too. */
export const UPLOAD_TTL_MS = 60 * 60 * 1000;
export const FILE_URL_TTL_MS = 60 * 60 * 1000;
/** Single-part uploads and each part of a multi-part upload: at most 20 MiB. */
export const MAX_PART_BYTES = 20 * 1024 * 1024;
/** Multi-part: every part but the last at least 5 MiB. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
export const MAX_PARTS = 1000;

/** Where the emulator serves file bytes: outside `/v1`, like Notion's S3 links, and without a bearer token. */
export const FILES_PATH = '/_files';

export interface FileUpload {
  id: string;
  mode: 'single_part' | 'multi_part';
  createdTime: number;
  lastEditedTime: number;
  createdBy: string;
  filename: string | null;
  contentType: string | null;
  /** Set once the bytes are in (single part sent, or multi-part completed). */
  bytes?: Buffer;
  parts: Map<number, Buffer>;
  numberOfParts?: number;
  /** Attached uploads never expire. */
  attached: boolean;
  /** The emulator's public base when the upload was created, for its links. */
  base: string;
}

interface FileStore {
  uploads: Map<string, FileUpload>;
  clock: () => number;
}

/** Uploads live beside the workspace they belong to, so a reset (new workspaces) drops them too. */
const stores = new WeakMap<Workspace, FileStore>();

/** Signs file links for this process's lifetime: links never outlive the emulator's memory anyway. */
const signingKey = randomBytes(32);

export function fileStore(ws: Workspace, clock: () => number): FileStore {
  let store = stores.get(ws);
  if (!store) {
    store = { uploads: new Map(), clock };
    stores.set(ws, store);
  }
  return store;
}

export function uploadStatus(upload: FileUpload, now: number): 'pending' | 'uploaded' | 'expired' {
  if (!upload.attached && now >= upload.createdTime + UPLOAD_TTL_MS) return 'expired';
  return upload.bytes ? 'uploaded' : 'pending';
}

export function renderFileUpload(upload: FileUpload, now: number): Record<string, unknown> {
  const status = uploadStatus(upload, now);
  const body: Record<string, unknown> = {
    object: 'file_upload',
    id: upload.id,
    created_time: notionTime(upload.createdTime),
    created_by: { id: upload.createdBy, type: 'bot' },
    last_edited_time: notionTime(upload.lastEditedTime),
    archived: false,
    in_trash: false,
    expiry_time: upload.attached ? null : new Date(upload.createdTime + UPLOAD_TTL_MS).toISOString(),
    status,
    filename: upload.filename,
    content_type: upload.contentType,
    content_length: upload.bytes ? upload.bytes.length : null,
  };
  if (status === 'pending') body.upload_url = `${upload.base}/v1/file_uploads/${upload.id}/send`;
  if (status === 'pending' && upload.mode === 'multi_part') {
    body.complete_url = `${upload.base}/v1/file_uploads/${upload.id}/complete`;
  }
  if (upload.numberOfParts !== undefined) {
    body.number_of_parts = { total: upload.numberOfParts, sent: upload.parts.size };
  }
  return body;
}

function signature(owner: string, id: string, expires: number): string {
  return createHmac('sha256', signingKey).update(`${owner}/${id}/${expires}`).digest('base64url');
}

/** A pre-signed, expiring link to an upload's bytes: the query string is the only credential. */
export function signedFileUrl(
  ws: Workspace,
  upload: FileUpload,
  now: number,
): { url: string; expiry: number } {
  const expiry = now + FILE_URL_TTL_MS;
  const expires = Math.floor(expiry / 1000);
  const name = encodeURIComponent(upload.filename ?? 'file');
  const sig = signature(ws.owner.id, upload.id, expires);
  return {
    url: `${upload.base}${FILES_PATH}/${ws.owner.id}/${upload.id}/${name}?expires=${expires}&signature=${sig}`,
    expiry,
  };
}

export function verifyFileSignature(
  owner: string,
  id: string,
  expires: string | undefined,
  given: string | undefined,
): number | undefined {
  if (!expires || !/^\d+$/.test(expires) || !given) return undefined;
  const expected = Buffer.from(signature(owner, id, Number(expires)));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  return Number(expires);
}

/**
 * A media block as the API returns it: content stored as `file_upload` reads back as a Notion-hosted
 * `file` with a fresh signed link, as Notion does once an upload is attached.
 */
export function renderMediaContent(ws: Workspace, content: BlockContent): BlockContent {
  if (content.type !== 'file_upload') return content;
  const store = stores.get(ws);
  const id = (content.file_upload as { id: string }).id;
  const upload = store?.uploads.get(id);
  if (!store || !upload) return content;
  const { url, expiry } = signedFileUrl(ws, upload, store.clock());
  const { file_upload: _omit, ...rest } = content;
  return { ...rest, type: 'file', file: { url, expiry_time: new Date(expiry).toISOString() } };
}

/** The upload a request attaches, checked: it must exist in this workspace and hold its bytes. */
export function attachableUpload(ws: Workspace, id: string, now: number): FileUpload {
  const upload = stores.get(ws)?.uploads.get(id);
  if (!upload) {
    throw new NotionApiError(
      404,
      'object_not_found',
      `Could not find file_upload with ID: ${id}. Create it with POST /v1/file_uploads in this workspace first.`,
    );
  }
  const status = uploadStatus(upload, now);
  if (status !== 'uploaded') {
    throw validationError(
      `File upload ${id} has status \`${status}\`; only uploads with status \`uploaded\` can be attached. Send its contents first (POST /v1/file_uploads/${id}/send${upload.mode === 'multi_part' ? ', then /complete' : ''}).`,
    );
  }
  return upload;
}

/** A `files` property entry naming an upload: checked and attached like a media block's. */
export function claimPropertyUpload(ws: Workspace, id: string): FileUpload {
  const now = stores.get(ws)?.clock() ?? Date.now();
  const upload = attachableUpload(ws, id, now);
  upload.attached = true;
  upload.lastEditedTime = now;
  return upload;
}

function uploadIdsIn(requests: BlockRequest[], into: string[]): string[] {
  for (const request of requests) {
    const ref = request.content.file_upload;
    if (request.content.type === 'file_upload' && isRecord(ref)) into.push(String(ref.id));
    uploadIdsIn(request.children, into);
  }
  return into;
}

/** Checks every upload a batch of blocks attaches, then marks them attached (before any block is created). */
export function claimUploads(ws: Workspace, contents: BlockRequest[] | BlockContent, now: number): void {
  const ids = Array.isArray(contents)
    ? uploadIdsIn(contents, [])
    : contents.type === 'file_upload' && isRecord(contents.file_upload)
      ? [String(contents.file_upload.id)]
      : [];
  const uploads = ids.map((id) => attachableUpload(ws, id, now));
  for (const upload of uploads) {
    upload.attached = true;
    upload.lastEditedTime = now;
  }
}
