import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { authorizeGoogle, GOOGLE_API_SCOPES } from '../scopes.js';
import { acceptEmptyJson, type DriveFile, sendGoogleError } from '../shared.js';
import type { GoogleDataOf } from '../user-data.js';
import {
  type DriveRoutes,
  descendantsOf,
  invalidParam,
  isRoot,
  lookup,
  notFound,
  type Query,
  SERVICE,
  sendFile,
  supportsAllDrives,
  textOf,
} from './api.js';
import { changeRoutes } from './changes.js';
import { applyFields, type FieldTree, parseFields } from './fields.js';
import { listFiles } from './file-list.js';
import { applyMetadata, blankFile, updateFile, writeContext } from './file-writes.js';
import { driveUser, EXPORT_FORMATS, isFolder, isNative, sharedDriveOf } from './resource.js';
import { UPLOAD_LIMIT, uploadRoutes } from './upload-routes.js';

export { seedDrive } from './seed.js';

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
  changeRoutes(app, routes);
}

/** Listing, reading and exporting files. */
function fileReadRoutes(app: FastifyInstance, routes: DriveRoutes): void {
  const { dataOf, auth } = routes;
  const scopes = GOOGLE_API_SCOPES.drive;
  app.get('/drive/v3/files', (req, reply) => listFiles(routes, req, reply));

  app.get<{ Params: { fileId: string } }>('/drive/v3/files/:fileId', async (req, reply) => {
    const q = req.query as Query;
    const media = q.alt === 'media';
    if (q.alt !== undefined && q.alt !== 'json' && !media) return invalidParam(reply, 'alt');
    const who = auth(req, reply, media ? scopes.content : scopes.read, 'Get');
    if (!who) return reply;
    const allDrives = supportsAllDrives(reply, q);
    if (allDrives === null) return reply;
    const f = lookup(dataOf(who.user.id).drive, who.user.id, req.params.fileId, allDrives);
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

  app.get<{ Params: { fileId: string } }>('/drive/v3/files/:fileId/export', (req, reply) =>
    exportFile(routes, req, reply),
  );
}

/** files.export of a native file, in one of the formats its type offers. */
async function exportFile(
  { dataOf, auth }: DriveRoutes,
  req: FastifyRequest<{ Params: { fileId: string } }>,
  reply: FastifyReply,
) {
  const who = auth(req, reply, GOOGLE_API_SCOPES.drive.content, 'Export');
  if (!who) return reply;
  const q = req.query as Query;
  if (!q.mimeType) {
    return sendGoogleError(reply, 400, 'Required parameter: mimeType', {
      reason: 'required',
      location: 'mimeType',
    });
  }
  // files.export takes no supportsAllDrives: it reaches files in shared drives as they are.
  const f = lookup(dataOf(who.user.id).drive, who.user.id, req.params.fileId, true);
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
}

/** Creating, changing, trashing, deleting and copying files (metadata only; content goes through uploads). */
function fileWriteRoutes(app: FastifyInstance, { ctx, dataOf, auth }: DriveRoutes): void {
  const scopes = GOOGLE_API_SCOPES.drive;
  app.post('/drive/v3/files', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'Create');
    if (!who) return reply;
    const w = writeContext(ctx, reply, dataOf(who.user.id).drive, who.user, req.query as Query);
    if (!w) return reply;
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
    const w = writeContext(ctx, reply, dataOf(who.user.id).drive, who.user, q);
    if (!w) return reply;
    const f = lookup(w.drive, who.user.id, req.params.fileId, w.allDrives);
    if (!f) return notFound(reply, req.params.fileId);
    if (!updateFile(w, f, (req.body ?? {}) as Record<string, unknown>, q)) return reply;
    return sendFile(reply, f, who.user, q.fields);
  });

  app.delete('/drive/v3/files/trash', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'EmptyTrash');
    if (!who) return reply;
    const drive = dataOf(who.user.id).drive;
    // The user's trash: shared drives keep trashes of their own.
    for (const f of [...drive.values()]) if (f.trashed && sharedDriveOf(f) === undefined) drive.delete(f.id);
    return reply.code(204).send();
  });

  app.delete<{ Params: { fileId: string } }>('/drive/v3/files/:fileId', async (req, reply) => {
    const who = auth(req, reply, scopes.write, 'Delete');
    if (!who) return reply;
    const drive = dataOf(who.user.id).drive;
    const allDrives = supportsAllDrives(reply, req.query as Query);
    if (allDrives === null) return reply;
    const f = lookup(drive, who.user.id, req.params.fileId, allDrives);
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
    const w = writeContext(ctx, reply, dataOf(who.user.id).drive, who.user, req.query as Query);
    if (!w) return reply;
    const source = lookup(w.drive, who.user.id, req.params.fileId, w.allDrives);
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
      // Shared drives have storage of their own, outside the user's quota.
      if (sharedDriveOf(f) !== undefined) continue;
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
