import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { authorizeGoogle, GOOGLE_API_SCOPES } from '../scopes.js';
import { type DriveFile, sendGoogleError } from '../shared.js';
import type { GoogleDataOf } from '../user-data.js';
import { invalidParam, lookup, notFound, type Query, SERVICE, sendFile } from './api.js';
import {
  applyMetadata,
  blankFile,
  setContent,
  updateFile,
  type WriteContext,
  writeContext,
} from './file-writes.js';
import {
  boundaryOf,
  parseContentRange,
  parseMultipart,
  type UploadSession,
  uploadSessions,
} from './upload.js';

// Uploads: media, multipart and resumable, creating a file or replacing one's content.

/** Uploads reach ~1 GiB in the gateway's tests; leave headroom. */
export const UPLOAD_LIMIT = 2 * 1024 * 1024 * 1024;

/** What the upload routes need: the emulator and every user's data (a session URI carries no token). */
interface Uploads {
  ctx: ProviderContext;
  dataOf: GoogleDataOf;
}

export function uploadRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  const uploads: Uploads = { ctx, dataOf };
  const handler = (req: FastifyRequest, reply: FastifyReply) => upload(uploads, req, reply);
  const opts = { bodyLimit: UPLOAD_LIMIT };
  app.post('/upload/drive/v3/files', opts, handler);
  app.put('/upload/drive/v3/files', opts, handler);
  app.patch('/upload/drive/v3/files/:fileId', opts, handler);
  app.put('/upload/drive/v3/files/:fileId', opts, handler);
  app.post('/upload/drive/v3/files/:fileId', opts, handler);
}

/** Upload metadata: a JSON object, or none when the body is empty; null when it already answered 400. */
function readJson(reply: FastifyReply, body: Buffer | undefined): Record<string, unknown> | null {
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
}

/** Create (no fileId) or update one file from an upload of any type. */
async function upload({ ctx, dataOf }: Uploads, req: FastifyRequest, reply: FastifyReply) {
  const fileId = (req.params as { fileId?: string }).fileId;
  const q = req.query as Query;
  if (q.upload_id !== undefined) return receiveChunk({ ctx, dataOf }, req, reply);
  const who = authorizeGoogle(ctx, req, reply, {
    anyOf: GOOGLE_API_SCOPES.drive.write,
    service: SERVICE,
    method: `google.apps.drive.v3.DriveFiles.${fileId ? 'Update' : 'Create'}`,
  });
  if (!who) return reply;
  const w = writeContext(ctx, reply, dataOf(who.user.id).drive, who.user, q);
  if (!w) return reply;
  const existing = fileId ? lookup(w.drive, who.user.id, fileId, w.allDrives) : undefined;
  if (fileId && !existing) return notFound(reply, fileId);
  const body = (req.body as Buffer | undefined) ?? Buffer.alloc(0);
  if (q.uploadType === 'resumable') return startResumableSession(w, req, existing, body);
  const received = readUploadBody(reply, q, body, req.headers['content-type'], existing);
  if (!received) return reply;
  return finishUpload(w, existing, received.meta, received.content, received.mediaType, q.fields, q);
}

/** What a media or multipart upload carries. */
interface UploadBody {
  meta: Record<string, unknown>;
  content: Buffer;
  mediaType: string | undefined;
}

/** The metadata and bytes of a media or multipart upload; null when it already answered the error. */
function readUploadBody(
  reply: FastifyReply,
  q: Query,
  body: Buffer,
  contentType: string | undefined,
  existing: DriveFile | undefined,
): UploadBody | null {
  switch (q.uploadType) {
    case 'media': {
      const meta: Record<string, unknown> = {};
      // Drive names a media-only upload "Untitled"; `name` is accepted as a convenience.
      if (q.name !== undefined && !existing) meta.name = q.name;
      return { meta, content: body, mediaType: contentType };
    }
    case 'multipart': {
      const boundary = boundaryOf(contentType);
      const parts = boundary ? parseMultipart(body, boundary) : null;
      if (parts?.length !== 2) {
        sendGoogleError(reply, 400, 'Malformed multipart body.', { reason: 'badContent' });
        return null;
      }
      const meta = readJson(reply, parts[0]?.body);
      if (!meta) return null;
      return {
        meta,
        content: parts[1]?.body ?? Buffer.alloc(0),
        mediaType: parts[1]?.headers['content-type'],
      };
    }
    default:
      invalidParam(reply, 'uploadType');
      return null;
  }
}

/** Opens a resumable session; the client then sends the bytes to the session URI in `location`. */
function startResumableSession(
  w: WriteContext,
  req: FastifyRequest,
  existing: DriveFile | undefined,
  body: Buffer,
) {
  const { ctx, reply } = w;
  const q = req.query as Query;
  const json = readJson(reply, body);
  if (!json) return reply;
  const session: UploadSession = {
    id: ctx.randomId(24),
    userId: w.user.id,
    fileId: existing?.id,
    metadata: json,
    mimeType: (req.headers['x-upload-content-type'] as string | undefined) ?? undefined,
    fields: q.fields,
    allDrives: w.allDrives,
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

function finishUpload(
  w: WriteContext,
  existing: DriveFile | undefined,
  meta: Record<string, unknown>,
  content: Buffer,
  mediaType: string | undefined,
  fields: string | undefined,
  q: Query,
) {
  const f = existing ?? blankFile(w);
  if (existing) {
    if (!updateFile(w, f, meta, q)) return w.reply;
  } else {
    if (!applyMetadata(w, f, meta, true)) return w.reply;
    if (meta.mimeType === undefined && mediaType) f.mimeType = mediaType.split(';')[0]?.trim() || f.mimeType;
  }
  setContent(f, content, w.ctx.clock());
  w.drive.set(f.id, f);
  return sendFile(w.reply, f, w.user, fields);
}

/** A PUT to a resumable session URI: the session id authorizes it, as at Google. */
async function receiveChunk({ ctx, dataOf }: Uploads, req: FastifyRequest, reply: FastifyReply) {
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
    const w: WriteContext = { ctx, reply, drive: data.drive, user: data.user, allDrives: session.allDrives };
    const existing = session.fileId ? data.drive.get(session.fileId) : undefined;
    if (session.fileId && !existing) return notFound(reply, session.fileId);
    const content =
      session.chunks.length === 1 ? (session.chunks[0] as Buffer) : Buffer.concat(session.chunks);
    return finishUpload(w, existing, session.metadata, content, session.mimeType, session.fields, {});
  }
  return sendGoogleError(reply, 404, 'Upload session not found.', { reason: 'notFound' });
}

/** Every emulated user's data, to find which one a resumable session belongs to. */
function allUserData(ctx: ProviderContext, dataOf: GoogleDataOf) {
  return ctx.users.map((u) => dataOf(u.id));
}
