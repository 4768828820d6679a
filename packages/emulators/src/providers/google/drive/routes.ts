import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import { authorizeGoogle, GOOGLE_API_SCOPES } from '../scopes.js';
import { acceptEmptyJson, type DriveFile, GOOGLE_MIME, sendGoogleError } from '../shared.js';
import type { GoogleDataOf } from '../user-data.js';
import { applyFields, type FieldsError, type FieldTree, parseFields } from './fields.js';
import { compileDriveQuery, DriveQueryError, type QueryFile } from './query.js';
import {
  bumpVersion,
  driveUser,
  EXPORT_FORMATS,
  FILE_FIELDS,
  fileResource,
  isFolder,
  isNative,
} from './resource.js';
import { driveIdFrom, driveRootIdFor } from './seed.js';
import {
  boundaryOf,
  parseContentRange,
  parseMultipart,
  type UploadSession,
  uploadSessions,
} from './upload.js';

export { seedDrive } from './seed.js';

const SERVICE = 'drive.googleapis.com';
/** Uploads reach ~1 GiB in the gateway's tests; leave headroom. */
const UPLOAD_LIMIT = 2 * 1024 * 1024 * 1024;
const DEFAULT_FILE_FIELDS = 'kind,id,name,mimeType';
const DEFAULT_LIST_FIELDS = 'kind,nextPageToken,incompleteSearch,files(kind,id,name,mimeType)';
const TEXTUAL = /^(text\/|application\/(json|xml|csv|javascript))/;
/** Search reads this much of a file's text, as Drive indexes only the start of large files. */
const INDEXED_BYTES = 1024 * 1024;

type Query = Record<string, string | undefined>;

function notFound(reply: FastifyReply, id: string) {
  return sendGoogleError(reply, 404, `File not found: ${id}.`, { reason: 'notFound', location: 'fileId' });
}

function invalidParam(reply: FastifyReply, location: string, message = 'Invalid Value') {
  return sendGoogleError(reply, 400, message, { reason: 'invalid', location });
}

/** Parses `fields` and checks the File fields it names; null when it already answered 400. */
function fieldsFor(reply: FastifyReply, text: string, list: boolean): FieldTree | '*' | null {
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

function textOf(f: DriveFile): string {
  if (typeof f.extra?.text === 'string') return f.extra.text;
  if (f.content && TEXTUAL.test(f.mimeType)) return f.content.subarray(0, INDEXED_BYTES).toString('utf8');
  return '';
}

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

/** Drive's resource id for `root`, and the file behind an id (root alias included). */
function lookup(drive: Map<string, DriveFile>, userId: string, id: string): DriveFile | undefined {
  return drive.get(id === 'root' ? driveRootIdFor(userId) : id);
}

function isRoot(f: DriveFile): boolean {
  return f.extra?.isRoot === true;
}

function descendantsOf(drive: Map<string, DriveFile>, id: string): DriveFile[] {
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

function newFileId(ctx: ProviderContext): string {
  return driveIdFrom(`new:${ctx.randomId(16)}`);
}

interface WriteContext {
  ctx: ProviderContext;
  reply: FastifyReply;
  drive: Map<string, DriveFile>;
  user: EmulatedUser;
}

/** Applies writable metadata; returns false when it already answered an error. */
function applyMetadata(
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
      const parent = lookup(w.drive, w.user.id, p);
      if (!parent) return !notFound(reply, p);
      if (!isFolder(parent)) return !invalidParam(reply, 'parents', 'The specified parent is not a folder.');
      parents.push(parent.id);
    }
    if (parents.length > 0) f.parents = parents;
  }
  return true;
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
function setContent(f: DriveFile, content: Buffer, now: number): void {
  if (isNative(f)) {
    delete f.content;
    if (f.mimeType !== GOOGLE_MIME.folder) f.extra = { ...f.extra, text: content.toString('utf8') };
  } else {
    f.content = content;
  }
  bumpVersion(f, now);
}

function blankFile(w: WriteContext): DriveFile {
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

function sendFile(reply: FastifyReply, f: DriveFile, user: EmulatedUser, fields: string | undefined) {
  const tree = fieldsFor(reply, fields ?? DEFAULT_FILE_FIELDS, false);
  if (!tree) return reply;
  return reply.send(applyFields(fileResource(f, user), tree));
}

function sendBytes(req: FastifyRequest, reply: FastifyReply, f: DriveFile) {
  const content = f.content ?? Buffer.alloc(0);
  reply.header('content-type', f.mimeType).header('accept-ranges', 'bytes');
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  if (range && (range[1] !== '' || range[2] !== '')) {
    const size = content.length;
    let start = range[1] === '' ? size - Number(range[2]) : Number(range[1]);
    let end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
    if (start < 0) start = 0;
    if (start >= size || start > end) {
      return reply.code(416).header('content-range', `bytes */${size}`).send();
    }
    end = Math.max(end, start);
    return reply
      .code(206)
      .header('content-range', `bytes ${start}-${end}/${size}`)
      .send(content.subarray(start, end + 1));
  }
  return reply.send(content);
}

export function registerDriveRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  app.register(async (scope) => {
    acceptEmptyJson(scope);
    metadataRoutes(scope, ctx, dataOf);
  });
  app.register(async (scope) => {
    // Upload bodies are bytes whatever their type (a JSON file is content, not a request).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: UPLOAD_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    uploadRoutes(scope, ctx, dataOf);
  });
}

/** What every group of metadata routes needs: the emulator, the user's data and the scope check. */
interface DriveRoutes {
  ctx: ProviderContext;
  dataOf: GoogleDataOf;
  auth(
    req: FastifyRequest,
    reply: FastifyReply,
    anyOf: readonly string[],
    method: string,
  ): ReturnType<typeof authorizeGoogle>;
}

function metadataRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  const routes: DriveRoutes = {
    ctx,
    dataOf,
    auth: (req, reply, anyOf, method) =>
      authorizeGoogle(ctx, req, reply, {
        anyOf,
        service: SERVICE,
        method: `google.apps.drive.v3.DriveFiles.${method}`,
      }),
  };
  fileReadRoutes(app, routes);
  fileWriteRoutes(app, routes);
  aboutRoutes(app, routes);
}

/** Listing, reading and exporting files. */
function fileReadRoutes(app: FastifyInstance, { dataOf, auth }: DriveRoutes): void {
  const scopes = GOOGLE_API_SCOPES.drive;
  app.get('/drive/v3/files', async (req, reply) => {
    const who = auth(req, reply, scopes.read, 'List');
    if (!who) return reply;
    const q = req.query as Query;
    const { user } = who;
    const drive = dataOf(user.id).drive;
    let predicate: (f: QueryFile) => boolean;
    try {
      predicate = compileDriveQuery(q.q ?? '', driveRootIdFor(user.id));
    } catch (e) {
      if (e instanceof DriveQueryError) return invalidParam(reply, 'q');
      throw e;
    }
    const pageSize = q.pageSize === undefined ? 100 : Number(q.pageSize);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
      return invalidParam(reply, 'pageSize');
    const compare = comparatorFor(q.orderBy ?? 'modifiedTime desc');
    if (!compare) return invalidParam(reply, 'orderBy');
    const offset = q.pageToken === undefined ? 0 : decodePageToken(q.pageToken);
    if (offset === null) return invalidParam(reply, 'pageToken');
    const spaces = (q.spaces ?? 'drive').split(',');
    if (spaces.some((s) => !['drive', 'appDataFolder', 'photos'].includes(s)))
      return invalidParam(reply, 'spaces');
    const corpora = q.corpora ?? 'user';
    if (!['user', 'drive', 'domain', 'allDrives'].includes(corpora)) return invalidParam(reply, 'corpora');
    if (corpora === 'drive' && !q.driveId) {
      return sendGoogleError(
        reply,
        400,
        'The driveId parameter must be specified if and only if corpora is set to drive.',
        {
          reason: 'badRequest',
          location: 'driveId',
        },
      );
    }
    const tree = fieldsFor(reply, q.fields ?? DEFAULT_LIST_FIELDS, true);
    if (!tree) return reply;

    // The emulated Drive has no app data folder nor shared drives: those corpora are empty.
    const searchable = spaces.includes('drive') && corpora !== 'drive';
    const matches = searchable
      ? [...drive.values()].filter((f) => !isRoot(f) && predicate(queryFileOf(f, user))).sort(compare)
      : [];
    const page = matches.slice(offset, offset + pageSize);
    const body: Record<string, unknown> = { kind: 'drive#fileList' };
    if (offset + pageSize < matches.length) body.nextPageToken = encodePageToken(offset + pageSize);
    body.incompleteSearch = false;
    body.files = page.map((f) => fileResource(f, user));
    return reply.send(applyFields(body, tree));
  });

  app.get<{ Params: { fileId: string } }>('/drive/v3/files/:fileId', async (req, reply) => {
    const q = req.query as Query;
    const media = q.alt === 'media';
    if (q.alt !== undefined && q.alt !== 'json' && !media) return invalidParam(reply, 'alt');
    const who = auth(req, reply, media ? scopes.content : scopes.read, 'Get');
    if (!who) return reply;
    const f = lookup(dataOf(who.user.id).drive, who.user.id, req.params.fileId);
    if (!f) return notFound(reply, req.params.fileId);
    if (!media) return sendFile(reply, f, who.user, q.fields);
    if (isNative(f) || isFolder(f)) {
      return sendGoogleError(
        reply,
        403,
        'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
        { reason: 'fileNotDownloadable', location: 'alt' },
      );
    }
    return sendBytes(req, reply, f);
  });

  app.get<{ Params: { fileId: string } }>('/drive/v3/files/:fileId/export', async (req, reply) => {
    const who = auth(req, reply, scopes.content, 'Export');
    if (!who) return reply;
    const q = req.query as Query;
    if (!q.mimeType) {
      return sendGoogleError(reply, 400, 'Required parameter: mimeType', {
        reason: 'required',
        location: 'mimeType',
      });
    }
    const f = lookup(dataOf(who.user.id).drive, who.user.id, req.params.fileId);
    if (!f) return notFound(reply, req.params.fileId);
    const formats = EXPORT_FORMATS[f.mimeType];
    if (!isNative(f) || !formats) {
      return sendGoogleError(reply, 403, 'Export only supports Docs Editors files.', {
        reason: 'fileNotExportable',
      });
    }
    if (!formats.includes(q.mimeType)) {
      return sendGoogleError(reply, 400, 'The requested conversion is not supported.', {
        reason: 'badRequest',
        location: 'convertTo',
      });
    }
    const text = textOf(f);
    const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const body =
      q.mimeType === 'text/html'
        ? `<html><head><meta content="text/html; charset=UTF-8" http-equiv="content-type"><title>${escapeHtml(f.name)}</title></head><body>${text
            .split('\n')
            .map((l) => `<p>${escapeHtml(l)}</p>`)
            .join('')}</body></html>`
        : q.mimeType === 'text/tab-separated-values'
          ? text.replace(/,/g, '\t')
          : text;
    return reply.header('content-type', `${q.mimeType}; charset=utf-8`).send(body);
  });
}

/** Creating, changing, trashing, deleting and copying files (metadata only; content goes through uploads). */
function fileWriteRoutes(app: FastifyInstance, { ctx, dataOf, auth }: DriveRoutes): void {
  const scopes = GOOGLE_API_SCOPES.drive;
  app.post('/drive/v3/files', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'Create');
    if (!who) return reply;
    const w: WriteContext = { ctx, reply, drive: dataOf(who.user.id).drive, user: who.user };
    const meta = (req.body ?? {}) as Record<string, unknown>;
    const f = blankFile(w);
    if (!applyMetadata(w, f, meta, true)) return reply;
    if (!isNative(f)) f.content = Buffer.alloc(0);
    w.drive.set(f.id, f);
    return sendFile(reply, f, who.user, (req.query as Query).fields);
  });

  app.patch<{ Params: { fileId: string } }>('/drive/v3/files/:fileId', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'Update');
    if (!who) return reply;
    const q = req.query as Query;
    const w: WriteContext = { ctx, reply, drive: dataOf(who.user.id).drive, user: who.user };
    const f = lookup(w.drive, who.user.id, req.params.fileId);
    if (!f) return notFound(reply, req.params.fileId);
    if (!updateFile(w, f, (req.body ?? {}) as Record<string, unknown>, q)) return reply;
    return sendFile(reply, f, who.user, q.fields);
  });

  app.delete('/drive/v3/files/trash', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'EmptyTrash');
    if (!who) return reply;
    const drive = dataOf(who.user.id).drive;
    for (const f of [...drive.values()]) if (f.trashed) drive.delete(f.id);
    return reply.code(204).send();
  });

  app.delete<{ Params: { fileId: string } }>('/drive/v3/files/:fileId', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'Delete');
    if (!who) return reply;
    const drive = dataOf(who.user.id).drive;
    const f = lookup(drive, who.user.id, req.params.fileId);
    if (!f) return notFound(reply, req.params.fileId);
    if (isRoot(f)) {
      return sendGoogleError(reply, 403, 'The user does not have sufficient permissions for this file.', {
        reason: 'insufficientFilePermissions',
      });
    }
    for (const child of descendantsOf(drive, f.id)) drive.delete(child.id);
    drive.delete(f.id);
    return reply.code(204).send();
  });

  app.post<{ Params: { fileId: string } }>('/drive/v3/files/:fileId/copy', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'Copy');
    if (!who) return reply;
    const w: WriteContext = { ctx, reply, drive: dataOf(who.user.id).drive, user: who.user };
    const source = lookup(w.drive, who.user.id, req.params.fileId);
    if (!source) return notFound(reply, req.params.fileId);
    if (isFolder(source)) {
      return sendGoogleError(reply, 403, 'This file cannot be copied by the user.', {
        reason: 'cannotCopyFile',
      });
    }
    const copy: DriveFile = {
      ...blankFile(w),
      name: `Copy of ${source.name}`,
      mimeType: source.mimeType,
      parents: [...source.parents],
      description: source.description,
      content: source.content,
      extra: source.extra?.text === undefined ? undefined : { text: source.extra.text },
    };
    if (!applyMetadata(w, copy, (req.body ?? {}) as Record<string, unknown>, true)) return reply;
    w.drive.set(copy.id, copy);
    return sendFile(reply, copy, who.user, (req.query as Query).fields);
  });
}

/** The user, their storage quota and the export formats. */
function aboutRoutes(app: FastifyInstance, { ctx, dataOf }: DriveRoutes): void {
  const scopes = GOOGLE_API_SCOPES.drive;
  app.get('/drive/v3/about', async (req, reply) => {
    const who = authorizeGoogle(ctx, req, reply, {
      anyOf: scopes.read,
      service: SERVICE,
      method: 'google.apps.drive.v3.DriveAbout.Get',
    });
    if (!who) return reply;
    const q = req.query as Query;
    if (!q.fields) {
      return sendGoogleError(reply, 400, "The 'fields' parameter is required for this method.", {
        reason: 'required',
        location: 'fields',
      });
    }
    let tree: FieldTree | '*';
    try {
      tree = parseFields(q.fields);
    } catch (e) {
      return sendGoogleError(reply, 400, (e as Error).message, {
        reason: 'invalidParameter',
        location: 'fields',
      });
    }
    const drive = dataOf(who.user.id).drive;
    let usage = 0;
    let trash = 0;
    for (const f of drive.values()) {
      usage += f.content?.length ?? 0;
      if (f.trashed) trash += f.content?.length ?? 0;
    }
    const about = {
      kind: 'drive#about',
      user: driveUser(who.user),
      storageQuota: {
        limit: '16106127360',
        usage: String(usage),
        usageInDrive: String(usage),
        usageInDriveTrash: String(trash),
      },
      maxUploadSize: '5242880000000',
      appInstalled: false,
      exportFormats: Object.fromEntries(Object.entries(EXPORT_FORMATS)),
      canCreateDrives: false,
    };
    return reply.send(applyFields(about, tree));
  });
}

/** PATCH semantics shared by the metadata and upload endpoints; false when it already answered. */
function updateFile(w: WriteContext, f: DriveFile, meta: Record<string, unknown>, q: Query): boolean {
  const before = JSON.stringify([f.name, f.description, f.parents]);
  if (!applyMetadata(w, f, meta, false)) return false;
  const add = (q.addParents ?? '').split(',').filter(Boolean);
  const remove = (q.removeParents ?? '').split(',').filter(Boolean);
  if (add.length > 0 || remove.length > 0) {
    const next = f.parents.filter(
      (p) => !remove.map((r) => lookup(w.drive, w.user.id, r)?.id ?? r).includes(p),
    );
    for (const id of add) {
      const parent = lookup(w.drive, w.user.id, id);
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
  }
  if (JSON.stringify([f.name, f.description, f.parents]) !== before) bumpVersion(f, w.ctx.clock());
  return true;
}

function uploadRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  const scopes = GOOGLE_API_SCOPES.drive;

  const readJson = (reply: FastifyReply, body: Buffer | undefined): Record<string, unknown> | null => {
    if (!body || body.length === 0) return {};
    try {
      const parsed = JSON.parse(body.toString('utf8')) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // fall through
    }
    sendGoogleError(reply, 400, 'Invalid JSON payload received.', { reason: 'parseError' });
    return null;
  };

  /** Create (no fileId) or update one file from an upload of any type. */
  const upload = async (req: FastifyRequest, reply: FastifyReply) => {
    const fileId = (req.params as { fileId?: string }).fileId;
    const q = req.query as Query;
    if (q.upload_id !== undefined) return receiveChunk(req, reply);
    const who = authorizeGoogle(ctx, req, reply, {
      anyOf: scopes.write,
      service: SERVICE,
      method: `google.apps.drive.v3.DriveFiles.${fileId ? 'Update' : 'Create'}`,
    });
    if (!who) return reply;
    const w: WriteContext = { ctx, reply, drive: dataOf(who.user.id).drive, user: who.user };
    const existing = fileId ? lookup(w.drive, who.user.id, fileId) : undefined;
    if (fileId && !existing) return notFound(reply, fileId);
    const body = (req.body as Buffer | undefined) ?? Buffer.alloc(0);
    const contentType = req.headers['content-type'];

    let meta: Record<string, unknown> = {};
    let content: Buffer;
    let mediaType: string | undefined;
    switch (q.uploadType) {
      case 'media':
        content = body;
        mediaType = contentType;
        // Drive names a media-only upload "Untitled"; `name` is accepted as a convenience.
        if (q.name !== undefined && !existing) meta.name = q.name;
        break;
      case 'multipart': {
        const boundary = boundaryOf(contentType);
        const parts = boundary ? parseMultipart(body, boundary) : null;
        if (parts?.length !== 2) {
          return sendGoogleError(reply, 400, 'Malformed multipart body.', { reason: 'badContent' });
        }
        const json = readJson(reply, parts[0]?.body);
        if (!json) return reply;
        meta = json;
        content = parts[1]?.body ?? Buffer.alloc(0);
        mediaType = parts[1]?.headers['content-type'];
        break;
      }
      case 'resumable': {
        const json = readJson(reply, body);
        if (!json) return reply;
        const session: UploadSession = {
          id: ctx.randomId(24),
          userId: who.user.id,
          fileId: existing?.id,
          metadata: json,
          mimeType: (req.headers['x-upload-content-type'] as string | undefined) ?? undefined,
          fields: q.fields,
          total:
            req.headers['x-upload-content-length'] === undefined
              ? undefined
              : Number(req.headers['x-upload-content-length']),
          chunks: [],
          received: 0,
        };
        uploadSessions(w.drive).set(session.id, session);
        const location = `${ctx.publicBase(req)}/upload/drive/v3/files${existing ? `/${existing.id}` : ''}?uploadType=resumable&upload_id=${session.id}`;
        return reply.code(200).header('location', location).header('x-guploader-uploadid', session.id).send();
      }
      default:
        return invalidParam(reply, 'uploadType');
    }
    return finishUpload(w, existing, meta, content, mediaType, q.fields, q);
  };

  const finishUpload = (
    w: WriteContext,
    existing: DriveFile | undefined,
    meta: Record<string, unknown>,
    content: Buffer,
    mediaType: string | undefined,
    fields: string | undefined,
    q: Query,
  ) => {
    const f = existing ?? blankFile(w);
    if (existing) {
      if (!updateFile(w, f, meta, q)) return w.reply;
    } else {
      if (!applyMetadata(w, f, meta, true)) return w.reply;
      if (meta.mimeType === undefined && mediaType)
        f.mimeType = mediaType.split(';')[0]?.trim() || f.mimeType;
    }
    setContent(f, content, w.ctx.clock());
    w.drive.set(f.id, f);
    return sendFile(w.reply, f, w.user, fields);
  };

  /** A PUT to a resumable session URI: the session id authorizes it, as at Google. */
  const receiveChunk = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as Query;
    const id = q.upload_id ?? '';
    for (const data of allUserData(ctx, dataOf)) {
      const session = uploadSessions(data.drive).get(id);
      if (!session) continue;
      const body = (req.body as Buffer | undefined) ?? Buffer.alloc(0);
      const range = parseContentRange(req.headers['content-range'] as string | undefined);
      if (range === null) return invalidParam(reply, 'Content-Range', 'Invalid Content-Range header.');
      if (range?.total !== undefined) session.total = range.total;
      if (range?.start !== undefined && range.start !== session.received) {
        return reply
          .code(308)
          .header('range', session.received > 0 ? `bytes=0-${session.received - 1}` : undefined)
          .send();
      }
      if (body.length > 0) {
        session.chunks.push(body);
        session.received += body.length;
      }
      const complete =
        range === undefined || (session.total !== undefined && session.received >= session.total);
      if (!complete) {
        if (session.received > 0) reply.header('range', `bytes=0-${session.received - 1}`);
        return reply.code(308).send();
      }
      uploadSessions(data.drive).delete(id);
      const w: WriteContext = { ctx, reply, drive: data.drive, user: data.user };
      const existing = session.fileId ? data.drive.get(session.fileId) : undefined;
      if (session.fileId && !existing) return notFound(reply, session.fileId);
      const content =
        session.chunks.length === 1 ? (session.chunks[0] as Buffer) : Buffer.concat(session.chunks);
      return finishUpload(w, existing, session.metadata, content, session.mimeType, session.fields, {});
    }
    return sendGoogleError(reply, 404, 'Upload session not found.', { reason: 'notFound' });
  };

  const opts = { bodyLimit: UPLOAD_LIMIT };
  app.post('/upload/drive/v3/files', opts, upload);
  app.put('/upload/drive/v3/files', opts, upload);
  app.patch('/upload/drive/v3/files/:fileId', opts, upload);
  app.put('/upload/drive/v3/files/:fileId', opts, upload);
  app.post('/upload/drive/v3/files/:fileId', opts, upload);
}

/** Every emulated user's data, to find which one a resumable session belongs to. */
function allUserData(ctx: ProviderContext, dataOf: GoogleDataOf) {
  return ctx.users.map((u) => dataOf(u.id));
}
