import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Portal } from './store.js';
import { isoTime } from './store.js';

/** HubSpot's file access levels (the `access` upload option). */
export const FILE_ACCESS = [
  'PUBLIC_INDEXABLE',
  'PUBLIC_NOT_INDEXABLE',
  'HIDDEN_INDEXABLE',
  'HIDDEN_NOT_INDEXABLE',
  'HIDDEN_PRIVATE',
  'PRIVATE',
  'HIDDEN_SENSITIVE',
  'SENSITIVE',
] as const;
export type FileAccess = (typeof FILE_ACCESS)[number];

/** Where file bytes are served: outside the API paths, like HubSpot's `hubfs` CDN links. */
export const HUBFS_PATH = '/hubfs';
export const DEFAULT_SIGNED_URL_SECONDS = 3600;

export interface HubSpotFile {
  id: string;
  /** Without extension, as HubSpot returns `name`. */
  name: string;
  extension: string;
  folderId: string;
  /** Folder path plus file name, e.g. `/reports/q1.pdf`. */
  path: string;
  access: FileAccess;
  bytes: Buffer;
  md5: string;
  contentType: string;
  createdAt: number;
  updatedAt: number;
  archived: boolean;
  archivedAt?: number;
}

interface FileStore {
  files: Map<string, HubSpotFile>;
  /** Folder path → id; folders are created by uploading into a path. */
  folders: Map<string, string>;
  nextId: number;
}

/** Files live beside the portal they belong to, so a reset (new portals) drops them too. */
const stores = new WeakMap<Portal, FileStore>();
const signingKey = randomBytes(32);

export function filesOf(portal: Portal): FileStore {
  let store = stores.get(portal);
  if (!store) {
    // File and folder ids are numeric, in their own range, apart from CRM record ids.
    store = { files: new Map(), folders: new Map(), nextId: 190_000_000_000 + portal.hubId * 1000 };
    stores.set(portal, store);
  }
  return store;
}

export function nextFileId(store: FileStore): string {
  store.nextId += 1;
  return String(store.nextId);
}

const TYPES: Array<[string, RegExp]> = [
  ['IMG', /^(png|jpe?g|gif|svg|webp|bmp|tiff?|ico|heic)$/],
  ['MOVIE', /^(mp4|mov|avi|wmv|webm|mkv|m4v|mpe?g)$/],
  ['AUDIO', /^(mp3|wav|ogg|m4a|aac|flac|wma)$/],
  ['DOCUMENT', /^(pdf|docx?|xlsx?|pptx?|txt|csv|rtf|odt|ods|odp|md|json|xml|html?)$/],
];

/** HubSpot's file `type`: a coarse class derived from the extension. */
export function fileType(extension: string): string {
  const ext = extension.toLowerCase();
  return TYPES.find(([, pattern]) => pattern.test(ext))?.[0] ?? 'OTHER';
}

export function splitName(fileName: string): { name: string; extension: string } {
  const dot = fileName.lastIndexOf('.');
  if (dot <= 0) return { name: fileName, extension: '' };
  return { name: fileName.slice(0, dot), extension: fileName.slice(dot + 1).toLowerCase() };
}

export function md5(bytes: Buffer): string {
  return createHash('md5').update(bytes).digest('hex');
}

export function isPublic(access: FileAccess): boolean {
  return access.startsWith('PUBLIC_');
}

export function hostedUrl(base: string, portal: Portal, file: HubSpotFile): string {
  const path = file.path.split('/').map(encodeURIComponent).join('/');
  return `${base}${HUBFS_PATH}/${portal.hubId}${path}`;
}

function signature(hubId: number, fileId: string, expires: number): string {
  return createHmac('sha256', signingKey).update(`${hubId}/${fileId}/${expires}`).digest('base64url');
}

/** A CloudFront-style signed link: `Expires` and `Signature` are the only credential. */
export function signedUrl(base: string, portal: Portal, file: HubSpotFile, expiresAtMs: number): string {
  const expires = Math.floor(expiresAtMs / 1000);
  return `${hostedUrl(base, portal, file)}?Expires=${expires}&Signature=${signature(portal.hubId, file.id, expires)}`;
}

export function verifySignature(
  hubId: number,
  fileId: string,
  expires: string | undefined,
  given: string | undefined,
): number | undefined {
  if (!expires || !/^\d+$/.test(expires) || !given) return undefined;
  const expected = Buffer.from(signature(hubId, fileId, Number(expires)));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  return Number(expires);
}

/** The File object as `/files/v3/files` returns it. */
export function fileJson(base: string, portal: Portal, file: HubSpotFile): Record<string, unknown> {
  const url = hostedUrl(base, portal, file);
  const body: Record<string, unknown> = {
    id: file.id,
    createdAt: isoTime(file.createdAt),
    updatedAt: isoTime(file.updatedAt),
    archived: file.archived,
    parentFolderId: file.folderId,
    name: file.name,
    path: file.path,
    size: file.bytes.length,
    type: fileType(file.extension),
    extension: file.extension,
    defaultHostingUrl: url,
    url,
    isUsableInContent: isPublic(file.access),
    access: file.access,
    fileMd5: file.md5,
    sourceGroup: 'CONTENT',
  };
  if (file.archivedAt !== undefined) body.archivedAt = isoTime(file.archivedAt);
  return body;
}
