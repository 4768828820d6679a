import { type TString, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import type { FieldError } from '../../errors/problem.js';
import { paged } from '../pagination.js';
import { stringEnum } from '../schema.js';

/**
 * What the `crm_` tools share: HubSpot's CRM v3 object endpoints, the spec's property names mapped
 * to HubSpot's, and the input rules every search and write follows.
 */

export type CrmObjectType = 'companies' | 'contacts' | 'deals';

/** A HubSpot record as the v3 object endpoints return it. */
export interface CrmRecord {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  [key: string]: unknown;
}

interface CrmPage {
  total?: number;
  results: CrmRecord[];
  paging?: { next?: { after?: string } };
}

/** HubSpot record ids are numeric strings (`"100001"`). */
export const RECORD_ID_PATTERN = '^[0-9]+$';

export function recordId(description: string): TString {
  return Type.String({ pattern: RECORD_ID_PATTERN, minLength: 1, description });
}

/** `"email,firstname , lastname"`: HubSpot internal property names, comma-separated. */
export const PROPERTIES_PATTERN = '^\\s*[A-Za-z0-9_]+(\\s*,\\s*[A-Za-z0-9_]+)*\\s*$';

export function propertiesParam(defaults: string): TString {
  return Type.String({
    pattern: PROPERTIES_PATTERN,
    description: `HubSpot internal property names to return, comma-separated (e.g. "email,firstname,hs_lead_status"). Unknown names are ignored by HubSpot. Omitted: HubSpot's defaults (${defaults}).`,
  });
}

export function splitProperties(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/** The spec's lead status, HubSpot's `hs_lead_status`: the default options of a HubSpot portal. */
export const LEAD_STATUSES = [
  'NEW',
  'OPEN',
  'IN_PROGRESS',
  'OPEN_DEAL',
  'UNQUALIFIED',
  'ATTEMPTED_TO_CONTACT',
  'CONNECTED',
  'BAD_TIMING',
] as const;

export const leadStatusSchema = stringEnum(
  LEAD_STATUSES,
  `Lead status, sent as HubSpot's hs_lead_status. One of: ${LEAD_STATUSES.join(', ')}.`,
);

/** The spec's HIGH/MEDIUM/LOW; HubSpot's `hs_priority` option values are lower case. */
export const PRIORITIES = ['HIGH', 'MEDIUM', 'LOW'] as const;
export type Priority = (typeof PRIORITIES)[number];

export function priorityValue(priority: Priority): string {
  return priority.toLowerCase();
}

/** A property value as HubSpot stores it: text. */
export const propertyValueSchema = Type.Unsafe<string | number | boolean | null>({
  type: ['string', 'number', 'boolean', 'null'],
  description:
    'Property value. HubSpot stores text: numbers and booleans are sent as text, "" or null clears the property.',
});

export function propertyText(value: string | number | boolean | null): string {
  return value === null ? '' : String(value);
}

/** `YYYY-MM-DD` that is also a real calendar date (no 2025-02-30). */
export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export function checkCalendarDate(path: string, value: string | undefined): FieldError[] {
  if (value === undefined || isCalendarDate(value)) return [];
  return [
    {
      path,
      message: `"${value}" is not a calendar date (rule: closedate is a real date in the form YYYY-MM-DD, e.g. "2025-06-30").`,
    },
  ];
}

/** Midnight UTC of the date: HubSpot's closedate is a date-time property. */
export function closeDateValue(date: string): string {
  return `${date}T00:00:00.000Z`;
}

// ---------------------------------------------------------------------------------------------
// Search: filterGroups arrive as JSON text and are checked before HubSpot sees them.

const OPERATORS = [
  'EQ',
  'NEQ',
  'LT',
  'LTE',
  'GT',
  'GTE',
  'BETWEEN',
  'IN',
  'NOT_IN',
  'HAS_PROPERTY',
  'NOT_HAS_PROPERTY',
  'CONTAINS_TOKEN',
  'NOT_CONTAINS_TOKEN',
] as const;
const NEEDS_VALUE = new Set([
  'EQ',
  'NEQ',
  'LT',
  'LTE',
  'GT',
  'GTE',
  'BETWEEN',
  'CONTAINS_TOKEN',
  'NOT_CONTAINS_TOKEN',
]);
/** HubSpot's search limits. */
const MAX_FILTER_GROUPS = 5;
const MAX_FILTERS_PER_GROUP = 6;
const MAX_FILTERS_TOTAL = 18;
const FILTER_KEYS = new Set(['propertyName', 'operator', 'value', 'highValue', 'values']);

export interface SearchFilter {
  propertyName: string;
  operator: string;
  value?: string | number | boolean;
  highValue?: string | number | boolean;
  values?: Array<string | number | boolean>;
}

type Parsed = { ok: true; groups: Array<{ filters: SearchFilter[] }> } | { ok: false; message: string };

const FILTER_GROUPS_RULE =
  'rule: filterGroups is JSON text of an array of at most 5 groups {"filters":[{"propertyName","operator","value"}]}, at most 6 filters per group and 18 in all; groups are ORed, filters in a group are ANDed';

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function parseFilter(raw: unknown, where: string): SearchFilter | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `${where} must be an object`;
  const f = raw as Record<string, unknown>;
  const unknown = Object.keys(f).filter((k) => !FILTER_KEYS.has(k));
  if (unknown.length) {
    return `${where} has unknown field ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${[...FILTER_KEYS].join(', ')})`;
  }
  if (typeof f.propertyName !== 'string' || f.propertyName.trim() === '') {
    return `${where}.propertyName must be a HubSpot internal property name (e.g. "email")`;
  }
  if (typeof f.operator !== 'string' || !(OPERATORS as readonly string[]).includes(f.operator)) {
    return `${where}.operator must be one of ${OPERATORS.join(', ')}; got ${JSON.stringify(f.operator)}`;
  }
  const filter: SearchFilter = { propertyName: f.propertyName, operator: f.operator };
  for (const key of ['value', 'highValue'] as const) {
    if (f[key] === undefined) continue;
    if (!isScalar(f[key])) return `${where}.${key} must be a string, number or boolean`;
    filter[key] = f[key];
  }
  if (f.values !== undefined) {
    if (!Array.isArray(f.values) || !f.values.every(isScalar)) {
      return `${where}.values must be an array of strings, numbers or booleans`;
    }
    filter.values = f.values;
  }
  if (NEEDS_VALUE.has(f.operator) && filter.value === undefined) {
    return `${where}: operator ${f.operator} needs a "value"`;
  }
  if (f.operator === 'BETWEEN' && filter.highValue === undefined) {
    return `${where}: operator BETWEEN needs "value" (low) and "highValue" (high)`;
  }
  if ((f.operator === 'IN' || f.operator === 'NOT_IN') && !filter.values?.length) {
    return `${where}: operator ${f.operator} needs a non-empty "values" array`;
  }
  return filter;
}

/** Parses and checks the filterGroups text the way HubSpot's search endpoint would judge it. */
export function parseFilterGroups(text: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      message: `is not valid JSON (${(error as Error).message}) (${FILTER_GROUPS_RULE}). Example: [{"filters":[{"propertyName":"email","operator":"EQ","value":"ada@example.com"}]}]`,
    };
  }
  if (!Array.isArray(raw)) {
    const hint =
      typeof raw === 'object' && raw !== null && 'filterGroups' in raw
        ? ' Pass the array inside "filterGroups", not the whole search body.'
        : '';
    return { ok: false, message: `must be a JSON array (${FILTER_GROUPS_RULE}).${hint}` };
  }
  if (raw.length > MAX_FILTER_GROUPS) {
    return { ok: false, message: `has ${raw.length} groups (${FILTER_GROUPS_RULE}).` };
  }
  const groups: Array<{ filters: SearchFilter[] }> = [];
  let total = 0;
  for (const [i, group] of raw.entries()) {
    const where = `filterGroups[${i}]`;
    if (typeof group !== 'object' || group === null || Array.isArray(group)) {
      return { ok: false, message: `${where} must be an object {"filters":[…]} (${FILTER_GROUPS_RULE}).` };
    }
    const filters = (group as { filters?: unknown }).filters;
    const extra = Object.keys(group).filter((k) => k !== 'filters');
    if (extra.length) {
      return {
        ok: false,
        message: `${where} has unknown field ${extra.map((k) => `"${k}"`).join(', ')}; a group holds only "filters" (${FILTER_GROUPS_RULE}).`,
      };
    }
    if (!Array.isArray(filters) || filters.length === 0) {
      return {
        ok: false,
        message: `${where}.filters must be a non-empty array (${FILTER_GROUPS_RULE}).`,
      };
    }
    if (filters.length > MAX_FILTERS_PER_GROUP) {
      return { ok: false, message: `${where} has ${filters.length} filters (${FILTER_GROUPS_RULE}).` };
    }
    total += filters.length;
    const parsed: SearchFilter[] = [];
    for (const [j, f] of filters.entries()) {
      const result = parseFilter(f, `${where}.filters[${j}]`);
      if (typeof result === 'string') return { ok: false, message: `${result} (${FILTER_GROUPS_RULE}).` };
      parsed.push(result);
    }
    groups.push({ filters: parsed });
  }
  if (total > MAX_FILTERS_TOTAL) {
    return { ok: false, message: `has ${total} filters in all (${FILTER_GROUPS_RULE}).` };
  }
  return { ok: true, groups };
}

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
    limit: input.limit ?? 10,
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
  const { data } = await client.request<CrmPage>({
    method: 'GET',
    path: `/crm/v3/objects/${type}`,
    query: {
      limit: input.limit,
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
    out[name] = propertyText(value as string | number | boolean | null);
  }
  return out;
}

export const READ_ONLY = { read_only: true, destructive: false, idempotent: true } as const;
export const CREATE = { read_only: false, destructive: false, idempotent: false } as const;
export const UPDATE = { read_only: false, destructive: true, idempotent: true } as const;

export { stringEnum };
