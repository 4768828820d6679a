import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { type GraphCall, permits } from './call.js';
import { handleDrive } from './drive-items.js';
import {
  invalidRequest,
  itemNotFound,
  methodNotAllowed,
  type sendGraphAuthError,
  sendGraphError,
  unknownSegment,
} from './errors.js';
import { revokeSignInSessions, sendMe } from './me.js';
import type { MicrosoftState } from './model.js';
import { followedSites, resolveSite, searchSites, sendDriveList, sendSite, sendSiteList } from './sites.js';
import { handleSubscriptions } from './subscriptions.js';

const FIXED_PATHS = [
  '/v1.0/me',
  '/v1.0/me/followedSites',
  '/v1.0/me/revokeSignInSessions',
  '/v1.0/me/drive',
  '/v1.0/me/drives',
  '/v1.0/sites',
  '/v1.0/subscriptions',
  '/v1.0/sites/root',
  '/v1.0/sites/root/drive',
  '/v1.0/sites/root/drive/root/children',
  '/v1.0/me/drive/root/children',
];

/** Uploads may be up to ~1 GiB; leave headroom. */
const UPLOAD_BODY_LIMIT = 2 * 1024 * 1024 * 1024;

function querySingles(req: FastifyRequest): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') out[key] = first;
  }
  return out;
}

/** `/v1.0/sites/host:/sites/x:/drive` → ["sites", "host:", "sites", "x:", "drive"], each decoded. */
function splitPath(rawPath: string): string[] | undefined {
  const parts = rawPath.split('/');
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  try {
    return parts.map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
}

function dispatch(call: GraphCall, segments: string[]): FastifyReply | Promise<FastifyReply> {
  const { req, reply } = call;
  const method = req.method;
  const [head, second] = segments;
  if (head === undefined) return unknownSegment(req, reply, '');
  if (head === 'me') {
    if (second === undefined) return method === 'GET' ? sendMe(call) : methodNotAllowed(req, reply);
    if (second === 'drive') {
      const drive = call.tenant.drives.get(call.tenant.personalDriveId)!;
      return handleDrive(call, drive, segments, 2);
    }
    if (second === 'drives' && segments.length === 2) {
      return method === 'GET' ? sendDriveList(call, call.tenant.personalSite) : methodNotAllowed(req, reply);
    }
    if (segments.length > 2) return unknownSegment(req, reply, segments[2]!);
    if (second === 'followedSites') {
      if (method !== 'GET') return methodNotAllowed(req, reply);
      return permits(call.token, 'read')
        ? followedSites(call)
        : sendGraphError(req, reply, 403, 'accessDenied', 'Access denied');
    }
    if (second === 'revokeSignInSessions') {
      return method === 'POST' ? revokeSignInSessions(call) : methodNotAllowed(req, reply);
    }
    return unknownSegment(req, reply, second);
  }
  if (head === 'sites') {
    if (second === undefined) return method === 'GET' ? searchSites(call) : methodNotAllowed(req, reply);
    if (!permits(call.token, 'read')) return sendGraphError(req, reply, 403, 'accessDenied', 'Access denied');
    const lookup = resolveSite(call, segments, 1);
    if (!lookup.ok) return lookup.send();
    const { site, next } = lookup;
    const sub = segments[next];
    if (sub === undefined) return method === 'GET' ? sendSite(call, site) : methodNotAllowed(req, reply);
    if (sub === 'drive') {
      const drive = call.tenant.drives.get(site.driveIds[0] ?? '');
      return drive ? handleDrive(call, drive, segments, next + 1) : itemNotFound(req, reply);
    }
    if (sub === 'drives') {
      const driveId = segments[next + 1];
      if (driveId === undefined)
        return method === 'GET' ? sendDriveList(call, site) : methodNotAllowed(req, reply);
      const drive = site.driveIds.includes(driveId) ? call.tenant.drives.get(driveId) : undefined;
      return drive ? handleDrive(call, drive, segments, next + 2) : itemNotFound(req, reply);
    }
    if (sub === 'sites' && segments.length === next + 1) {
      return method === 'GET' ? sendSiteList(call, []) : methodNotAllowed(req, reply);
    }
    return unknownSegment(req, reply, sub);
  }
  if (head === 'subscriptions') return handleSubscriptions(call, segments);
  if (head === 'drives') {
    if (second === undefined)
      return invalidRequest(req, reply, 'Listing drives requires a site, group or user.');
    const drive = call.tenant.drives.get(second);
    return drive ? handleDrive(call, drive, segments, 2) : itemNotFound(req, reply);
  }
  return unknownSegment(req, reply, head);
}

/**
 * Graph v1.0 as one catch-all route: its OData addressing (`root:/path:/content`, composite site
 * ids, `host:/path:`) does not fit a route table, so the path is parsed here segment by segment.
 */
export function registerGraphRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => MicrosoftState,
  sendAuthError: typeof sendGraphAuthError,
): void {
  // Bodies reach handlers as the raw stream: uploads of any Content-Type are stored as sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  const handler = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const auth = ctx.authenticate(req);
    if (!auth.ok) return sendAuthError(reply, auth.reason);
    const state = getState();
    const tenant = state.tenants.get(auth.user.id);
    if (!tenant) return sendAuthError(reply, 'unknown');
    const rawUrl = req.url.split('?')[0] ?? '';
    const path = rawUrl.slice(rawUrl.indexOf('/v1.0/'));
    const segments = splitPath(path.slice('/v1.0/'.length));
    if (!segments) return invalidRequest(req, reply, 'The request URI is not valid.');
    const call: GraphCall = {
      req,
      reply,
      ctx,
      state,
      tenant,
      token: auth.token,
      base: ctx.publicBase(req),
      query: querySingles(req),
      path,
    };
    return dispatch(call, segments);
  };

  // Fixed paths get routes of their own only so the request counters name them; the catch-all
  // answers everything, these included.
  for (const url of [...FIXED_PATHS, '/v1.0/*']) {
    app.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url,
      bodyLimit: UPLOAD_BODY_LIMIT,
      handler,
    });
  }
}
