import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { sendValidationError } from './errors.js';
import type { GetState } from './http.js';
import { openObjectRoute } from './objects.js';
import {
  type ObjectTypeName,
  type PropertyType,
  propertyDefinition,
  SEARCHABLE_PROPERTIES,
} from './schema.js';
import { activeRecords, type CrmRecord } from './store.js';
import { parseHubSpotTime } from './values.js';
import { recordJson } from './view.js';

/** HubSpot's CRM search limits. */
const SEARCH_MAX_LIMIT = 200;
const SEARCH_DEFAULT_LIMIT = 10;
const SEARCH_MAX_RESULTS = 10_000;
const MAX_FILTER_GROUPS = 5;
const MAX_FILTERS_PER_GROUP = 6;
const MAX_FILTERS_TOTAL = 18;

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
type Operator = (typeof OPERATORS)[number];

export interface SearchFilter {
  propertyName: string;
  operator: Operator;
  value?: string;
  highValue?: string;
  values?: string[];
}

interface SearchSort {
  propertyName: string;
  descending: boolean;
}

interface SearchRequest {
  query?: string;
  filterGroups: SearchFilter[][];
  sorts: SearchSort[];
  properties?: string[];
  limit: number;
  offset: number;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function parseFilter(raw: unknown): Parsed<SearchFilter> {
  if (typeof raw !== 'object' || raw === null)
    return { ok: false, message: 'Each filter must be an object.' };
  const f = raw as Record<string, unknown>;
  if (typeof f.propertyName !== 'string' || f.propertyName === '') {
    return { ok: false, message: 'Each filter needs a propertyName.' };
  }
  const operator = typeof f.operator === 'string' ? f.operator.toUpperCase() : 'EQ';
  if (!(OPERATORS as readonly string[]).includes(operator)) {
    return {
      ok: false,
      message: `Unknown operator ${String(f.operator)}; expected one of ${OPERATORS.join(', ')}.`,
    };
  }
  const filter: SearchFilter = { propertyName: f.propertyName, operator: operator as Operator };
  const value = scalar(f.value);
  const highValue = scalar(f.highValue);
  if (value !== undefined) filter.value = value;
  if (highValue !== undefined) filter.highValue = highValue;
  if (Array.isArray(f.values))
    filter.values = f.values.map(scalar).filter((v): v is string => v !== undefined);
  const needsValue = [
    'EQ',
    'NEQ',
    'LT',
    'LTE',
    'GT',
    'GTE',
    'BETWEEN',
    'CONTAINS_TOKEN',
    'NOT_CONTAINS_TOKEN',
  ];
  if (needsValue.includes(filter.operator) && filter.value === undefined) {
    return { ok: false, message: `Operator ${filter.operator} on ${filter.propertyName} requires a value.` };
  }
  if (filter.operator === 'BETWEEN' && filter.highValue === undefined) {
    return { ok: false, message: `Operator BETWEEN on ${filter.propertyName} requires a highValue.` };
  }
  if ((filter.operator === 'IN' || filter.operator === 'NOT_IN') && !filter.values) {
    return { ok: false, message: `Operator ${filter.operator} on ${filter.propertyName} requires values.` };
  }
  return { ok: true, value: filter };
}

/** Sorts arrive as `["-createdate"]` (what the SDK's type says) or `[{propertyName, direction}]`. */
function parseSort(raw: unknown): Parsed<SearchSort> {
  if (typeof raw === 'string') {
    const descending = raw.startsWith('-');
    return { ok: true, value: { propertyName: descending ? raw.slice(1) : raw, descending } };
  }
  if (typeof raw === 'object' && raw !== null) {
    const s = raw as Record<string, unknown>;
    if (typeof s.propertyName === 'string') {
      const direction = typeof s.direction === 'string' ? s.direction.toUpperCase() : 'ASCENDING';
      if (direction !== 'ASCENDING' && direction !== 'DESCENDING') {
        return {
          ok: false,
          message: `Unknown sort direction ${String(s.direction)}; use ASCENDING or DESCENDING.`,
        };
      }
      return { ok: true, value: { propertyName: s.propertyName, descending: direction === 'DESCENDING' } };
    }
  }
  return { ok: false, message: 'Each sort must be "property", "-property" or {propertyName, direction}.' };
}

export function parseSearchRequest(body: unknown): Parsed<SearchRequest> {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b !== 'object' || Array.isArray(b))
    return { ok: false, message: 'The search body must be a JSON object.' };
  const limit = b.limit === undefined ? SEARCH_DEFAULT_LIMIT : Number(b.limit);
  if (!Number.isInteger(limit) || limit < 0 || limit > SEARCH_MAX_LIMIT) {
    return {
      ok: false,
      message: `limit must be an integer between 0 and ${SEARCH_MAX_LIMIT}; got ${String(b.limit)}.`,
    };
  }
  const afterText = scalar(b.after);
  const offset = afterText === undefined || afterText === '' ? 0 : Number(afterText);
  if (!Number.isInteger(offset) || offset < 0) {
    return {
      ok: false,
      message: `after must be the paging.next.after of a previous page; got ${String(b.after)}.`,
    };
  }
  if (offset + limit > SEARCH_MAX_RESULTS) {
    return { ok: false, message: `Search can page through at most ${SEARCH_MAX_RESULTS} results.` };
  }
  const rawGroups = b.filterGroups ?? [];
  if (!Array.isArray(rawGroups)) return { ok: false, message: 'filterGroups must be an array.' };
  if (rawGroups.length > MAX_FILTER_GROUPS) {
    return {
      ok: false,
      message: `At most ${MAX_FILTER_GROUPS} filterGroups are allowed; got ${rawGroups.length}.`,
    };
  }
  const filterGroups: SearchFilter[][] = [];
  let total = 0;
  for (const group of rawGroups) {
    const rawFilters = (group as { filters?: unknown })?.filters ?? [];
    if (!Array.isArray(rawFilters)) return { ok: false, message: 'filterGroups[].filters must be an array.' };
    if (rawFilters.length > MAX_FILTERS_PER_GROUP) {
      return { ok: false, message: `At most ${MAX_FILTERS_PER_GROUP} filters per group are allowed.` };
    }
    total += rawFilters.length;
    const filters: SearchFilter[] = [];
    for (const raw of rawFilters) {
      const parsed = parseFilter(raw);
      if (!parsed.ok) return parsed;
      filters.push(parsed.value);
    }
    filterGroups.push(filters);
  }
  if (total > MAX_FILTERS_TOTAL) {
    return {
      ok: false,
      message: `At most ${MAX_FILTERS_TOTAL} filters are allowed across all groups; got ${total}.`,
    };
  }
  const sorts: SearchSort[] = [];
  for (const raw of Array.isArray(b.sorts) ? b.sorts : []) {
    const parsed = parseSort(raw);
    if (!parsed.ok) return parsed;
    sorts.push(parsed.value);
  }
  const request: SearchRequest = { filterGroups, sorts, limit, offset };
  if (typeof b.query === 'string' && b.query.trim() !== '') request.query = b.query.trim();
  if (Array.isArray(b.properties)) {
    request.properties = b.properties.filter((p): p is string => typeof p === 'string');
  }
  return { ok: true, value: request };
}

/** Values compare as numbers or instants when the property is one, else as case-insensitive text. */
function comparable(type: PropertyType | undefined, raw: string): number | string {
  if (type === 'number') {
    const n = Number(raw);
    return Number.isNaN(n) ? raw.toLowerCase() : n;
  }
  if (type === 'datetime' || type === 'date') return parseHubSpotTime(raw) ?? raw.toLowerCase();
  return raw.toLowerCase();
}

function compare(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}

/** HubSpot tokenizes text on whitespace and punctuation; `*` in the searched token is a wildcard. */
function tokens(text: string): string[] {
  const lower = text.toLowerCase();
  return [lower, ...lower.split(/[^a-z0-9@._-]+/), ...lower.split(/[^a-z0-9]+/)].filter((t) => t.length > 0);
}

function tokenMatches(text: string, wanted: string): boolean {
  const pattern = wanted.toLowerCase();
  if (pattern.includes('*')) {
    const source = pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    const regex = new RegExp(`^${source}$`);
    return tokens(text).some((t) => regex.test(t));
  }
  return tokens(text).includes(pattern);
}

export function matchesFilter(type: ObjectTypeName, record: CrmRecord, filter: SearchFilter): boolean {
  const propType = propertyDefinition(type, filter.propertyName)?.type;
  const actual = record.properties.get(filter.propertyName);
  const has = actual !== undefined && actual !== '';
  switch (filter.operator) {
    case 'HAS_PROPERTY':
      return has;
    case 'NOT_HAS_PROPERTY':
      return !has;
    case 'NEQ':
      return !has || compare(comparable(propType, actual), comparable(propType, filter.value!)) !== 0;
    case 'NOT_IN':
      return (
        !has ||
        !(filter.values ?? []).some(
          (v) => compare(comparable(propType, actual), comparable(propType, v)) === 0,
        )
      );
    case 'NOT_CONTAINS_TOKEN':
      return !has || !tokenMatches(actual, filter.value!);
    default:
      break;
  }
  if (!has) return false;
  const value = comparable(propType, actual);
  switch (filter.operator) {
    case 'EQ':
      return compare(value, comparable(propType, filter.value!)) === 0;
    case 'LT':
      return compare(value, comparable(propType, filter.value!)) < 0;
    case 'LTE':
      return compare(value, comparable(propType, filter.value!)) <= 0;
    case 'GT':
      return compare(value, comparable(propType, filter.value!)) > 0;
    case 'GTE':
      return compare(value, comparable(propType, filter.value!)) >= 0;
    case 'BETWEEN':
      return (
        compare(value, comparable(propType, filter.value!)) >= 0 &&
        compare(value, comparable(propType, filter.highValue!)) <= 0
      );
    case 'IN':
      return (filter.values ?? []).some((v) => compare(value, comparable(propType, v)) === 0);
    case 'CONTAINS_TOKEN':
      return tokenMatches(actual, filter.value!);
    default:
      return false;
  }
}

/** The free-text `query`: every word must prefix-match a token of some default searchable property. */
function matchesQuery(type: ObjectTypeName, record: CrmRecord, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const haystack = SEARCHABLE_PROPERTIES[type].flatMap((name) => {
    const v = record.properties.get(name);
    return v ? tokens(v) : [];
  });
  return words.every((word) => haystack.some((t) => t.startsWith(word.replace(/\*/g, ''))));
}

export function runSearch(type: ObjectTypeName, records: CrmRecord[], request: SearchRequest): CrmRecord[] {
  let hits = records.filter(
    (r) =>
      (request.filterGroups.length === 0 ||
        request.filterGroups.some((g) => g.every((f) => matchesFilter(type, r, f)))) &&
      (request.query === undefined || matchesQuery(type, r, request.query)),
  );
  const sort = request.sorts[0];
  if (sort) {
    const propType = propertyDefinition(type, sort.propertyName)?.type;
    // Records without the property sort last either way, as in HubSpot's index.
    hits = [...hits].sort((a, b) => {
      const av = a.properties.get(sort.propertyName);
      const bv = b.properties.get(sort.propertyName);
      if (av === undefined || bv === undefined) return av === bv ? 0 : av === undefined ? 1 : -1;
      const order = compare(comparable(propType, av), comparable(propType, bv));
      return (sort.descending ? -order : order) || Number(a.id) - Number(b.id);
    });
  }
  return hits;
}

export function registerSearchRoute(app: FastifyInstance, ctx: ProviderContext, getState: GetState): void {
  app.post('/crm/v3/objects/:objectType/search', async (req, reply) => {
    const route = openObjectRoute(req, reply, ctx, getState, 'read');
    if (!route) return reply;
    const parsed = parseSearchRequest(req.body);
    if (!parsed.ok) return sendValidationError(reply, parsed.message);
    const request = parsed.value;
    const hits = runSearch(route.type, activeRecords(route.caller.portal, route.type), request);
    const page = hits.slice(request.offset, request.offset + request.limit);
    const body: Record<string, unknown> = {
      total: hits.length,
      results: page.map((r) => recordJson(route.type, r, request.properties)),
    };
    const nextOffset = request.offset + page.length;
    if (request.limit > 0 && nextOffset < hits.length) body.paging = { next: { after: String(nextOffset) } };
    return reply.send(body);
  });
}
