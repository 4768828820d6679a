import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser } from '../../../core/types.js';
import { GOOGLE_API_SCOPES } from '../scopes.js';
import { type DriveFile, sendGoogleError } from '../shared.js';
import {
  booleanParam,
  type DriveRoutes,
  fieldsFor,
  invalidParam,
  isRoot,
  type Query,
  supportsAllDrives,
  textOf,
} from './api.js';
import { applyFields, type FieldTree } from './fields.js';
import { compileDriveQuery, DriveQueryError, type QueryFile } from './query.js';
import { fileResource, isFolder, sharedDriveOf } from './resource.js';
import { driveRootIdFor } from './seed.js';

// files.list: the `q` search, `orderBy`, paging, and the spaces, corpora and shared drives the emulated Drive has.

const DEFAULT_LIST_FIELDS = 'kind,nextPageToken,incompleteSearch,files(kind,id,name,mimeType)';

function queryFileOf(f: DriveFile, user: EmulatedUser): QueryFile {
  return {
    name: f.name,
    mimeType: f.mimeType,
    parents: f.parents,
    trashed: f.trashed,
    starred: f.starred,
    description: f.description,
    modifiedTime: f.modifiedTime,
    createdTime: f.createdTime,
    ownerEmails: [user.email],
    text: textOf(f),
    properties: f.extra?.properties as Record<string, string> | undefined,
    appProperties: f.extra?.appProperties as Record<string, string> | undefined,
  };
}

const ORDER_KEYS = new Set([
  'createdTime',
  'folder',
  'modifiedByMeTime',
  'modifiedTime',
  'name',
  'name_natural',
  'quotaBytesUsed',
  'recency',
  'sharedWithMeTime',
  'starred',
  'viewedByMeTime',
]);

function comparatorFor(orderBy: string): ((a: DriveFile, b: DriveFile) => number) | null {
  const keys: Array<{ key: string; desc: boolean }> = [];
  for (const part of orderBy.split(',')) {
    const [key, dir, extra] = part.trim().split(/\s+/);
    if (!key || !ORDER_KEYS.has(key) || extra !== undefined) return null;
    if (dir !== undefined && dir !== 'desc' && dir !== 'asc') return null;
    keys.push({ key, desc: dir === 'desc' });
  }
  const sortValue = (f: DriveFile, key: string): string | number => {
    switch (key) {
      case 'folder':
        return isFolder(f) ? 0 : 1;
      case 'name':
      case 'name_natural':
        return f.name.toLowerCase();
      case 'createdTime':
        return f.createdTime;
      case 'starred':
        return f.starred ? 0 : 1;
      case 'quotaBytesUsed':
        return f.content?.length ?? 0;
      default:
        return f.modifiedTime;
    }
  };
  return (a, b) => {
    for (const { key, desc } of keys) {
      const x = sortValue(a, key);
      const y = sortValue(b, key);
      const c =
        typeof x === 'string' && typeof y === 'string'
          ? key.startsWith('name')
            ? x.localeCompare(y, 'en', { numeric: key === 'name_natural' })
            : x < y
              ? -1
              : x > y
                ? 1
                : 0
          : (x as number) - (y as number);
      if (c !== 0) return desc ? -c : c;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}

function encodePageToken(offset: number): string {
  return Buffer.from(`~!!~${offset}`).toString('base64url');
}

function decodePageToken(token: string): number | null {
  const m = /^~!!~(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}

/** The list's parameters once checked. */
interface FileListQuery {
  predicate: (f: QueryFile) => boolean;
  pageSize: number;
  compare: (a: DriveFile, b: DriveFile) => number;
  offset: number;
  spaces: string[];
  corpora: string;
  driveId: string | undefined;
  /** Shared-drive items are listed: the request supports shared drives and asks for their items. */
  allDrives: boolean;
  tree: FieldTree | '*';
}

/** Whether a file is in the corpus asked for: one shared drive, or My Drive plus (when asked) every shared drive. */
function inCorpus(f: DriveFile, list: FileListQuery): boolean {
  const driveId = sharedDriveOf(f);
  if (list.corpora === 'drive') return list.allDrives && driveId === list.driveId;
  return driveId === undefined || list.allDrives;
}

/** files.list: one page of the files `q` matches (the root folder never is one), in `orderBy` order. */
export async function listFiles({ dataOf, auth }: DriveRoutes, req: FastifyRequest, reply: FastifyReply) {
  const who = auth(req, reply, GOOGLE_API_SCOPES.drive.read, 'List');
  if (!who) return reply;
  const q = req.query as Query;
  const { user } = who;
  const drive = dataOf(user.id).drive;
  const list = checkFileListQuery(reply, q, user);
  if (!list) return reply;
  const { pageSize, offset } = list;

  // The emulated Drive has no app data folder nor photos: those spaces are empty.
  const matches = list.spaces.includes('drive')
    ? [...drive.values()]
        .filter((f) => !isRoot(f) && inCorpus(f, list) && list.predicate(queryFileOf(f, user)))
        .sort(list.compare)
    : [];
  const page = matches.slice(offset, offset + pageSize);
  const body: Record<string, unknown> = { kind: 'drive#fileList' };
  if (offset + pageSize < matches.length) body.nextPageToken = encodePageToken(offset + pageSize);
  body.incompleteSearch = false;
  body.files = page.map((f) => fileResource(f, user));
  return reply.send(applyFields(body, list.tree));
}

/** Checks the list's parameters in Drive's order; null when it already answered the error. */
function checkFileListQuery(reply: FastifyReply, q: Query, user: EmulatedUser): FileListQuery | null {
  const refuse = (location: string) => {
    invalidParam(reply, location);
    return null;
  };
  let predicate: (f: QueryFile) => boolean;
  try {
    predicate = compileDriveQuery(q.q ?? '', driveRootIdFor(user.id));
  } catch (e) {
    if (e instanceof DriveQueryError) return refuse('q');
    throw e;
  }
  const pageSize = q.pageSize === undefined ? 100 : Number(q.pageSize);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) return refuse('pageSize');
  const compare = comparatorFor(q.orderBy ?? 'modifiedTime desc');
  if (!compare) return refuse('orderBy');
  const offset = q.pageToken === undefined ? 0 : decodePageToken(q.pageToken);
  if (offset === null) return refuse('pageToken');
  const spaces = (q.spaces ?? 'drive').split(',');
  if (spaces.some((s) => !['drive', 'appDataFolder', 'photos'].includes(s))) return refuse('spaces');
  const corpora = q.corpora ?? 'user';
  if (!['user', 'drive', 'domain', 'allDrives'].includes(corpora)) return refuse('corpora');
  if (corpora === 'drive' && !q.driveId) {
    sendGoogleError(
      reply,
      400,
      'The driveId parameter must be specified if and only if corpora is set to drive.',
      {
        reason: 'badRequest',
        location: 'driveId',
      },
    );
    return null;
  }
  const supports = supportsAllDrives(reply, q);
  if (supports === null) return null;
  const includeItems = booleanParam(reply, q, 'includeItemsFromAllDrives', 'includeTeamDriveItems');
  if (includeItems === null) return null;
  const tree = fieldsFor(reply, q.fields ?? DEFAULT_LIST_FIELDS, true);
  if (!tree) return null;
  return {
    predicate,
    pageSize,
    compare,
    offset,
    spaces,
    corpora,
    driveId: q.driveId,
    allDrives: supports && includeItems,
    tree,
  };
}
