import { shapeError, validationError } from './errors.js';
import { parseId } from './ids.js';
import type { DatabaseRecord, PageRecord, PropertySchema, SelectOption, Workspace } from './model.js';
import { renderValue, textOf } from './properties.js';
import { isRecord } from './rich-text.js';

type Predicate = (page: PageRecord) => boolean;

const TEXT_TYPES = new Set(['title', 'rich_text', 'url', 'email', 'phone_number']);
/** Notion allows compound filters nested two levels deep. */
const MAX_FILTER_DEPTH = 2;
const DAY = 86_400_000;

function findProperty(db: DatabaseRecord, key: unknown, path: string): PropertySchema {
  if (typeof key !== 'string') throw shapeError('body', `${path}.property`, 'a string', key);
  const schema = db.schema.find((p) => p.name === key || p.id === key);
  if (!schema) throw validationError(`Could not find property with name or id: ${key}`);
  return schema;
}

function stringValue(ws: Workspace, page: PageRecord, schema: PropertySchema): string {
  const value = renderValue(ws, page, schema);
  return typeof value === 'string' ? value : textOf(value);
}

function textPredicate(
  get: (p: PageRecord) => string,
  condition: Record<string, unknown>,
  path: string,
): Predicate {
  const [op, operand] = singleCondition(condition, path);
  if (op === 'is_empty') return (p) => get(p) === '';
  if (op === 'is_not_empty') return (p) => get(p) !== '';
  if (typeof operand !== 'string') throw shapeError('body', `${path}.${op}`, 'a string', operand);
  const needle = operand.toLowerCase();
  const lower = (p: PageRecord) => get(p).toLowerCase();
  switch (op) {
    case 'equals':
      return (p) => get(p) === operand;
    case 'does_not_equal':
      return (p) => get(p) !== operand;
    case 'contains':
      return (p) => lower(p).includes(needle);
    case 'does_not_contain':
      return (p) => !lower(p).includes(needle);
    case 'starts_with':
      return (p) => lower(p).startsWith(needle);
    case 'ends_with':
      return (p) => lower(p).endsWith(needle);
    default:
      throw unknownCondition(path, op);
  }
}

function numberPredicate(
  get: (p: PageRecord) => number | null,
  condition: Record<string, unknown>,
  path: string,
): Predicate {
  const [op, operand] = singleCondition(condition, path);
  if (op === 'is_empty') return (p) => get(p) === null;
  if (op === 'is_not_empty') return (p) => get(p) !== null;
  if (typeof operand !== 'number') throw shapeError('body', `${path}.${op}`, 'a number', operand);
  const test =
    (fn: (v: number) => boolean): Predicate =>
    (p) => {
      const v = get(p);
      return v !== null && fn(v);
    };
  switch (op) {
    case 'equals':
      return test((v) => v === operand);
    case 'does_not_equal':
      return (p) => get(p) !== operand;
    case 'greater_than':
      return test((v) => v > operand);
    case 'less_than':
      return test((v) => v < operand);
    case 'greater_than_or_equal_to':
      return test((v) => v >= operand);
    case 'less_than_or_equal_to':
      return test((v) => v <= operand);
    default:
      throw unknownCondition(path, op);
  }
}

function dayStart(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

/** Dates compare by day when the operand is a bare date, as Notion does for date-only values. */
function datePredicate(
  get: (p: PageRecord) => string | null,
  condition: Record<string, unknown>,
  path: string,
  now: number,
): Predicate {
  const [op, operand] = singleCondition(condition, path);
  const time = (p: PageRecord): number | null => {
    const v = get(p);
    return v === null ? null : Date.parse(v);
  };
  if (op === 'is_empty') return (p) => get(p) === null;
  if (op === 'is_not_empty') return (p) => get(p) !== null;
  // Relative ranges count whole days and include today, as Notion's do.
  const today = dayStart(now);
  const weekday = new Date(now).getUTCDay();
  const back = (days: number): [number, number] => [today - days * DAY, today + DAY];
  const ahead = (days: number): [number, number] => [today, today + (days + 1) * DAY];
  const relative: Record<string, [number, number]> = {
    past_week: back(7),
    past_month: back(30),
    past_year: back(365),
    next_week: ahead(7),
    next_month: ahead(30),
    next_year: ahead(365),
    this_week: [today - weekday * DAY, today + (7 - weekday) * DAY],
  };
  const range = relative[op];
  if (range) {
    return (p) => {
      const t = time(p);
      return t !== null && t >= range[0] && t < range[1];
    };
  }
  if (typeof operand !== 'string' || Number.isNaN(Date.parse(operand))) {
    throw shapeError('body', `${path}.${op}`, 'a valid ISO 8601 date string', operand);
  }
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(operand);
  const target = Date.parse(operand);
  const norm = (t: number) => (dateOnly ? dayStart(t) : t);
  const test =
    (fn: (t: number) => boolean): Predicate =>
    (p) => {
      const t = time(p);
      return t !== null && fn(norm(t));
    };
  switch (op) {
    case 'equals':
      return test((t) => t === target);
    case 'before':
      return test((t) => t < target);
    case 'after':
      return test((t) => t > target);
    case 'on_or_before':
      return test((t) => t <= target);
    case 'on_or_after':
      return test((t) => t >= target);
    default:
      throw unknownCondition(path, op);
  }
}

function singleCondition(condition: Record<string, unknown>, path: string): [string, unknown] {
  const entries = Object.entries(condition);
  const first = entries[0];
  if (entries.length !== 1 || !first) {
    throw validationError(
      `body failed validation: ${path} should have exactly one condition, instead was \`${JSON.stringify(condition)}\`.`,
    );
  }
  return first;
}

function unknownCondition(path: string, op: string) {
  return validationError(
    `body failed validation: ${path}.${op} should be not present, instead was a condition this property type does not support.`,
  );
}

function optionName(schema: PropertySchema, id: unknown): string | null {
  return ((schema.config.options as SelectOption[] | undefined) ?? []).find((o) => o.id === id)?.name ?? null;
}

function propertyPredicate(
  ws: Workspace,
  db: DatabaseRecord,
  filter: Record<string, unknown>,
  path: string,
  now: number,
): Predicate {
  const schema = findProperty(db, filter.property, path);
  const conditionKeys = Object.keys(filter).filter((k) => k !== 'property' && k !== 'type');
  const kind = conditionKeys[0];
  if (conditionKeys.length !== 1 || kind === undefined) {
    throw validationError(`body failed validation: ${path} should name exactly one property type condition.`);
  }
  const condition = filter[kind];
  if (!isRecord(condition)) throw shapeError('body', `${path}.${kind}`, 'an object', condition);
  const at = `${path}.${kind}`;
  const compatible =
    kind === schema.type ||
    (kind === 'rich_text' && TEXT_TYPES.has(schema.type)) ||
    (kind === 'date' && (schema.type === 'created_time' || schema.type === 'last_edited_time')) ||
    (kind === 'people' && (schema.type === 'created_by' || schema.type === 'last_edited_by'));
  if (!compatible) {
    throw validationError(
      `body failed validation: ${path}.${kind} does not match the type of property "${schema.name}", which is ${schema.type}.`,
    );
  }
  const raw = (p: PageRecord) => renderValue(ws, p, schema);
  switch (kind) {
    case 'title':
    case 'rich_text':
    case 'url':
    case 'email':
    case 'phone_number':
      return textPredicate((p) => stringValue(ws, p, schema), condition, at);
    case 'number':
      return numberPredicate((p) => raw(p) as number | null, condition, at);
    case 'checkbox': {
      const [op, operand] = singleCondition(condition, at);
      if (typeof operand !== 'boolean') throw shapeError('body', `${at}.${op}`, 'a boolean', operand);
      if (op === 'equals') return (p) => raw(p) === operand;
      if (op === 'does_not_equal') return (p) => raw(p) !== operand;
      throw unknownCondition(at, op);
    }
    case 'select':
    case 'status': {
      const name = (p: PageRecord) => optionName(schema, p.values.get(schema.id) ?? null);
      const [op, operand] = singleCondition(condition, at);
      if (op === 'is_empty') return (p) => name(p) === null;
      if (op === 'is_not_empty') return (p) => name(p) !== null;
      if (typeof operand !== 'string') throw shapeError('body', `${at}.${op}`, 'a string', operand);
      if (op === 'equals') return (p) => name(p) === operand;
      if (op === 'does_not_equal') return (p) => name(p) !== operand;
      throw unknownCondition(at, op);
    }
    case 'multi_select':
    case 'people':
    case 'relation': {
      const members = (p: PageRecord): string[] => {
        const value = raw(p);
        if (!Array.isArray(value)) return isRecord(value) && typeof value.id === 'string' ? [value.id] : [];
        return value.map((v) => (kind === 'multi_select' ? String(v.name) : String(v.id)));
      };
      const [op, operand] = singleCondition(condition, at);
      if (op === 'is_empty') return (p) => members(p).length === 0;
      if (op === 'is_not_empty') return (p) => members(p).length > 0;
      if (typeof operand !== 'string') throw shapeError('body', `${at}.${op}`, 'a string', operand);
      const wanted = kind === 'multi_select' ? operand : parseId(operand);
      if (wanted === null) throw shapeError('body', `${at}.${op}`, 'a valid uuid', operand);
      if (op === 'contains') return (p) => members(p).includes(wanted);
      if (op === 'does_not_contain') return (p) => !members(p).includes(wanted);
      throw unknownCondition(at, op);
    }
    case 'date': {
      const start = (p: PageRecord): string | null => {
        const value = raw(p);
        if (typeof value === 'string') return value;
        return isRecord(value) && typeof value.start === 'string' ? value.start : null;
      };
      return datePredicate(start, condition, at, now);
    }
    default:
      throw validationError(
        `body failed validation: filtering on ${kind} properties is not supported by the emulator.`,
      );
  }
}

export function buildFilter(
  ws: Workspace,
  db: DatabaseRecord,
  filter: unknown,
  now: number,
  path = 'filter',
  depth = 0,
): Predicate {
  if (filter === undefined || filter === null) return () => true;
  if (!isRecord(filter)) throw shapeError('body', path, 'an object', filter);
  for (const op of ['and', 'or'] as const) {
    const parts = filter[op];
    if (parts === undefined) continue;
    if (depth >= MAX_FILTER_DEPTH) {
      throw validationError(
        `body failed validation: ${path}.${op} nests compound filters more than two levels deep.`,
      );
    }
    if (!Array.isArray(parts)) throw shapeError('body', `${path}.${op}`, 'an array', parts);
    const predicates = parts.map((part, i) =>
      buildFilter(ws, db, part, now, `${path}.${op}[${i}]`, depth + 1),
    );
    return op === 'and' ? (p) => predicates.every((fn) => fn(p)) : (p) => predicates.some((fn) => fn(p));
  }
  if (filter.timestamp !== undefined) {
    const ts = filter.timestamp;
    if (ts !== 'created_time' && ts !== 'last_edited_time') {
      throw shapeError('body', `${path}.timestamp`, '`"created_time"` or `"last_edited_time"`', ts);
    }
    const condition = filter[ts];
    if (!isRecord(condition)) throw shapeError('body', `${path}.${ts}`, 'an object', condition);
    const get = (p: PageRecord) =>
      new Date(ts === 'created_time' ? p.createdTime : p.lastEditedTime).toISOString();
    return datePredicate(get, condition, `${path}.${ts}`, now);
  }
  return propertyPredicate(ws, db, filter, path, now);
}

type Comparator = (a: PageRecord, b: PageRecord) => number;

function sortKey(ws: Workspace, page: PageRecord, schema: PropertySchema): string | number | null {
  if (schema.type === 'select' || schema.type === 'status') {
    // Notion orders select and status values by the option order of the schema, not by name.
    const options = (schema.config.options as SelectOption[] | undefined) ?? [];
    const index = options.findIndex((o) => o.id === page.values.get(schema.id));
    return index < 0 ? null : index;
  }
  const value = renderValue(ws, page, schema);
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (Array.isArray(value)) {
    const text = value
      .map((v) => (isRecord(v) ? String(v.plain_text ?? v.name ?? v.id ?? '') : ''))
      .join(',');
    return text === '' ? null : text;
  }
  if (isRecord(value)) return String(value.start ?? value.name ?? '');
  return null;
}

/** Empty values sort last in either direction, as in Notion. */
export function buildSorts(ws: Workspace, db: DatabaseRecord, sorts: unknown): Comparator {
  if (sorts === undefined) return (a, b) => b.createdTime - a.createdTime;
  if (!Array.isArray(sorts)) throw shapeError('body', 'sorts', 'an array', sorts);
  const comparators = sorts.map((sort, i): Comparator => {
    const path = `sorts[${i}]`;
    if (!isRecord(sort)) throw shapeError('body', path, 'an object', sort);
    const direction = sort.direction ?? 'ascending';
    if (direction !== 'ascending' && direction !== 'descending') {
      throw shapeError('body', `${path}.direction`, '`"ascending"` or `"descending"`', direction);
    }
    const sign = direction === 'ascending' ? 1 : -1;
    if (sort.timestamp !== undefined) {
      if (sort.timestamp !== 'created_time' && sort.timestamp !== 'last_edited_time') {
        throw shapeError(
          'body',
          `${path}.timestamp`,
          '`"created_time"` or `"last_edited_time"`',
          sort.timestamp,
        );
      }
      const field = sort.timestamp === 'created_time' ? 'createdTime' : 'lastEditedTime';
      return (a, b) => sign * (a[field] - b[field]);
    }
    const schema = findProperty(db, sort.property, path);
    return (a, b) => {
      const x = sortKey(ws, a, schema);
      const y = sortKey(ws, b, schema);
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      return (
        sign * (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)))
      );
    };
  });
  return (a, b) => {
    for (const compare of comparators) {
      const result = compare(a, b);
      if (result !== 0) return result;
    }
    return b.createdTime - a.createdTime;
  };
}
