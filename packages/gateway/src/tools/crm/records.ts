import type { ProviderClient } from '../../accounts/provider-client.js';
import { paged } from '../pagination.js';
import { parseFilterGroups } from './filters.js';
import {
  type CrmObjectType,
  type CrmPage,
  type CrmRecord,
  type PropertyValue,
  pageSize,
  propertyText,
  splitProperties,
} from './shared.js';

// Reading and writing records through HubSpot's CRM v3 object endpoints: search, list, get, create, update.

/** `-createdate` / `createdate`: one sort property, descending with a leading minus. */
export const SORT_PATTERN = '^-?[A-Za-z0-9_]+$';

export interface SearchInput {
  query?: string;
  filterGroups?: string;
  properties?: string;
  sort?: string;
  limit?: number;
  after?: string;
}

export async function searchRecords(
  client: ProviderClient,
  type: CrmObjectType,
  input: SearchInput,
): Promise<Record<string, unknown>> {
  const parsed = input.filterGroups === undefined ? undefined : parseFilterGroups(input.filterGroups);
  // check() already refused bad text; this only narrows the type.
  const filterGroups = parsed?.ok ? parsed.groups : [];
  const body: Record<string, unknown> = {
    filterGroups,
    limit: pageSize(input.limit) ?? 10,
  };
  if (input.query !== undefined) body.query = input.query;
  const properties = splitProperties(input.properties);
  if (properties?.length) body.properties = properties;
  if (input.sort !== undefined) {
    const descending = input.sort.startsWith('-');
    body.sorts = [
      {
        propertyName: descending ? input.sort.slice(1) : input.sort,
        direction: descending ? 'DESCENDING' : 'ASCENDING',
      },
    ];
  }
  // Cursor rule: a search takes `after` as the offset into the results (HubSpot's paging.next.after).
  if (input.after !== undefined) body.after = input.after;
  const { data } = await client.request<CrmPage>({
    method: 'POST',
    path: `/crm/v3/objects/${type}/search`,
    json: body,
  });
  return {
    total: data.total ?? data.results.length,
    results: data.results,
    ...paged('after', data.paging?.next?.after),
  };
}

export async function listRecords(
  client: ProviderClient,
  type: CrmObjectType,
  input: { limit?: number; after?: string; archived?: boolean; properties?: string },
): Promise<Record<string, unknown>> {
  const properties = splitProperties(input.properties);
  // Cursor rule: a list takes `after` as the cursor of the next set (HubSpot's paging.next.after, as it is).
  const { data } = await client.request<CrmPage>({
    method: 'GET',
    path: `/crm/v3/objects/${type}`,
    query: {
      limit: pageSize(input.limit),
      after: input.after,
      archived: input.archived,
      properties: properties?.length ? properties.join(',') : undefined,
    },
  });
  return { results: data.results, ...paged('after', data.paging?.next?.after) };
}

export async function getRecord(
  client: ProviderClient,
  type: CrmObjectType,
  id: string,
  query: Record<string, string | boolean | undefined>,
): Promise<CrmRecord> {
  const { data } = await client.request<CrmRecord>({
    method: 'GET',
    path: `/crm/v3/objects/${type}/${encodeURIComponent(id)}`,
    query,
  });
  return data;
}

export interface Association {
  to: { id: string };
  types: Array<{ associationCategory: 'HUBSPOT_DEFINED'; associationTypeId: number }>;
}

/** HubSpot-defined association type ids used when a record is created linked to others. */
export function associations(ids: string[] | undefined, associationTypeId: number): Association[] {
  return (ids ?? []).map((id) => ({
    to: { id },
    types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId }],
  }));
}

export async function createRecord(
  client: ProviderClient,
  type: CrmObjectType,
  properties: Record<string, string>,
  links: Association[] = [],
): Promise<CrmRecord> {
  const { data } = await client.request<CrmRecord>({
    method: 'POST',
    path: `/crm/v3/objects/${type}`,
    json: links.length ? { properties, associations: links } : { properties },
  });
  return data;
}

export async function updateRecord(
  client: ProviderClient,
  type: CrmObjectType,
  id: string,
  properties: Record<string, string>,
): Promise<CrmRecord> {
  const { data } = await client.request<CrmRecord>({
    method: 'PATCH',
    path: `/crm/v3/objects/${type}/${encodeURIComponent(id)}`,
    json: { properties },
  });
  return data;
}

/** Copies the given (defined) inputs into HubSpot properties as text. */
export function pickProperties(
  input: Record<string, unknown>,
  names: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = input[name];
    if (value === undefined) continue;
    out[name] = propertyText(value as PropertyValue);
  }
  return out;
}
