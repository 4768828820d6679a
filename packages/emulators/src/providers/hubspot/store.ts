import type { EmulatedUser } from '../../core/types.js';
import { LAST_MODIFIED_PROPERTY, type ObjectTypeName } from './schema.js';

/** One CRM record. Property values are strings, as HubSpot stores and returns them. */
export interface CrmRecord {
  id: string;
  properties: Map<string, string>;
  createdAt: number;
  updatedAt: number;
  archived: boolean;
  archivedAt?: number;
  /** Associated record ids per object type (kept symmetric by `associate`). */
  associations: Map<ObjectTypeName, Set<string>>;
}

export interface OwnerTeam {
  id: string;
  name: string;
  primary: boolean;
}

export interface Owner {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  userId: number;
  createdAt: number;
  updatedAt: number;
  archived: boolean;
  teams: OwnerTeam[];
}

/** One HubSpot account (hub) and everything in it. Each emulated user owns one. */
export interface Portal {
  user: EmulatedUser;
  hubId: number;
  /** When the requests of the last 10 seconds arrived (rate-limit.ts). */
  recentCalls: number[];
  /** Requests answered 429 so far (for tests and the sandbox's operators). */
  rateLimited: number;
  hubDomain: string;
  owners: Owner[];
  objects: Record<ObjectTypeName, Map<string, CrmRecord>>;
  /** Record ids are numeric and unique within the portal across object types. */
  nextId: number;
}

export interface HubSpotState {
  portals: Map<string, Portal>;
  /** Apps' webhook settings (webhooks.ts), by client id. */
  appWebhooks: Map<string, import('./webhooks.js').AppWebhookSettings>;
  /** What webhooks last saw of each portal's records, by user id. */
  webhookSeen: Map<
    string,
    Map<string, { updatedAt: number; archived: boolean; properties: Map<string, string> }>
  >;
  webhookEventSeq: number;
}

export function allocateId(portal: Portal): string {
  const id = String(portal.nextId);
  portal.nextId += 1;
  return id;
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Keeps the HubSpot-maintained properties in step with the record's timestamps. */
export function stampSystemProperties(type: ObjectTypeName, record: CrmRecord): void {
  record.properties.set('hs_object_id', record.id);
  if (!record.properties.has('createdate')) record.properties.set('createdate', isoTime(record.createdAt));
  record.properties.set(LAST_MODIFIED_PROPERTY[type], isoTime(record.updatedAt));
}

export function associate(
  portal: Portal,
  fromType: ObjectTypeName,
  fromId: string,
  toType: ObjectTypeName,
  toId: string,
): void {
  const from = portal.objects[fromType].get(fromId);
  const to = portal.objects[toType].get(toId);
  if (!from || !to) return;
  linkOneWay(from, toType, toId);
  linkOneWay(to, fromType, fromId);
}

/** Removes the link between two records from both ends. */
export function dissociate(
  portal: Portal,
  fromType: ObjectTypeName,
  fromId: string,
  toType: ObjectTypeName,
  toId: string,
): void {
  portal.objects[fromType].get(fromId)?.associations.get(toType)?.delete(toId);
  portal.objects[toType].get(toId)?.associations.get(fromType)?.delete(fromId);
}

function linkOneWay(record: CrmRecord, type: ObjectTypeName, id: string): void {
  let ids = record.associations.get(type);
  if (!ids) {
    ids = new Set();
    record.associations.set(type, ids);
  }
  ids.add(id);
}

/** Active records in id order: HubSpot lists and pages by record id. */
export function activeRecords(portal: Portal, type: ObjectTypeName, archived = false): CrmRecord[] {
  return [...portal.objects[type].values()]
    .filter((r) => r.archived === archived)
    .sort((a, b) => Number(a.id) - Number(b.id));
}
