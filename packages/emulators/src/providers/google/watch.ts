import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { resolveCalendar } from './calendar/api.js';
import { authorizeGoogle, GOOGLE_API_SCOPES } from './scopes.js';
import { acceptEmptyJson, sendGoogleError } from './shared.js';
import type { GoogleDataOf, GoogleState, GoogleUserData } from './user-data.js';

/** A watch channel (Calendar events.watch, Drive changes.watch), as Google keeps it. */
export interface WatchChannel {
  id: string;
  resourceId: string;
  resourceUri: string;
  token?: string;
  address: string;
  /** Epoch ms. */
  expiration: number;
  userId: string;
  watches: { kind: 'calendar'; calendarId: string } | { kind: 'drive' };
  /** X-Goog-Message-Number of the last notification sent. */
  messageNumber: number;
  /** What the watched resource looked like at the last notification. */
  fingerprint: string;
}

/** Google grants at most a week; a channel asked for without an expiration gets an hour. */
const MAX_MS = 7 * 24 * 3600_000;
const DEFAULT_MS = 3600_000;

/**
 * Push notifications: events.watch and changes.watch open a channel, channels.stop ends it. Google
 * POSTs to the channel's address (no body): a `sync` message first, then, after each change to the
 * watched resource, `exists` (Calendar) or `change` (Drive's change log), with X-Goog-Channel-ID,
 * X-Goog-Channel-Token, X-Goog-Channel-Expiration, X-Goog-Resource-ID, X-Goog-Resource-URI,
 * X-Goog-Resource-State and X-Goog-Message-Number. An expired channel sends nothing more.
 */
export function registerWatchRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  dataOf: GoogleDataOf,
  getState: () => GoogleState,
): void {
  app.register(async (scope) => {
    acceptEmptyJson(scope);
    scope.post<{ Params: { calendarId: string } }>(
      '/calendar/v3/calendars/:calendarId/events/watch',
      async (req, reply) => {
        const who = authorizeGoogle(ctx, req, reply, {
          anyOf: GOOGLE_API_SCOPES.calendar.read,
          service: 'calendar-json.googleapis.com',
          method: 'calendar.v3.Events.Watch',
        });
        if (!who) return reply;
        const calendar = resolveCalendar(dataOf(who.user.id).calendar, who.user, req.params.calendarId);
        if (!calendar) return sendGoogleError(reply, 404, 'Not Found', { reason: 'notFound' });
        const base = ctx.publicBase(req);
        return openChannel(ctx, getState, req, reply, {
          userId: who.user.id,
          watches: { kind: 'calendar', calendarId: calendar.id },
          resourceUri: `${base}/calendar/v3/calendars/${encodeURIComponent(req.params.calendarId)}/events?alt=json`,
        });
      },
    );
    scope.post('/drive/v3/changes/watch', async (req, reply) => {
      const who = authorizeGoogle(ctx, req, reply, {
        anyOf: GOOGLE_API_SCOPES.drive.read,
        service: 'drive.googleapis.com',
        method: 'drive.changes.watch',
      });
      if (!who) return reply;
      const pageToken = (req.query as { pageToken?: string }).pageToken;
      if (pageToken === undefined) {
        return sendGoogleError(reply, 400, 'Required parameter: pageToken', {
          reason: 'required',
          location: 'pageToken',
        });
      }
      return openChannel(ctx, getState, req, reply, {
        userId: who.user.id,
        watches: { kind: 'drive' },
        resourceUri: `${ctx.publicBase(req)}/drive/v3/changes?alt=json&pageToken=${encodeURIComponent(pageToken)}`,
      });
    });
    for (const path of ['/calendar/v3/channels/stop', '/drive/v3/channels/stop']) {
      scope.post(path, async (req, reply) => {
        const who = ctx.authenticate(req);
        if (!who.ok) return sendGoogleError(reply, 401, 'Invalid Credentials', { reason: 'authError' });
        const body = (req.body ?? {}) as { id?: unknown; resourceId?: unknown };
        const channel = typeof body.id === 'string' ? getState().channels.get(body.id) : undefined;
        if (!channel || channel.resourceId !== body.resourceId || channel.userId !== who.user.id) {
          return sendGoogleError(reply, 404, `Channel '${String(body.id)}' not found for project`, {
            reason: 'notFound',
          });
        }
        getState().channels.delete(channel.id);
        return reply.code(204).send();
      });
    }
  });
}

function openChannel(
  ctx: ProviderContext,
  getState: () => GoogleState,
  req: FastifyRequest,
  reply: FastifyReply,
  at: Pick<WatchChannel, 'userId' | 'watches' | 'resourceUri'>,
): FastifyReply {
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (typeof body.id !== 'string' || !/^[A-Za-z0-9\-_+/=]{1,64}$/.test(body.id)) {
    return sendGoogleError(reply, 400, 'Invalid channel id', { reason: 'invalid', location: 'id' });
  }
  if (body.type !== 'web_hook' && body.type !== 'webhook') {
    return sendGoogleError(reply, 400, `Invalid value for type: ${String(body.type)}`, {
      reason: 'invalid',
    });
  }
  if (typeof body.address !== 'string' || !acceptedAddress(body.address)) {
    return sendGoogleError(reply, 400, `WebHook callback must be HTTPS: ${String(body.address)}`, {
      reason: 'push.webhookUrlNotHttps',
    });
  }
  const state = getState();
  if (state.channels.has(body.id)) {
    return sendGoogleError(reply, 400, `Channel id ${body.id} not unique`, {
      reason: 'channelIdNotUnique',
    });
  }
  const now = ctx.clock();
  const asked = body.expiration === undefined ? now + DEFAULT_MS : Number(body.expiration);
  const channel: WatchChannel = {
    ...at,
    id: body.id,
    resourceId: ctx.randomId(14),
    ...(typeof body.token === 'string' ? { token: body.token } : {}),
    address: body.address,
    expiration: Math.min(Number.isFinite(asked) ? asked : now + DEFAULT_MS, now + MAX_MS),
    messageNumber: 0,
    fingerprint: fingerprint(state.byUser.get(at.userId)!, at.watches),
  };
  state.channels.set(channel.id, channel);
  setImmediate(() => send(ctx, channel, 'sync'));
  return reply.send({
    kind: 'api#channel',
    id: channel.id,
    resourceId: channel.resourceId,
    resourceUri: channel.resourceUri,
    ...(channel.token === undefined ? {} : { token: channel.token }),
    expiration: String(channel.expiration),
  });
}

/** After a write: every live channel whose resource changed is notified; expired ones are dropped. */
export function notifyWatchers(ctx: ProviderContext, state: GoogleState): void {
  const now = ctx.clock();
  for (const channel of state.channels.values()) {
    if (channel.expiration <= now) {
      state.channels.delete(channel.id);
      continue;
    }
    const data = state.byUser.get(channel.userId);
    if (!data) continue;
    const print = fingerprint(data, channel.watches);
    if (print === channel.fingerprint) continue;
    channel.fingerprint = print;
    send(ctx, channel, channel.watches.kind === 'calendar' ? 'exists' : 'change');
  }
}

function send(_ctx: ProviderContext, channel: WatchChannel, state: 'sync' | 'exists' | 'change'): void {
  channel.messageNumber += 1;
  const headers: Record<string, string> = {
    'X-Goog-Channel-ID': channel.id,
    'X-Goog-Channel-Expiration': new Date(channel.expiration).toUTCString(),
    'X-Goog-Resource-ID': channel.resourceId,
    'X-Goog-Resource-URI': channel.resourceUri,
    'X-Goog-Resource-State': state,
    'X-Goog-Message-Number': String(channel.messageNumber),
  };
  if (channel.token !== undefined) headers['X-Goog-Channel-Token'] = channel.token;
  fetch(channel.address, { method: 'POST', headers, signal: AbortSignal.timeout(10_000) })
    .then((res) => res.body?.cancel())
    .catch(() => {});
}

function fingerprint(data: GoogleUserData, watches: WatchChannel['watches']): string {
  if (watches.kind === 'drive') return String(data.driveChanges.seq);
  const events = data.calendar.events.get(watches.calendarId);
  const hash = createHash('sha256');
  for (const [id, stored] of events ?? []) {
    hash.update(`${id}:${String(stored.resource.etag)}`);
    for (const x of stored.exceptions.values()) hash.update(`/${String(x.etag)}`);
  }
  return hash.digest('base64url');
}

/** Google takes HTTPS addresses only; the emulator takes plain HTTP on loopback too. */
function acceptedAddress(address: string): boolean {
  try {
    const url = new URL(address);
    if (url.protocol === 'https:') return true;
    return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}
