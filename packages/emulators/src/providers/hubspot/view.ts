import {
  DEFAULT_PROPERTIES,
  LAST_MODIFIED_PROPERTY,
  type ObjectTypeName,
  propertyDefinition,
  SINGULAR,
} from './schema.js';
import { type CrmRecord, isoTime, type Portal } from './store.js';

/** The JSON HubSpot returns for a record (`SimplePublicObject` / `…WithAssociations`). */
export interface RecordJson {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  archivedAt?: string;
  associations?: Record<string, { results: Array<{ id: string; type: string }> }>;
}

/**
 * Which properties a response carries: the requested ones that exist (unknown names are silently
 * dropped, as at HubSpot) plus the three system properties HubSpot always adds; or the defaults.
 */
export function selectedProperties(type: ObjectTypeName, requested: string[] | undefined): string[] {
  if (!requested || requested.length === 0) return DEFAULT_PROPERTIES[type];
  const names = new Set<string>();
  for (const name of requested) if (propertyDefinition(type, name)) names.add(name);
  names.add('createdate');
  names.add(LAST_MODIFIED_PROPERTY[type]);
  names.add('hs_object_id');
  return [...names].sort();
}

export function recordJson(
  type: ObjectTypeName,
  record: CrmRecord,
  requested: string[] | undefined,
  associationTypes: ObjectTypeName[] = [],
): RecordJson {
  const properties: Record<string, string | null> = {};
  for (const name of selectedProperties(type, requested))
    properties[name] = record.properties.get(name) ?? null;
  const json: RecordJson = {
    id: record.id,
    properties,
    createdAt: isoTime(record.createdAt),
    updatedAt: isoTime(record.updatedAt),
    archived: record.archived,
  };
  if (record.archivedAt !== undefined) json.archivedAt = isoTime(record.archivedAt);
  const associations: NonNullable<RecordJson['associations']> = {};
  for (const other of associationTypes) {
    const ids = [...(record.associations.get(other) ?? [])].sort((a, b) => Number(a) - Number(b));
    if (ids.length === 0) continue;
    associations[other] = {
      results: ids.map((id) => ({ id, type: `${SINGULAR[type]}_to_${SINGULAR[other]}` })),
    };
  }
  if (Object.keys(associations).length > 0) json.associations = associations;
  return json;
}

/** A record's value of a property as search and idProperty lookups see it. */
export function propertyValue(record: CrmRecord, name: string): string | undefined {
  return record.properties.get(name);
}

export function findByProperty(
  portal: Portal,
  type: ObjectTypeName,
  name: string,
  value: string,
  archived: boolean,
): CrmRecord | undefined {
  const wanted = name === 'email' ? value.toLowerCase() : value;
  for (const record of portal.objects[type].values()) {
    if (record.archived !== archived) continue;
    if (record.properties.get(name) === wanted) return record;
  }
  return undefined;
}
