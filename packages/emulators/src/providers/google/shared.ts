import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * A file in an emulated user's Drive. Sheets and Docs create their files here too, so a native
 * document shows up in Drive listings exactly as at Google.
 */
export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  createdTime: string;
  modifiedTime: string;
  trashed: boolean;
  starred: boolean;
  description?: string;
  /** Bytes of a binary file; undefined for native Google files (docs, sheets, folders). */
  content?: Buffer;
  ownerId: string;
  /** Free-form extra metadata the Drive emulator may keep (md5Checksum, webViewLink, …). */
  extra?: Record<string, unknown>;
}

export const GOOGLE_MIME = {
  folder: 'application/vnd.google-apps.folder',
  document: 'application/vnd.google-apps.document',
  spreadsheet: 'application/vnd.google-apps.spreadsheet',
} as const;

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  410: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/**
 * Google's JSON error body. Calendar and Drive (v3 "legacy" APIs) answer with `errors[]` carrying a
 * `reason`; Sheets and Docs (newer APIs) answer with `status`. Both shapes include `code` and `message`.
 */
export function googleErrorBody(
  status: number,
  message: string,
  opts: { reason?: string; style?: 'legacy' | 'modern'; location?: string; locationType?: string } = {},
): { error: Record<string, unknown> } {
  const style = opts.style ?? 'legacy';
  const error: Record<string, unknown> = { code: status, message };
  if (style === 'legacy') {
    const item: Record<string, unknown> = { message, domain: 'global', reason: opts.reason ?? 'invalid' };
    if (opts.location) {
      item.location = opts.location;
      item.locationType = opts.locationType ?? 'parameter';
    }
    error.errors = [item];
  }
  error.status = STATUS_NAMES[status] ?? 'UNKNOWN';
  return { error };
}

export function sendGoogleError(
  reply: FastifyReply,
  status: number,
  message: string,
  opts?: Parameters<typeof googleErrorBody>[2],
): FastifyReply {
  return reply
    .code(status)
    .type('application/json; charset=UTF-8')
    .send(googleErrorBody(status, message, opts));
}

/**
 * Replaces the scope's JSON parser with one that reads an empty body as no body: Google accepts a
 * DELETE or POST sent with a JSON content type and nothing in it, where Fastify would answer 400.
 */
export function acceptEmptyJson(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      const error = new Error('Invalid JSON payload received.') as Error & { statusCode: number };
      error.statusCode = 400;
      done(error, undefined);
    }
  });
}
