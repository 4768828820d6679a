import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FormDataError, type FormPart, parseFormData } from '../../core/multipart.js';
import type { ProviderContext } from '../../core/types.js';
import { sendHubSpotError, sendValidationError } from './errors.js';
import {
  DEFAULT_SIGNED_URL_SECONDS,
  FILE_ACCESS,
  type FileAccess,
  fileJson,
  filesOf,
  fileType,
  HUBFS_PATH,
  type HubSpotFile,
  isPublic,
  md5,
  nextFileId,
  signedUrl,
  splitName,
  verifySignature,
} from './files.js';
import {
  authenticateCaller,
  type Caller,
  type GetState,
  type Query,
  requireScopes,
  singleParam,
} from './http.js';
import type { Portal } from './store.js';

const FILES_SCOPES = ['files'];
/** HubSpot's own cap on one upload is far higher; this keeps the emulator's memory in check. */
const UPLOAD_BODY_LIMIT = 256 * 1024 * 1024;
const MAX_SIGNED_URL_SECONDS = 6 * 60 * 60;

class UploadError extends Error {}

interface UploadRequest {
  file: FormPart;
  fileName: string;
  folderPath: string;
  folderId?: string;
  access: FileAccess;
  overwrite: boolean;
}

function text(parts: FormPart[], name: string): string | undefined {
  return parts.find((p) => p.name === name)?.body.toString('utf8');
}

function parseOptions(raw: string | undefined): { access: FileAccess; overwrite: boolean } {
  if (raw === undefined) {
    throw new UploadError(
      'The `options` form field is required: a JSON string such as {"access":"PRIVATE"}.',
    );
  }
  let options: unknown;
  try {
    options = JSON.parse(raw);
  } catch {
    throw new UploadError(
      `The \`options\` form field must be a JSON object, instead was ${JSON.stringify(raw)}.`,
    );
  }
  const access = (options as { access?: unknown } | null)?.access;
  if (typeof access !== 'string' || !(FILE_ACCESS as readonly string[]).includes(access)) {
    throw new UploadError(
      `options.access must be one of ${FILE_ACCESS.join(', ')}, instead was ${JSON.stringify(access)}.`,
    );
  }
  return { access: access as FileAccess, overwrite: (options as { overwrite?: unknown }).overwrite === true };
}

function parseUpload(req: FastifyRequest, store: ReturnType<typeof filesOf>): UploadRequest {
  if (!Buffer.isBuffer(req.body))
    throw new UploadError('Send the file as multipart/form-data under the `file` field.');
  let parts: FormPart[];
  try {
    parts = parseFormData(req.body, req.headers['content-type']);
  } catch (error) {
    if (error instanceof FormDataError)
      throw new UploadError(`Malformed multipart/form-data body: ${error.message}.`);
    throw error;
  }
  const file = parts.find((p) => p.name === 'file' && p.filename !== undefined);
  if (!file) throw new UploadError('The `file` form field (a file part) is required.');
  const folderId = text(parts, 'folderId');
  let folderPath = text(parts, 'folderPath');
  if (folderId !== undefined) {
    folderPath = [...store.folders].find(([, id]) => id === folderId)?.[0];
    if (folderPath === undefined)
      throw new UploadError(`Folder ${folderId} does not exist; give an existing folderId or a folderPath.`);
  }
  if (folderPath === undefined) throw new UploadError('One of `folderId` or `folderPath` is required.');
  const fileName = text(parts, 'fileName') ?? file.filename ?? '';
  if (fileName.trim() === '' || fileName.includes('/')) {
    throw new UploadError(
      `fileName must be a non-empty name without "/", instead was ${JSON.stringify(fileName)}.`,
    );
  }
  const normalized = `/${folderPath.split('/').filter(Boolean).join('/')}`.replace(/^\/$/, '');
  return { file, fileName, folderPath: normalized, folderId, ...parseOptions(text(parts, 'options')) };
}

function folderIdFor(store: ReturnType<typeof filesOf>, path: string): string {
  let id = store.folders.get(path);
  if (!id) {
    id = nextFileId(store);
    store.folders.set(path, id);
  }
  return id;
}

/** HubSpot keeps names unique in a folder: without `overwrite`, a clash gets a numeric suffix. */
function uniquePath(store: ReturnType<typeof filesOf>, folder: string, name: string, ext: string) {
  const taken = (candidate: string) =>
    [...store.files.values()].some(
      (f) => !f.archived && f.path === `${folder}/${candidate}${ext ? `.${ext}` : ''}`,
    );
  let candidate = name;
  for (let n = 1; taken(candidate); n++) candidate = `${name}-${n}`;
  return candidate;
}

function storeUpload(caller: Caller, upload: UploadRequest, now: number): HubSpotFile {
  const store = filesOf(caller.portal);
  const { name, extension } = splitName(upload.fileName);
  const path = (n: string) => `${upload.folderPath}/${n}${extension ? `.${extension}` : ''}`;
  const existing = upload.overwrite
    ? [...store.files.values()].find((f) => !f.archived && f.path === path(name))
    : undefined;
  const bytes = Buffer.from(upload.file.body);
  if (existing) {
    Object.assign(existing, { bytes, md5: md5(bytes), access: upload.access, updatedAt: now });
    return existing;
  }
  const finalName = uniquePath(store, upload.folderPath, name, extension);
  const file: HubSpotFile = {
    id: nextFileId(store),
    name: finalName,
    extension,
    folderId: folderIdFor(store, upload.folderPath),
    path: path(finalName),
    access: upload.access,
    bytes,
    md5: md5(bytes),
    contentType: upload.file.contentType ?? 'application/octet-stream',
    createdAt: now,
    updatedAt: now,
    archived: false,
  };
  store.files.set(file.id, file);
  return file;
}

function liveFile(portal: Portal, reply: FastifyReply, fileId: string): HubSpotFile | undefined {
  const file = filesOf(portal).files.get(fileId);
  if (file && !file.archived) return file;
  sendHubSpotError(reply, 404, 'OBJECT_NOT_FOUND', `File not found for id ${fileId}.`, {
    context: { id: [fileId] },
  });
  return undefined;
}

function registerFileApi(app: FastifyInstance, ctx: ProviderContext, getState: GetState): void {
  const caller = (req: FastifyRequest, reply: FastifyReply) => {
    const found = authenticateCaller(req, reply, ctx, getState);
    return found && requireScopes(reply, found, FILES_SCOPES) ? found : undefined;
  };
  app.post('/files/v3/files', { bodyLimit: UPLOAD_BODY_LIMIT }, (req, reply) => {
    const found = caller(req, reply);
    if (!found) return reply;
    let upload: UploadRequest;
    try {
      upload = parseUpload(req, filesOf(found.portal));
    } catch (error) {
      if (error instanceof UploadError) return sendValidationError(reply, error.message);
      throw error;
    }
    const file = storeUpload(found, upload, ctx.clock());
    return reply.code(201).send(fileJson(ctx.publicBase(req), found.portal, file));
  });
  app.get('/files/v3/files/:fileId', (req, reply) => {
    const found = caller(req, reply);
    const file = found && liveFile(found.portal, reply, (req.params as { fileId: string }).fileId);
    if (!found || !file) return reply;
    return reply.send(fileJson(ctx.publicBase(req), found.portal, file));
  });
  app.get('/files/v3/files/:fileId/signed-url', (req, reply) => {
    const found = caller(req, reply);
    const file = found && liveFile(found.portal, reply, (req.params as { fileId: string }).fileId);
    if (!found || !file) return reply;
    const raw = singleParam((req.query as Query).expirationSeconds);
    const seconds = raw === undefined ? DEFAULT_SIGNED_URL_SECONDS : Number(raw);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SIGNED_URL_SECONDS) {
      return sendValidationError(
        reply,
        `expirationSeconds must be an integer from 1 to ${MAX_SIGNED_URL_SECONDS}, instead was ${raw}.`,
      );
    }
    const expiresAt = ctx.clock() + seconds * 1000;
    return reply.send({
      url: signedUrl(ctx.publicBase(req), found.portal, file, expiresAt),
      expiresAt: new Date(expiresAt).toISOString(),
      name: file.name,
      extension: file.extension,
      type: fileType(file.extension),
      size: file.bytes.length,
    });
  });
  app.delete('/files/v3/files/:fileId', (req, reply) => {
    const found = caller(req, reply);
    const file = found && liveFile(found.portal, reply, (req.params as { fileId: string }).fileId);
    if (!found || !file) return reply;
    const now = ctx.clock();
    Object.assign(file, { archived: true, archivedAt: now, updatedAt: now });
    return reply.code(204).send();
  });
}

/** CloudFront refuses an unsigned or stale link with an XML AccessDenied. */
function accessDenied(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .code(403)
    .type('application/xml')
    .send(
      `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>${message}</Message></Error>`,
    );
}

function registerHostedFiles(app: FastifyInstance, ctx: ProviderContext, getState: GetState): void {
  app.get(`${HUBFS_PATH}/:hubId/*`, (req, reply) => {
    const { hubId, '*': rest } = req.params as { hubId: string; '*': string };
    const query = req.query as Query;
    const portal = [...getState().portals.values()].find((p) => String(p.hubId) === hubId);
    const path = `/${decodeURIComponent(rest)}`;
    const file = portal && [...filesOf(portal).files.values()].find((f) => !f.archived && f.path === path);
    if (!portal || !file) return accessDenied(reply, 'Access denied');
    if (!isPublic(file.access)) {
      const expires = verifySignature(
        portal.hubId,
        file.id,
        singleParam(query.Expires),
        singleParam(query.Signature),
      );
      if (expires === undefined) return accessDenied(reply, 'Access denied');
      if (expires * 1000 <= ctx.clock()) return accessDenied(reply, 'Request has expired');
    }
    return reply
      .header('content-type', file.contentType)
      .header('content-length', String(file.bytes.length))
      .header('etag', `"${file.md5}"`)
      .send(file.bytes);
  });
}

/** HubSpot's Files API v3 (upload, read, signed links, archive) and the CDN paths that serve the bytes. */
export function registerFileRoutes(app: FastifyInstance, ctx: ProviderContext, getState: GetState): void {
  if (!app.hasContentTypeParser('multipart/form-data')) {
    app.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: UPLOAD_BODY_LIMIT },
      (_req, body, done) => done(null, body),
    );
  }
  registerFileApi(app, ctx, getState);
  registerHostedFiles(app, ctx, getState);
}
