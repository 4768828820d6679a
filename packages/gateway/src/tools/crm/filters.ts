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
