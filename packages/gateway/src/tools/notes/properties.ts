import { type Static, Type } from '@sinclair/typebox';
import { type FieldError, Problem } from '../../errors/problem.js';
import { normalizeId } from './ids.js';
import { richText } from './rich-text.js';

// Database properties: values given plainly or in Notion's form, converted by the column's type.

/**
 * A property value as given: Notion's own form (`{"select": {"name": "High"}}`) is sent as is; a
 * plain value (`"High"`, `3`, `true`, `["a", "b"]`) is converted using the column's type.
 */
export const PropertyValuesSchema = Type.Record(
  Type.String({ minLength: 1 }),
  Type.Union([
    Type.String(),
    Type.Number(),
    Type.Boolean(),
    Type.Null(),
    Type.Array(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })])),
    Type.Object({}, { additionalProperties: true }),
  ]),
  {
    minProperties: 1,
    description:
      'Property values (rules 5 and 6) keyed by the exact, case-sensitive column name or property ID; the title column is always keyed "title". Provider value shapes: {"title": [{"text": {"content": "…"}}]}, {"select": {"name": "High"}}, {"date": {"start": "2025-01-31"}}, etc. Plain values are accepted too and converted by column type: title/rich_text/url/email/phone_number/select/status take a string, number a number, checkbox a boolean, multi_select an array of option names, date an ISO date string, people/relation an array of ids, files an array of URLs; null clears.',
  },
);
export type PropertyValues = Static<typeof PropertyValuesSchema>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when every value is already in Notion's own form, so no column types are needed. */
export function allNotionForm(values: PropertyValues): boolean {
  return Object.values(values).every((v) => isRecord(v) || (Array.isArray(v) && v.every(isRecord)));
}

/** Converts one plain value for a column of `type`; a message when it does not fit. */
function convertValue(type: string, value: unknown): { value: unknown } | { error: string } {
  if (isRecord(value)) {
    return type in value || value.type === type
      ? { value }
      : { error: `is a ${type} column; give a plain value or {"${type}": …}` };
  }
  const str = typeof value === 'string';
  switch (type) {
    case 'title':
    case 'rich_text':
      if (value === null) return { value: { [type]: [] } };
      if (Array.isArray(value) && value.every(isRecord)) return { value: { [type]: value } };
      return str || typeof value === 'number'
        ? { value: { [type]: richText(String(value)) } }
        : { error: `is a ${type} column; give a string` };
    case 'number':
      return typeof value === 'number' || value === null
        ? { value: { number: value } }
        : { error: 'is a number column; give a number' };
    case 'checkbox':
      return typeof value === 'boolean'
        ? { value: { checkbox: value } }
        : { error: 'is a checkbox column; give true or false' };
    case 'select':
    case 'status':
      if (value === null) return { value: { [type]: null } };
      return str && value !== ''
        ? { value: { [type]: { name: value } } }
        : { error: `is a ${type} column; give the option name as a string` };
    case 'multi_select': {
      const names = str
        ? value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : value;
      if (value === null) return { value: { multi_select: [] } };
      return Array.isArray(names) && names.every((n) => typeof n === 'string')
        ? { value: { multi_select: names.map((name) => ({ name })) } }
        : { error: 'is a multi_select column; give an array of option names' };
    }
    case 'date':
      if (value === null) return { value: { date: null } };
      if (str && !Number.isNaN(Date.parse(value))) return { value: { date: { start: value } } };
      return { error: 'is a date column; give an ISO 8601 date such as "2025-01-31"' };
    case 'people':
    case 'relation': {
      const ids = str ? [value] : value;
      if (value === null) return { value: { [type]: [] } };
      if (
        !Array.isArray(ids) ||
        !ids.every((id) => typeof id === 'string' && /[0-9a-f]{32}|[0-9a-f-]{36}/i.test(id))
      ) {
        return { error: `is a ${type} column; give an array of ${type === 'people' ? 'user' : 'page'} ids` };
      }
      return { value: { [type]: ids.map((id) => ({ id: normalizeId(id as string) })) } };
    }
    case 'url':
    case 'email':
    case 'phone_number':
      return str || value === null
        ? { value: { [type]: value } }
        : { error: `is a ${type} column; give a string` };
    case 'files': {
      const urls = str ? [value] : value;
      if (value === null) return { value: { files: [] } };
      return Array.isArray(urls) && urls.every((u) => typeof u === 'string')
        ? { value: { files: urls.map((url) => ({ name: String(url).slice(0, 100), external: { url } })) } }
        : { error: 'is a files column; give an array of file URLs' };
    }
    default:
      return { error: `is a ${type} column, which Notion computes or the API cannot set` };
  }
}

/**
 * Notion property values from the caller's values, using the column types (`{name: type}`) of the
 * database or page. Unknown columns and values that do not fit their column are `invalid_input`.
 */
export function toNotionProperties(
  values: PropertyValues,
  columns: Column[],
  path = '/tool_input/properties',
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(values)) {
    const column = findColumn(columns, key);
    const at = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!column) {
      errors.push({
        path: at,
        message: `is not a column; known columns: ${columns.map((c) => `"${c.name}" (${c.type})`).join(', ')}`,
      });
      continue;
    }
    const converted = convertValue(column.type, value);
    if ('error' in converted) errors.push({ path: at, message: converted.error });
    else out[column.name] = converted.value;
  }
  if (errors.length) {
    throw new Problem(
      'invalid_input',
      `Some properties do not fit the columns: ${errors.map((e) => `${e.path.replace('/tool_input/', '')} ${e.message}`).join('; ')}.`,
      { errors },
    );
  }
  return out;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** One column of a database (or property of a page): Notion's definition with its name. */
export interface Column {
  id: string;
  name: string;
  type: string;
  [field: string]: unknown;
}

/** The columns of a Notion database or page `properties` object, keyed by their display name. */
export function columnsOf(properties: unknown): Column[] {
  return Object.entries(isRecord(properties) ? properties : {}).map(([name, p]) => ({
    ...(isRecord(p) ? p : {}),
    id: String((p as { id?: unknown }).id ?? name),
    name,
    type: String((p as { type?: unknown }).type ?? ''),
  }));
}

/**
 * The column a key names (rule 6): "title" is always the title-type column; any other key is the
 * exact, case-sensitive column name or the property ID (as Notion returns it or percent-decoded).
 */
export function findColumn<C extends Column>(columns: C[], key: string): C | undefined {
  if (key === 'title') {
    const title = columns.find((c) => c.type === 'title');
    if (title) return title;
  }
  return (
    columns.find((c) => c.name === key) ??
    columns.find((c) => c.id === key || safeDecode(c.id) === safeDecode(key))
  );
}

/** The title a page under a page has, standing in for a database schema. */
export const CHILD_PAGE_COLUMNS: Column[] = [{ id: 'title', name: 'title', type: 'title' }];
