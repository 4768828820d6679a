import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenRecord, ProviderContext } from '../../core/types.js';
import { receiveBytes, receiveJson } from './body.js';
import { type GraphCall, metadata, sendJson } from './call.js';
import { signTempAuth, verifyTempAuth } from './download.js';
import { invalidRequest, itemNotFound, sendGraphError } from './errors.js';
import { type Drive, type DriveItem, graphDate, type MicrosoftState, type UploadSession } from './model.js';
import { QuickXorHash } from './quick-xor-hash.js';
import { commitUpload, planUpload } from './uploads.js';

/** A session stays open this long after its last fragment. */
const SESSION_IDLE_MS = 60 * 60 * 1000;
const UPLOAD_BODY_LIMIT = 2 * 1024 * 1024 * 1024;
const SESSION_PATH = '/_api/v2.0/drives/:driveId/items/:itemId/uploadSession';

function sessionStatus(session: UploadSession): Record<string, unknown> {
  return {
    expirationDateTime: graphDate(session.expiresAt),
    nextExpectedRanges: [
      session.total === undefined ? `${session.received}-` : `${session.received}-${session.total - 1}`,
    ],
  };
}

/**
 * `POST …/createUploadSession`: opens a resumable upload and hands out its `uploadUrl`, a
 * pre-authenticated SharePoint URL (no Authorization header) that takes the file in ranges.
 */
export async function createUploadSession(
  call: GraphCall,
  drive: Drive,
  base: DriveItem,
  path: string[] | undefined,
): Promise<FastifyReply> {
  const parsed = await receiveJson(call.req);
  if (!parsed.ok) {
    return invalidRequest(call.req, call.reply, 'Unable to read JSON request payload.');
  }
  const item = (parsed.value as { item?: Record<string, unknown> } | undefined)?.item ?? {};
  const behavior =
    item['@microsoft.graph.conflictBehavior'] ?? call.query['@microsoft.graph.conflictBehavior'];
  // Refuse now what the final fragment would be refused for (a clash under `fail`, a bad name).
  const planned = planUpload(call, drive, base, path, behavior);
  if (!planned.ok) return planned.send();
  const id = call.ctx.randomId(16);
  const session: UploadSession = {
    id,
    userId: call.tenant.user.id,
    driveId: drive.id,
    baseId: base.id,
    path,
    conflictBehavior: behavior,
    chunks: [],
    hash: new QuickXorHash(),
    received: 0,
    expiresAt: call.ctx.clock() + SESSION_IDLE_MS,
  };
  call.state.uploadSessions.set(id, session);
  const tempauth = signTempAuth(call.state, {
    s: id,
    exp: Math.floor(session.expiresAt / 1000) + 7 * 86_400,
  });
  const overwrite = planned.plan.behavior === 'replace' ? 'True' : 'False';
  const rename = planned.plan.behavior === 'rename' ? 'True' : 'False';
  const uploadUrl = `${call.base}/_api/v2.0/drives/${drive.id}/items/${base.id}/uploadSession?guid='${id}'&overwrite=${overwrite}&rename=${rename}&dc=0&tempauth=${tempauth}`;
  return sendJson(call, 200, {
    '@odata.context': metadata(call, 'microsoft.graph.uploadSession'),
    uploadUrl,
    ...sessionStatus(session),
  });
}

/** The upload URL carries no bearer token; handlers answer as the session's owner. */
function ownerToken(session: UploadSession): AccessTokenRecord {
  return {
    token: '',
    grantId: '',
    clientId: '',
    userId: session.userId,
    scopes: [],
    expiresAt: null,
    revoked: false,
  };
}

function sessionNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return itemNotFound(req, reply, 'The upload session was not found or has expired.');
}

export function registerUploadSessionRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => MicrosoftState,
): void {
  app.route({
    method: ['GET', 'PUT', 'DELETE'],
    url: SESSION_PATH,
    bodyLimit: UPLOAD_BODY_LIMIT,
    handler: async (req, reply) => {
      const state = getState();
      const tempauth = (req.query as Record<string, string | undefined>).tempauth ?? '';
      const claims = verifyTempAuth(state, tempauth);
      if (!claims || typeof claims.s !== 'string') {
        return reply
          .code(401)
          .send({ error_description: 'Invalid JWT token. The token signature is not valid.' });
      }
      const session = state.uploadSessions.get(claims.s);
      if (!session || session.expiresAt <= ctx.clock()) {
        if (session) state.uploadSessions.delete(session.id);
        return sessionNotFound(req, reply);
      }
      const tenant = state.tenants.get(session.userId);
      const drive = tenant?.drives.get(session.driveId);
      if (!tenant || !drive) return sessionNotFound(req, reply);
      const call: GraphCall = {
        req,
        reply,
        ctx,
        state,
        tenant,
        token: ownerToken(session),
        base: ctx.publicBase(req),
        query: {},
        path: '',
      };
      if (req.method === 'GET') return sendJson(call, 200, sessionStatus(session));
      if (req.method === 'DELETE') {
        state.uploadSessions.delete(session.id);
        return reply.code(204).send();
      }
      return receiveFragment(call, session, drive);
    },
  });
}

/** `PUT {uploadUrl}` with `Content-Range: bytes a-b/total`: 202 until the last byte, then the item. */
async function receiveFragment(call: GraphCall, session: UploadSession, drive: Drive): Promise<FastifyReply> {
  const { req, reply } = call;
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers['content-range'] ?? '');
  if (!range) {
    return invalidRequest(
      req,
      reply,
      'The Content-Range header is missing or malformed; expected bytes {start}-{end}/{total}.',
    );
  }
  const start = Number(range[1]);
  const end = Number(range[2]);
  const total = Number(range[3]);
  if (end < start || end >= total)
    return invalidRequest(req, reply, 'The Content-Range header is not valid.');
  if (session.total !== undefined && session.total !== total) {
    return invalidRequest(
      req,
      reply,
      'The declared file size does not match the size given earlier in the session.',
    );
  }
  if (start !== session.received) {
    return sendGraphError(
      req,
      reply,
      416,
      'invalidRange',
      start < session.received
        ? 'The uploaded fragment overlaps with data that has already been received.'
        : `The uploaded fragment starts after the expected range; expected a fragment starting at ${session.received}.`,
    );
  }
  const fragment = await receiveBytes(req);
  if (fragment.size !== end - start + 1) {
    return invalidRequest(
      req,
      reply,
      'The number of bytes in the request body does not match the Content-Range header.',
    );
  }
  for (const chunk of fragment.chunks) session.hash.update(chunk);
  session.chunks.push(...fragment.chunks);
  session.received += fragment.size;
  session.total = total;
  session.expiresAt = call.ctx.clock() + SESSION_IDLE_MS;
  if (session.received < total) return sendJson(call, 202, sessionStatus(session));

  call.state.uploadSessions.delete(session.id);
  const base = drive.items.get(session.baseId);
  if (!base) return itemNotFound(req, reply);
  const planned = planUpload(call, drive, base, session.path, session.conflictBehavior);
  if (!planned.ok) return planned.send();
  const received = { chunks: session.chunks, size: session.received, quickXorHash: session.hash.digest() };
  return commitUpload(call, drive, planned.plan, received, undefined);
}
