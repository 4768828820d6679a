import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { receiveJson } from './body.js';
import { type GraphCall, sendJson } from './call.js';
import { invalidRequest, sendGraphError } from './errors.js';
import type { Drive, MicrosoftState } from './model.js';

/** A change-notification subscription, as Graph keeps it. */
export interface GraphSubscription {
  id: string;
  userId: string;
  driveId: string;
  resource: string;
  changeType: string;
  notificationUrl: string;
  lifecycleNotificationUrl?: string;
  clientState?: string;
  /** Epoch ms. */
  expiration: number;
  tenantId: string;
  /** The drive's items when last notified. */
  fingerprint: string;
}

/** Graph keeps a driveItem subscription at most 42,300 minutes. */
const MAX_MINUTES = 42_300;
/** Graph waits this long for the validation answer. */
const VALIDATION_MS = 10_000;

/**
 * `/v1.0/subscriptions`: POST creates one after the validation handshake (Graph POSTs
 * `notificationUrl?validationToken=…` and wants 200 with the token as text/plain within 10 s),
 * GET reads, PATCH renews (expirationDateTime), DELETE ends it. driveItem subscriptions take
 * changeType "updated" only, on a drive's root. After each write to the drive, Graph POSTs
 * `{"value": [changeNotification]}` with the clientState to notificationUrl.
 */
export async function handleSubscriptions(call: GraphCall, segments: string[]): Promise<FastifyReply> {
  const { req, reply, state } = call;
  const id = segments[1];
  if (segments.length > 2) return invalidRequest(req, reply, 'The request URI is not valid.');
  if (id === undefined) {
    if (req.method === 'GET') {
      const mine = [...state.subscriptions.values()].filter((s) => s.userId === call.tenant.user.id);
      return sendJson(call, 200, { value: mine.map((s) => view(call, s)) });
    }
    if (req.method !== 'POST')
      return sendGraphError(req, reply, 405, 'MethodNotAllowed', 'Method not allowed');
    return create(call);
  }
  const sub = state.subscriptions.get(id);
  if (!sub || sub.userId !== call.tenant.user.id || sub.expiration <= call.ctx.clock()) {
    if (sub && sub.expiration <= call.ctx.clock()) state.subscriptions.delete(id);
    return sendGraphError(req, reply, 404, 'ResourceNotFound', `The object was not found.`);
  }
  if (req.method === 'GET') return sendJson(call, 200, view(call, sub));
  if (req.method === 'DELETE') {
    state.subscriptions.delete(id);
    return reply.code(204).send();
  }
  if (req.method === 'PATCH') {
    const body = await receiveJson(req);
    if (!body.ok) return invalidRequest(req, reply, 'Invalid JSON in the request body.');
    const expiration = expirationOf(
      call,
      (body.value as { expirationDateTime?: unknown })?.expirationDateTime,
    );
    if (typeof expiration === 'string') return sendGraphError(req, reply, 400, 'ValidationError', expiration);
    sub.expiration = expiration;
    return sendJson(call, 200, view(call, sub));
  }
  return sendGraphError(req, reply, 405, 'MethodNotAllowed', 'Method not allowed');
}

async function create(call: GraphCall): Promise<FastifyReply> {
  const { req, reply, state, tenant } = call;
  const read = await receiveJson(req);
  if (!read.ok) return invalidRequest(req, reply, 'Invalid JSON in the request body.');
  const body = (read.value ?? {}) as Record<string, unknown>;
  const bad = (message: string) => sendGraphError(req, reply, 400, 'ValidationError', message);
  if (typeof body.notificationUrl !== 'string' || !acceptedUrl(body.notificationUrl)) {
    return bad('The notificationUrl must be an HTTPS URL.');
  }
  if (
    body.lifecycleNotificationUrl !== undefined &&
    (typeof body.lifecycleNotificationUrl !== 'string' || !acceptedUrl(body.lifecycleNotificationUrl))
  ) {
    return bad('The lifecycleNotificationUrl must be an HTTPS URL.');
  }
  if (typeof body.resource !== 'string') return bad('resource is required.');
  const drive = driveOf(call, body.resource);
  if (!drive) return bad(`Resource '${body.resource}' is not supported or not found.`);
  if (body.changeType !== 'updated') {
    return bad(
      `ChangeType '${String(body.changeType)}' is not supported for resource driveItem; use 'updated'.`,
    );
  }
  if (
    body.clientState !== undefined &&
    (typeof body.clientState !== 'string' || body.clientState.length > 128)
  ) {
    return bad('clientState must be a string of at most 128 characters.');
  }
  const expiration = expirationOf(call, body.expirationDateTime);
  if (typeof expiration === 'string') return bad(expiration);
  for (const url of new Set(
    [body.notificationUrl, body.lifecycleNotificationUrl].filter((u) => typeof u === 'string'),
  )) {
    if (!(await validates(url as string))) {
      return bad(
        'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.',
      );
    }
  }
  const sub: GraphSubscription = {
    id: randomUUID(),
    userId: tenant.user.id,
    driveId: drive.id,
    resource: body.resource,
    changeType: 'updated',
    notificationUrl: body.notificationUrl,
    ...(typeof body.lifecycleNotificationUrl === 'string'
      ? { lifecycleNotificationUrl: body.lifecycleNotificationUrl }
      : {}),
    ...(typeof body.clientState === 'string' ? { clientState: body.clientState } : {}),
    expiration,
    tenantId: tenant.user.id,
    fingerprint: fingerprint(drive),
  };
  state.subscriptions.set(sub.id, sub);
  return sendJson(call, 201, view(call, sub));
}

/** After a write: each live subscription whose drive changed is notified; expired ones are dropped. */
export function notifySubscribers(state: MicrosoftState, now: number): void {
  for (const sub of state.subscriptions.values()) {
    if (sub.expiration <= now) {
      state.subscriptions.delete(sub.id);
      continue;
    }
    const drive = state.tenants.get(sub.userId)?.drives.get(sub.driveId);
    if (!drive) continue;
    const print = fingerprint(drive);
    if (print === sub.fingerprint) continue;
    sub.fingerprint = print;
    post(sub.notificationUrl, {
      value: [
        {
          subscriptionId: sub.id,
          subscriptionExpirationDateTime: new Date(sub.expiration).toISOString(),
          changeType: 'updated',
          resource: sub.resource,
          clientState: sub.clientState ?? null,
          tenantId: sub.tenantId,
          resourceData: null,
        },
      ],
    });
  }
}

/**
 * Sends a lifecycle notification (reauthorizationRequired, subscriptionRemoved, missed) for a
 * subscription to its lifecycleNotificationUrl; subscriptionRemoved also ends it, as Graph does.
 */
export function sendLifecycle(
  state: MicrosoftState,
  id: string,
  event: 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed',
): void {
  const sub = state.subscriptions.get(id);
  if (!sub?.lifecycleNotificationUrl) return;
  if (event === 'subscriptionRemoved') state.subscriptions.delete(id);
  post(sub.lifecycleNotificationUrl, {
    value: [
      {
        subscriptionId: sub.id,
        subscriptionExpirationDateTime: new Date(sub.expiration).toISOString(),
        tenantId: sub.tenantId,
        clientState: sub.clientState ?? null,
        lifecycleEvent: event,
      },
    ],
  });
}

function post(url: string, body: unknown): void {
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(VALIDATION_MS),
  })
    .then((res) => res.body?.cancel())
    .catch(() => {});
}

/** The validation handshake: 200 with the token, as text/plain, within ten seconds. */
async function validates(url: string): Promise<boolean> {
  const token = `Validation: Testing client application reachability for subscription Request-Id: ${randomUUID()}`;
  const target = new URL(url);
  target.searchParams.set('validationToken', token);
  try {
    const res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      signal: AbortSignal.timeout(VALIDATION_MS),
    });
    const text = await res.text();
    return (
      res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/plain') && text === token
    );
  } catch {
    return false;
  }
}

function expirationOf(call: GraphCall, value: unknown): number | string {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) return 'expirationDateTime is required and must be a date and time.';
  const now = call.ctx.clock();
  if (ms <= now) return 'Subscription expiration must be in the future.';
  if (ms > now + MAX_MINUTES * 60_000) {
    return `Subscription expiration can only be ${MAX_MINUTES} minutes in the future.`;
  }
  return ms;
}

/** `/drives/{id}/root`, `drives/{id}/root` or `/me/drive/root`: the drive of the user's tenant. */
function driveOf(call: GraphCall, resource: string): Drive | undefined {
  const path = resource.replace(/^\//, '');
  if (path === 'me/drive/root') return call.tenant.drives.get(call.tenant.personalDriveId);
  const m = /^drives\/([^/]+)\/root$/.exec(path);
  return m ? call.tenant.drives.get(m[1]!) : undefined;
}

function view(call: GraphCall, sub: GraphSubscription) {
  return {
    '@odata.context': `${call.base}/v1.0/$metadata#subscriptions/$entity`,
    id: sub.id,
    resource: sub.resource,
    applicationId: call.token.clientId,
    changeType: sub.changeType,
    clientState: sub.clientState ?? null,
    notificationUrl: sub.notificationUrl,
    lifecycleNotificationUrl: sub.lifecycleNotificationUrl ?? null,
    expirationDateTime: new Date(sub.expiration).toISOString(),
    creatorId: sub.userId,
    includeResourceData: false,
    latestSupportedTlsVersion: 'v1_2',
    encryptionCertificate: null,
    encryptionCertificateId: null,
    notificationUrlAppId: null,
  };
}

function fingerprint(drive: Drive): string {
  const hash = createHash('sha256');
  for (const item of drive.items.values()) hash.update(`${item.id}:${item.version}:${item.parentId};`);
  return hash.digest('base64url');
}

function acceptedUrl(address: string): boolean {
  try {
    const url = new URL(address);
    if (url.protocol === 'https:') return true;
    return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}
