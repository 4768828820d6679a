import { Problem } from '../errors/problem.js';
import { EVENTS_CHANNEL } from '../events/outbox.js';
import type { Keyring } from '../secrets/keyring.js';
import { WEBHOOK_PREVIOUS_SECRET, WEBHOOK_SECRET } from '../secrets/sealed-columns.js';
import type { Database } from '../store/db.js';
import { findEvent } from '../store/events.js';
import { newId } from '../store/ids.js';
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listAttempts,
  listEndpoints,
  requeueDelivery,
  updateEndpoint,
  type WebhookEndpointRow,
} from '../store/webhooks.js';
import { checkWebhookUrl } from '../upstream/outbound-guard.js';
import {
  type CreateWebhookBody,
  type ListDeliveriesQuery,
  type ListWebhooksQuery,
  type UpdateWebhookBody,
  type WebhookView,
  webhookView,
} from './schemas.js';
import { generateSecret } from './signer.js';

/** How long the previous secret keeps signing after a rotation, so receivers can switch over. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60_000;

export interface WebhooksDeps {
  db: Database;
  keyring: Keyring;
  /** PORTICO_WEBHOOK_ALLOW_PRIVATE: http and private addresses accepted (local development, tests). */
  allowPrivate: boolean;
}

export interface DeliveryAttemptView {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  delivery_status: string;
  created_at: string;
}

/**
 * Webhook endpoints: where events are sent, which types, and the signing secret (sealed at rest,
 * shown once at creation and at each rotation). Delivery itself is the DeliveryWorker's.
 */
export class WebhookService {
  constructor(private readonly deps: WebhooksDeps) {}

  view(row: WebhookEndpointRow): WebhookView {
    return webhookView(row);
  }

  async create(
    environmentId: string,
    body: CreateWebhookBody,
  ): Promise<{ row: WebhookEndpointRow; secret: string }> {
    const url = await checkWebhookUrl(body.url, this.deps.allowPrivate);
    const id = newId('wh');
    const secret = generateSecret();
    const row = await insertEndpoint(this.deps.db, {
      id,
      environment_id: environmentId,
      url: url.toString(),
      description: body.description ?? null,
      events: body.events,
      enabled: body.enabled ?? true,
      secret: this.deps.keyring.seal(secret, { ...WEBHOOK_SECRET, rowId: id }),
    });
    return { row, secret };
  }

  async get(environmentId: string, id: string): Promise<WebhookEndpointRow> {
    const row = await findEndpoint(this.deps.db, id);
    if (!row || row.environment_id !== environmentId) {
      throw new Problem(
        'webhook_not_found',
        `No webhook endpoint ${id}; list them with GET /api/v1/webhooks or create one with POST /api/v1/webhooks.`,
      );
    }
    return row;
  }

  async list(
    environmentId: string,
    query: ListWebhooksQuery,
  ): Promise<{ data: WebhookView[]; next_page_token: string | null }> {
    const limit = query.page_size ?? 50;
    const after = query.page_token ? decodeToken(query.page_token, /^wh_[0-9A-Za-z]+$/) : undefined;
    const rows = await listEndpoints(this.deps.db, environmentId, {
      ...(after ? { after } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map((r) => this.view(r)),
      next_page_token: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null,
    };
  }

  async update(environmentId: string, id: string, body: UpdateWebhookBody): Promise<WebhookEndpointRow> {
    await this.get(environmentId, id);
    const url = body.url === undefined ? undefined : await checkWebhookUrl(body.url, this.deps.allowPrivate);
    const updated = await updateEndpoint(this.deps.db, id, {
      ...(url ? { url: url.toString() } : {}),
      ...(body.events ? { events: body.events } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    });
    // Deliveries waiting for a re-enabled endpoint resume now rather than at the next poll.
    if (body.enabled) await this.deps.db.notify(EVENTS_CHANNEL, '').catch(() => {});
    return updated ?? this.get(environmentId, id);
  }

  async remove(environmentId: string, id: string): Promise<void> {
    await this.get(environmentId, id);
    await deleteEndpoint(this.deps.db, id);
  }

  /**
   * A new signing secret, returned once. The previous one keeps signing for 24 hours (both
   * signatures are sent), so receivers can switch without dropping a delivery.
   */
  async rotateSecret(
    environmentId: string,
    id: string,
  ): Promise<{ row: WebhookEndpointRow; secret: string }> {
    const row = await this.get(environmentId, id);
    const current = this.deps.keyring.open(row.secret, { ...WEBHOOK_SECRET, rowId: id });
    const secret = generateSecret();
    const updated = await updateEndpoint(this.deps.db, id, {
      secret: this.deps.keyring.seal(secret, { ...WEBHOOK_SECRET, rowId: id }),
      previousSecret: this.deps.keyring.seal(current, { ...WEBHOOK_PREVIOUS_SECRET, rowId: id }),
      previousSecretExpiresAt: new Date(Date.now() + PREVIOUS_SECRET_TTL_MS),
    });
    return { row: updated ?? row, secret };
  }

  /** The delivery log of an endpoint, newest attempt first. */
  async deliveries(
    environmentId: string,
    id: string,
    query: ListDeliveriesQuery,
  ): Promise<{ data: DeliveryAttemptView[]; next_page_token: string | null }> {
    await this.get(environmentId, id);
    const limit = query.page_size ?? 50;
    const before = query.page_token ? decodeToken(query.page_token, /^[0-9]{1,18}$/) : undefined;
    const rows = await listAttempts(this.deps.db, id, {
      ...(query.event_id ? { eventId: query.event_id } : {}),
      ...(before ? { before } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map((r) => ({
        id: r.id,
        event_id: r.event_id,
        event_type: r.event_type,
        attempt: r.attempt,
        status_code: r.status_code,
        duration_ms: r.duration_ms,
        error: r.error,
        response_body: r.response_body,
        delivery_status: r.delivery_status,
        created_at: r.created_at.toISOString(),
      })),
      next_page_token: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null,
    };
  }

  /** Sends an event to the endpoint again, whatever became of earlier attempts. */
  async retry(
    environmentId: string,
    id: string,
    eventId: string,
  ): Promise<{ event_id: string; status: 'pending' }> {
    const endpoint = await this.get(environmentId, id);
    if (!endpoint.enabled) {
      throw new Problem(
        'webhook_disabled',
        `Webhook endpoint ${id} is disabled${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}; enable it with PATCH /api/v1/webhooks/${id} {"enabled": true}, then retry.`,
      );
    }
    const event = await findEvent(this.deps.db, eventId);
    if (
      !event ||
      event.environment_id !== environmentId ||
      !(await requeueDelivery(this.deps.db, id, eventId))
    ) {
      throw new Problem(
        'event_not_found',
        `No event ${eventId}; list events with GET /api/v1/events (they are kept for PORTICO_EVENT_RETENTION_DAYS).`,
      );
    }
    await this.deps.db.notify(EVENTS_CHANNEL, '').catch(() => {});
    return { event_id: eventId, status: 'pending' };
  }
}

function decodeToken(token: string, shape: RegExp): string {
  const value = Buffer.from(token, 'base64url').toString('utf8');
  if (!shape.test(value)) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the first page.',
      {
        errors: [{ path: '/page_token', message: 'is not a valid page token' }],
      },
    );
  }
  return value;
}
