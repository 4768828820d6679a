import { createHash, createHmac } from 'node:crypto';
import type { ProviderContext } from '../../core/types.js';
import type { HubSpotState, Portal } from './store.js';

/** What an app's webhook settings say (the developer account's Webhooks page, or its API). */
export interface AppWebhookSettings {
  targetUrl: string;
  /** contact.creation, contact.propertyChange, contact.deletion, company.*, deal.* */
  eventTypes: string[];
}

interface Seen {
  updatedAt: number;
  archived: boolean;
  properties: Map<string, string>;
}

/** Object types with webhook events, by their event prefix. */
const TYPES = [
  ['contacts', 'contact'],
  ['companies', 'company'],
  ['deals', 'deal'],
] as const;

/** HubSpot batches up to 100 events a request. */
const BATCH = 100;

/**
 * Sets an app's webhook settings (its client id): HubSpot then POSTs the CRM events of every
 * account that installed the app to targetUrl, signed (X-HubSpot-Signature-v3: base64 HMAC-SHA256
 * of method + URI + body + X-HubSpot-Request-Timestamp, keyed with the app's client secret; v1
 * beside it for older receivers). Records as they are now are the starting point.
 */
export function configureAppWebhooks(
  state: HubSpotState,
  clientId: string,
  settings: AppWebhookSettings,
): void {
  state.appWebhooks.set(clientId, { ...settings, eventTypes: [...settings.eventTypes] });
  for (const portal of state.portals.values()) snapshot(state, portal);
}

/** After a write: what changed in each portal since it was last looked at, to the apps installed there. */
export function deliverAppWebhooks(ctx: ProviderContext, state: HubSpotState): void {
  if (!state.appWebhooks.size) return;
  for (const portal of state.portals.values()) {
    const changes = diff(state, portal, ctx.clock());
    if (!changes.length) continue;
    for (const [clientId, settings] of state.appWebhooks) {
      if (!ctx.hasGrant(clientId, portal.user.id)) continue;
      const secret = ctx.client(clientId)?.clientSecret;
      if (!secret) continue;
      const events = changes
        .filter((c) => settings.eventTypes.includes(c.subscriptionType))
        .map((c) => ({
          eventId: ++state.webhookEventSeq,
          subscriptionId: subscriptionIdOf(clientId, c.subscriptionType),
          portalId: portal.hubId,
          appId: appIdOf(clientId),
          attemptNumber: 0,
          changeSource: 'CRM',
          ...c,
        }));
      for (let i = 0; i < events.length; i += BATCH)
        send(settings.targetUrl, secret, events.slice(i, i + BATCH));
    }
  }
}

function send(targetUrl: string, secret: string, events: unknown[]): void {
  const body = JSON.stringify(events);
  const timestamp = String(Date.now());
  const v3 = createHmac('sha256', secret).update(`POST${targetUrl}${body}${timestamp}`).digest('base64');
  const v1 = createHash('sha256').update(`${secret}${body}`).digest('hex');
  fetch(targetUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'X-HubSpot-Signature-v3': v3,
      'X-HubSpot-Request-Timestamp': timestamp,
      'X-HubSpot-Signature': v1,
      'X-HubSpot-Signature-Version': 'v1',
    },
    body,
    signal: AbortSignal.timeout(10_000),
  })
    .then((res) => res.body?.cancel())
    .catch(() => {});
}

type Change = {
  subscriptionType: string;
  objectId: number;
  occurredAt: number;
  changeFlag?: string;
  propertyName?: string;
  propertyValue?: string;
};

function diff(state: HubSpotState, portal: Portal, now: number): Change[] {
  const seen = seenOf(state, portal);
  const out: Change[] = [];
  for (const [type, prefix] of TYPES) {
    for (const record of portal.objects[type].values()) {
      const key = `${type}:${record.id}`;
      const before = seen.get(key);
      const objectId = Number(record.id);
      if (before && before.updatedAt === record.updatedAt && before.archived === record.archived) continue;
      if (!before && !record.archived) {
        out.push({
          subscriptionType: `${prefix}.creation`,
          objectId,
          occurredAt: record.createdAt,
          changeFlag: 'NEW',
        });
      } else if (before && record.archived && !before.archived) {
        out.push({
          subscriptionType: `${prefix}.deletion`,
          objectId,
          occurredAt: now,
          changeFlag: 'DELETED',
        });
      } else if (before) {
        for (const [name, value] of record.properties) {
          if (
            before.properties.get(name) === value ||
            name.startsWith('hs_lastmodified') ||
            name === 'lastmodifieddate'
          )
            continue;
          out.push({
            subscriptionType: `${prefix}.propertyChange`,
            objectId,
            occurredAt: record.updatedAt,
            propertyName: name,
            propertyValue: value,
          });
        }
      }
      seen.set(key, {
        updatedAt: record.updatedAt,
        archived: record.archived,
        properties: new Map(record.properties),
      });
    }
  }
  return out;
}

function snapshot(state: HubSpotState, portal: Portal): void {
  const seen = seenOf(state, portal);
  seen.clear();
  for (const [type] of TYPES) {
    for (const r of portal.objects[type].values()) {
      seen.set(`${type}:${r.id}`, {
        updatedAt: r.updatedAt,
        archived: r.archived,
        properties: new Map(r.properties),
      });
    }
  }
}

function seenOf(state: HubSpotState, portal: Portal): Map<string, Seen> {
  let seen = state.webhookSeen.get(portal.user.id);
  if (!seen) {
    seen = new Map();
    state.webhookSeen.set(portal.user.id, seen);
  }
  return seen;
}

const number = (text: string, mod: number) =>
  Number.parseInt(createHash('sha256').update(text).digest('hex').slice(0, 8), 16) % mod;
const appIdOf = (clientId: string) => 1_000_000 + number(clientId, 9_000_000);
const subscriptionIdOf = (clientId: string, type: string) => 100_000 + number(`${clientId}/${type}`, 900_000);
