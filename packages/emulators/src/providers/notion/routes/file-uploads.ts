import type { FastifyInstance, FastifyReply } from 'fastify';
import { FormDataError, type FormPart, parseFormData } from '../../../core/multipart.js';
import type { ProviderContext } from '../../../core/types.js';
import { type NotionCall, notionRoute } from '../api.js';
import { NotionApiError, shapeError, validationError } from '../errors.js';
import {
  FILES_PATH,
  type FileUpload,
  fileStore,
  MAX_PART_BYTES,
  MAX_PARTS,
  MIN_PART_BYTES,
  renderFileUpload,
  uploadStatus,
  verifyFileSignature,
} from '../files.js';
import { newId } from '../ids.js';
import type { NotionState } from '../model.js';
import { listBody, paginate, parsePageSize } from '../pagination.js';
import { pathId } from '../workspace.js';

/** Room for a 20 MiB file plus the form's framing, so oversized files get Notion's answer, not a bare 413. */
const SEND_BODY_LIMIT = 64 * 1024 * 1024;
const MAX_FILENAME_BYTES = 900;

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw shapeError('body', key, 'a string', value);
  return value;
}

function parseMode(raw: unknown): 'single_part' | 'multi_part' {
  if (raw === undefined || raw === 'single_part' || raw === 'multi_part') return raw ?? 'single_part';
  if (raw === 'external_url') {
    throw validationError(
      'body failed validation: body.mode `external_url` (importing from a URL) is not available in the sandbox; use `single_part` or `multi_part` and send the bytes.',
    );
  }
  throw shapeError('body', 'mode', '`"single_part"`, `"multi_part"` or `"external_url"`', raw);
}

function parseNumberOfParts(mode: string, raw: unknown): number | undefined {
  if (mode !== 'multi_part') {
    if (raw !== undefined)
      throw shapeError('body', 'number_of_parts', 'undefined unless mode is `multi_part`', raw);
    return undefined;
  }
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > MAX_PARTS) {
    throw shapeError(
      'body',
      'number_of_parts',
      `an integer from 1 to ${MAX_PARTS} for a multi_part upload`,
      raw,
    );
  }
  return raw;
}

function createUpload(call: NotionCall, ctx: ProviderContext): Record<string, unknown> {
  const { body, now } = call;
  const mode = parseMode(body.mode);
  const filename = optionalString(body, 'filename');
  const contentType = optionalString(body, 'content_type');
  if (filename !== undefined && Buffer.byteLength(filename) > MAX_FILENAME_BYTES) {
    throw validationError(
      `body failed validation: body.filename should be at most ${MAX_FILENAME_BYTES} bytes long.`,
    );
  }
  if (mode === 'multi_part' && filename === undefined) {
    throw validationError('body failed validation: body.filename is required when mode is `multi_part`.');
  }
  const upload: FileUpload = {
    id: newId(),
    mode,
    createdTime: now,
    lastEditedTime: now,
    createdBy: call.botId,
    filename: filename ?? null,
    contentType: contentType ?? null,
    parts: new Map(),
    numberOfParts: parseNumberOfParts(mode, body.number_of_parts),
    attached: false,
    base: ctx.publicBase(call.req),
  };
  fileStore(call.ws, ctx.clock).uploads.set(upload.id, upload);
  return renderFileUpload(upload, now);
}

function findUpload(call: NotionCall, ctx: ProviderContext): FileUpload {
  const id = pathId(call.params.file_upload_id, 'file_upload_id');
  const upload = fileStore(call.ws, ctx.clock).uploads.get(id);
  if (!upload)
    throw new NotionApiError(404, 'object_not_found', `Could not find file_upload with ID: ${id}.`);
  return upload;
}

function formParts(call: NotionCall): FormPart[] {
  const raw = call.req.body;
  if (!Buffer.isBuffer(raw)) {
    throw validationError(
      'Send the file contents as multipart/form-data (with a boundary) under the `file` key; this endpoint takes no JSON.',
    );
  }
  try {
    return parseFormData(raw, call.req.headers['content-type']);
  } catch (error) {
    if (error instanceof FormDataError)
      throw validationError(`Failed to parse the multipart/form-data body: ${error.message}.`);
    throw error;
  }
}

function partNumber(upload: FileUpload, field: FormPart | undefined): number | undefined {
  const raw = field?.body.toString('utf8');
  if (upload.mode === 'single_part') {
    if (raw !== undefined) throw validationError('`part_number` is only accepted for `multi_part` uploads.');
    return undefined;
  }
  const total = upload.numberOfParts ?? 1;
  const value = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= total)) {
    throw validationError(
      `\`part_number\` is required for multi_part uploads and must be an integer from 1 to ${total}, instead was \`${JSON.stringify(raw ?? null)}\`.`,
    );
  }
  return value;
}

function checkPartSize(upload: FileUpload, size: number, part: number | undefined): void {
  if (size > MAX_PART_BYTES) {
    throw validationError(
      part === undefined
        ? `The file is ${size} bytes; single_part uploads take at most 20 MB (${MAX_PART_BYTES} bytes). Create the upload with mode \`multi_part\` and send it in parts of 5–20 MB.`
        : `Part ${part} is ${size} bytes; each part may be at most 20 MB (${MAX_PART_BYTES} bytes).`,
    );
  }
  if (part !== undefined && part < (upload.numberOfParts ?? 1) && size < MIN_PART_BYTES) {
    throw validationError(
      `Part ${part} is ${size} bytes; every part but the last must be at least 5 MB (${MIN_PART_BYTES} bytes).`,
    );
  }
}

function sendUpload(call: NotionCall, ctx: ProviderContext): Record<string, unknown> {
  const upload = findUpload(call, ctx);
  const status = uploadStatus(upload, call.now);
  if (status !== 'pending') {
    throw validationError(
      `File upload ${upload.id} has status \`${status}\`; contents can only be sent while it is \`pending\`. Create a new file upload to send other contents.`,
    );
  }
  const parts = formParts(call);
  const file = parts.find((p) => p.name === 'file');
  if (!file)
    throw validationError(
      'The multipart/form-data body must contain the file contents under the `file` key.',
    );
  const part = partNumber(
    upload,
    parts.find((p) => p.name === 'part_number'),
  );
  checkPartSize(upload, file.body.length, part);
  // Copied out: the request buffer may be far larger than the file (other form fields).
  const bytes = Buffer.from(file.body);
  if (upload.filename === null && file.filename) upload.filename = file.filename;
  if (upload.contentType === null) upload.contentType = file.contentType ?? 'application/octet-stream';
  if (part === undefined) upload.bytes = bytes;
  else upload.parts.set(part, bytes);
  upload.lastEditedTime = call.now;
  return renderFileUpload(upload, call.now);
}

function completeUpload(call: NotionCall, ctx: ProviderContext): Record<string, unknown> {
  const upload = findUpload(call, ctx);
  const status = uploadStatus(upload, call.now);
  if (upload.mode !== 'multi_part') {
    throw validationError(
      `File upload ${upload.id} is a single_part upload; only multi_part uploads are completed.`,
    );
  }
  if (status !== 'pending') {
    throw validationError(
      `File upload ${upload.id} has status \`${status}\`; only a \`pending\` upload can be completed.`,
    );
  }
  const total = upload.numberOfParts ?? 1;
  const missing = Array.from({ length: total }, (_, i) => i + 1).filter((n) => !upload.parts.has(n));
  if (missing.length > 0) {
    throw validationError(
      `File upload ${upload.id} expects ${total} parts; send part(s) ${missing.join(', ')} before completing it.`,
    );
  }
  upload.bytes = Buffer.concat(Array.from({ length: total }, (_, i) => upload.parts.get(i + 1) as Buffer));
  upload.parts.clear();
  upload.lastEditedTime = call.now;
  return renderFileUpload(upload, call.now);
}

function listUploads(call: NotionCall, ctx: ProviderContext): Record<string, unknown> {
  const pageSize = parsePageSize(call.query.page_size, 'query');
  const status = call.query.status;
  if (status !== undefined && !['pending', 'uploaded', 'expired', 'failed'].includes(String(status))) {
    throw shapeError('query', 'status', '`"pending"`, `"uploaded"`, `"expired"` or `"failed"`', status);
  }
  const uploads = [...fileStore(call.ws, ctx.clock).uploads.values()]
    .filter((u) => status === undefined || uploadStatus(u, call.now) === status)
    .reverse();
  const page = paginate(uploads, (u) => u.id, call.query.start_cursor, pageSize);
  return listBody(
    { items: page.items.map((u) => renderFileUpload(u, call.now)), nextCursor: page.nextCursor },
    'file_upload',
  );
}

/** S3 refuses a bad or stale presigned link with an XML AccessDenied; the emulator answers alike. */
function accessDenied(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .code(403)
    .type('application/xml')
    .send(
      `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${message}</Message></Error>`,
    );
}

function registerDownloadRoute(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.get(`${FILES_PATH}/:owner/:id/:name`, (req, reply) => {
    const { owner, id } = req.params as { owner: string; id: string };
    const query = req.query as Record<string, string | undefined>;
    const expires = verifyFileSignature(owner, id, query.expires, query.signature);
    if (expires === undefined)
      return accessDenied(
        reply,
        'The request signature we calculated does not match the signature you provided.',
      );
    if (expires * 1000 <= ctx.clock()) return accessDenied(reply, 'Request has expired');
    const ws = getState().workspaces.get(owner);
    const upload = ws ? fileStore(ws, ctx.clock).uploads.get(id) : undefined;
    if (!upload?.bytes) return accessDenied(reply, 'Access Denied');
    return reply
      .code(200)
      .header('content-type', upload.contentType ?? 'application/octet-stream')
      .header('content-length', String(upload.bytes.length))
      .header(
        'content-disposition',
        `inline; filename*=UTF-8''${encodeURIComponent(upload.filename ?? 'file')}`,
      )
      .send(upload.bytes);
  });
}

/** Notion's File Upload API (single and multi part), and the signed links that serve uploaded bytes. */
export function registerFileUploadRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  if (!app.hasContentTypeParser('multipart/form-data')) {
    app.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: SEND_BODY_LIMIT },
      (_req, body, done) => done(null, body),
    );
  }
  const route = (handler: (call: NotionCall, ctx: ProviderContext) => Record<string, unknown>) =>
    notionRoute(ctx, getState, (call) => handler(call, ctx));
  app.post('/v1/file_uploads', route(createUpload));
  app.get('/v1/file_uploads', route(listUploads));
  app.get(
    '/v1/file_uploads/:file_upload_id',
    route((call) => renderFileUpload(findUpload(call, ctx), call.now)),
  );
  app.post('/v1/file_uploads/:file_upload_id/send', { bodyLimit: SEND_BODY_LIMIT }, route(sendUpload));
  app.post('/v1/file_uploads/:file_upload_id/complete', route(completeUpload));
  registerDownloadRoute(app, ctx, getState);
}
