import { shapeError, validationError } from './errors.js';
import { claimPropertyUpload, renderMediaContent } from './files.js';
import { dataSourceIdFor, parseId, propertyId, stableId } from './ids.js';
import type { PageRecord, PropertySchema, PropertyValue, SelectOption, Workspace } from './model.js';
import { isColor, isRecord, parseRichText, type RichText } from './rich-text.js';
import { notionTime } from './time.js';
import { renderPerson } from './users.js';

/** Property types this emulator models (the common ones; formulas and rollups are not emulated). */
export const SCHEMA_TYPES = [
  'title',
  'rich_text',
  'number',
  'select',
  'multi_select',
  'status',
  'date',
  'checkbox',
  'people',
  'url',
  'email',
  'phone_number',
  'files',
  'relation',
  'created_time',
  'created_by',
  'last_edited_time',
  'last_edited_by',
] as const;

const COMPUTED_TYPES = new Set(['created_time', 'created_by', 'last_edited_time', 'last_edited_by']);

const NUMBER_FORMATS = new Set([
  'number',
  'number_with_commas',
  'percent',
  'dollar',
  'euro',
  'pound',
  'yen',
  'rupee',
  'won',
  'yuan',
  'real',
  'lira',
  'franc',
  'canadian_dollar',
  'australian_dollar',
]);

const OPTION_COLORS = [
  'default',
  'gray',
  'brown',
  'orange',
  'yellow',
  'green',
  'blue',
  'purple',
  'pink',
  'red',
];

function isSchemaType(value: unknown): value is (typeof SCHEMA_TYPES)[number] {
  return typeof value === 'string' && (SCHEMA_TYPES as readonly string[]).includes(value);
}

function optionColor(seed: string): string {
  let sum = 0;
  for (const ch of seed) sum = (sum * 31 + ch.charCodeAt(0)) >>> 0;
  return OPTION_COLORS[sum % OPTION_COLORS.length] ?? 'default';
}

export function makeOption(scope: string, name: string, color?: string): SelectOption {
  return {
    id: stableId(`option:${scope}:${name}`),
    name,
    color: color ?? optionColor(name),
    description: null,
  };
}

/** Notion's default status configuration for a new status property. */
function defaultStatusConfig(scope: string): Record<string, unknown> {
  const notStarted = makeOption(scope, 'Not started', 'default');
  const inProgress = makeOption(scope, 'In progress', 'blue');
  const done = makeOption(scope, 'Done', 'green');
  return {
    options: [notStarted, inProgress, done],
    groups: [
      { id: stableId(`group:${scope}:todo`), name: 'To-do', color: 'gray', option_ids: [notStarted.id] },
      {
        id: stableId(`group:${scope}:progress`),
        name: 'In progress',
        color: 'blue',
        option_ids: [inProgress.id],
      },
      { id: stableId(`group:${scope}:complete`), name: 'Complete', color: 'green', option_ids: [done.id] },
    ],
  };
}

function parseOptions(raw: unknown, path: string, scope: string, existing: SelectOption[]): SelectOption[] {
  if (raw === undefined) return existing;
  if (!Array.isArray(raw)) throw shapeError('body', path, 'an array', raw);
  return raw.map((item, index) => {
    if (!isRecord(item)) throw shapeError('body', `${path}[${index}]`, 'an object', item);
    const known =
      typeof item.id === 'string'
        ? existing.find((o) => o.id === item.id)
        : existing.find((o) => o.name === item.name);
    const name = typeof item.name === 'string' ? item.name : known?.name;
    if (name === undefined) throw shapeError('body', `${path}[${index}].name`, 'a string', item.name);
    if (name.includes(',')) throw validationError(`Select option names cannot contain commas: "${name}".`);
    if (item.color !== undefined && !isColor(item.color)) {
      throw shapeError('body', `${path}[${index}].color`, 'a valid select color', item.color);
    }
    const color = typeof item.color === 'string' ? item.color : (known?.color ?? optionColor(name));
    return {
      id: known?.id ?? makeOption(scope, name).id,
      name,
      color,
      description: known?.description ?? null,
    };
  });
}

/**
 * Parses one entry of a database `properties` schema (create or update). `existing` is the
 * property being reconfigured or renamed, if any.
 */
export function parseSchemaProperty(
  ws: Workspace,
  databaseId: string,
  key: string,
  raw: unknown,
  existing?: PropertySchema,
): PropertySchema {
  const path = `properties.${key}`;
  if (!isRecord(raw)) throw shapeError('body', path, 'an object', raw);
  const typeKeys = Object.keys(raw).filter(isSchemaType);
  const declared = raw.type;
  if (declared !== undefined && !isSchemaType(declared)) {
    throw shapeError(
      'body',
      `${path}.type`,
      `one of ${SCHEMA_TYPES.map((t) => `\`"${t}"\``).join(', ')}`,
      declared,
    );
  }
  if (typeKeys.length > 1)
    throw validationError(`body failed validation: ${path} sets more than one property type.`);
  const type = (declared as string | undefined) ?? typeKeys[0] ?? existing?.type;
  if (!type) {
    throw validationError(
      `body failed validation: ${path} should define a property type (for example \`{"rich_text": {}}\`), instead was \`${JSON.stringify(raw)}\`.`,
    );
  }
  if (existing?.type === 'title' && type !== 'title') {
    throw validationError(`Cannot change the type of the title property "${existing.name}".`);
  }
  const name = typeof raw.name === 'string' ? raw.name : (existing?.name ?? key);
  if (name.trim() === '') throw shapeError('body', `${path}.name`, 'a non-empty string', raw.name);
  const id = existing?.id ?? (type === 'title' ? 'title' : propertyId(`${databaseId}:${name}`));
  const scope = `${databaseId}:${id}`;
  const sameType = existing?.type === type;
  const configRaw = raw[type];
  if (configRaw !== undefined && !isRecord(configRaw))
    throw shapeError('body', `${path}.${type}`, 'an object', configRaw);
  const given = (configRaw ?? {}) as Record<string, unknown>;
  const previous = sameType ? (existing?.config ?? {}) : {};
  let config: Record<string, unknown> = {};
  switch (type) {
    case 'number': {
      const format = given.format ?? previous.format ?? 'number';
      if (typeof format !== 'string' || !NUMBER_FORMATS.has(format)) {
        throw shapeError('body', `${path}.number.format`, 'a valid number format', format);
      }
      config = { format };
      break;
    }
    case 'select':
    case 'multi_select': {
      const before = (previous.options as SelectOption[] | undefined) ?? [];
      config = { options: parseOptions(given.options, `${path}.${type}.options`, scope, before) };
      break;
    }
    case 'status': {
      if (given.options !== undefined) {
        throw validationError('Status options cannot be set through the API; edit them in the Notion app.');
      }
      config = sameType ? previous : defaultStatusConfig(scope);
      break;
    }
    case 'relation': {
      const target =
        relationTarget(ws, databaseId, given) ?? parseId(given.database_id ?? previous.database_id);
      if (!target)
        throw shapeError('body', `${path}.relation.database_id`, 'a valid uuid', given.database_id);
      if (!ws.databases.has(target) && target !== databaseId) {
        throw validationError(`Could not find database with ID: ${target}.`);
      }
      config = { database_id: target, type: 'single_property', single_property: {} };
      break;
    }
    default:
      config = {};
  }
  let description = existing?.description ?? null;
  if (raw.description !== undefined) {
    if (raw.description !== null && typeof raw.description !== 'string') {
      throw shapeError('body', `${path}.description`, 'a string', raw.description);
    }
    description = raw.description;
  }
  return { id, name, type, config, description };
}

/** A relation given by `data_source_id` (2025-09-03) targets that data source's database. */
function relationTarget(ws: Workspace, databaseId: string, given: Record<string, unknown>): string | null {
  if (given.data_source_id === undefined) return null;
  const id = parseId(given.data_source_id);
  if (!id) throw shapeError('body', 'relation.data_source_id', 'a valid uuid', given.data_source_id);
  for (const dbId of [databaseId, ...ws.databases.keys()]) if (dataSourceIdFor(dbId) === id) return dbId;
  throw validationError(`Could not find data source with ID: ${id}.`);
}

/** `dataSources`: render for 2025-09-03, where a relation also names its target's data source. */
export function renderSchemaProperty(schema: PropertySchema, dataSources = false): Record<string, unknown> {
  let config = schema.config;
  if (dataSources && schema.type === 'relation' && typeof config.database_id === 'string') {
    config = { ...config, data_source_id: dataSourceIdFor(config.database_id) };
  }
  return {
    id: schema.id,
    name: schema.name,
    type: schema.type,
    description: schema.description,
    [schema.type]: config,
  };
}

/** A new row's value for a property nobody set. */
export function emptyValue(schema: PropertySchema): PropertyValue {
  switch (schema.type) {
    case 'title':
    case 'rich_text':
    case 'multi_select':
    case 'people':
    case 'relation':
    case 'files':
      return [];
    case 'checkbox':
      return false;
    case 'status':
      return ((schema.config.options as SelectOption[] | undefined) ?? [])[0]?.id ?? null;
    default:
      return null;
  }
}

function options(schema: PropertySchema): SelectOption[] {
  return (schema.config.options as SelectOption[] | undefined) ?? [];
}

function resolveOption(schema: PropertySchema, raw: unknown, path: string, create: boolean): string {
  if (!isRecord(raw)) throw shapeError('body', path, 'an object', raw);
  const list = options(schema);
  if (typeof raw.id === 'string') {
    const byId = list.find((o) => o.id === raw.id);
    if (!byId)
      throw validationError(
        `Invalid ${schema.type} option id: ${raw.id} is not an option of ${schema.name}.`,
      );
    return byId.id;
  }
  if (typeof raw.name !== 'string') throw shapeError('body', `${path}.name`, 'a string', raw.name);
  const name = raw.name;
  const byName = list.find((o) => o.name === name);
  if (byName) return byName.id;
  if (!create) {
    throw validationError(
      `Invalid status option. Status option "${name}" does not exist for property ${schema.name}.`,
    );
  }
  if (name.includes(',')) throw validationError(`Select option names cannot contain commas: "${name}".`);
  // Notion adds an unknown select option to the schema when a page uses it.
  const option = makeOption(`${schema.id}:${schema.name}`, name, isColor(raw.color) ? raw.color : undefined);
  schema.config = { ...schema.config, options: [...list, option] };
  return option.id;
}

function parseIdList(raw: unknown, path: string): string[] {
  if (!Array.isArray(raw)) throw shapeError('body', path, 'an array', raw);
  return raw.map((item, index) => {
    const id = isRecord(item) ? parseId(item.id) : null;
    if (!id)
      throw shapeError('body', `${path}[${index}].id`, 'a valid uuid', isRecord(item) ? item.id : item);
    return id;
  });
}

function parseDate(raw: unknown, path: string): PropertyValue {
  if (raw === null) return null;
  if (!isRecord(raw)) throw shapeError('body', path, 'an object or `null`', raw);
  const check = (value: unknown, field: string): string => {
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
      throw shapeError('body', `${path}.${field}`, 'a valid ISO 8601 date string', value);
    }
    return value;
  };
  const start = check(raw.start, 'start');
  const end = raw.end === undefined || raw.end === null ? null : check(raw.end, 'end');
  const timeZone = typeof raw.time_zone === 'string' ? raw.time_zone : null;
  return { start, end, time_zone: timeZone };
}

function parseNullableString(raw: unknown, path: string): string | null {
  if (raw === null) return null;
  if (typeof raw !== 'string') throw shapeError('body', path, 'a string or `null`', raw);
  return raw;
}

/**
 * Parses a property value of a page create/update against its schema. Accepts `{type?, [type]: v}`
 * and, for text properties, the bare rich text array Notion also takes.
 */
export function parsePropertyValue(
  ws: Workspace,
  schema: PropertySchema,
  raw: unknown,
  key: string,
  mentionLabel: (mention: Record<string, unknown>) => string,
): PropertyValue {
  const path = `properties.${key}`;
  let value: unknown;
  if (Array.isArray(raw) && (schema.type === 'title' || schema.type === 'rich_text')) {
    value = raw;
  } else {
    if (!isRecord(raw)) throw shapeError('body', path, 'an object', raw);
    const keys = Object.keys(raw).filter((k) => k !== 'type' && k !== 'id' && k !== 'name');
    if (!(schema.type in raw) || (raw.type !== undefined && raw.type !== schema.type)) {
      const given = typeof raw.type === 'string' ? raw.type : (keys[0] ?? 'undefined');
      throw validationError(
        `${schema.name} is expected to be ${schema.type}, but the request sets ${given}.`,
      );
    }
    value = raw[schema.type];
  }
  if (COMPUTED_TYPES.has(schema.type)) {
    throw validationError(
      `${schema.name} is a ${schema.type} property, which Notion computes; it cannot be set.`,
    );
  }
  const at = `${path}.${schema.type}`;
  switch (schema.type) {
    case 'title':
    case 'rich_text':
      return parseRichText(value, at, mentionLabel);
    case 'number':
      if (value !== null && (typeof value !== 'number' || !Number.isFinite(value))) {
        throw shapeError('body', at, 'a number or `null`', value);
      }
      return value;
    case 'checkbox':
      if (typeof value !== 'boolean') throw shapeError('body', at, 'a boolean', value);
      return value;
    case 'select':
    case 'status':
      return value === null ? null : resolveOption(schema, value, at, schema.type === 'select');
    case 'multi_select': {
      if (!Array.isArray(value)) throw shapeError('body', at, 'an array', value);
      const ids = value.map((item, index) => resolveOption(schema, item, `${at}[${index}]`, true));
      return [...new Set(ids)];
    }
    case 'date':
      return parseDate(value, at);
    case 'people': {
      const ids = parseIdList(value, at);
      for (const id of ids) {
        if (!ws.identity.members.some((m) => m.id === id) && !ws.bots.has(id)) {
          throw validationError(`Could not find user with ID: ${id}.`);
        }
      }
      return ids;
    }
    case 'relation':
      return parseIdList(value, at);
    case 'url':
    case 'email':
    case 'phone_number':
      return parseNullableString(value, at);
    case 'files': {
      if (!Array.isArray(value)) throw shapeError('body', at, 'an array', value);
      return value.map((item, index) => parseFileEntry(ws, item, `${at}[${index}]`));
    }
    default:
      throw validationError(`${schema.name} is a ${schema.type} property, which the emulator cannot set.`);
  }
}

/** One entry of a `files` value: a link, or an upload made with the File Upload API. */
function parseFileEntry(ws: Workspace, item: unknown, at: string): Record<string, unknown> {
  if (isRecord(item) && (item.type === 'file_upload' || item.file_upload !== undefined)) {
    const id = isRecord(item.file_upload) ? parseId(item.file_upload.id) : null;
    if (!id) throw shapeError('body', `${at}.file_upload.id`, 'a valid uuid', item.file_upload);
    const upload = claimPropertyUpload(ws, id);
    const name = typeof item.name === 'string' ? item.name : (upload.filename ?? 'file');
    return { name, type: 'file_upload', file_upload: { id } };
  }
  if (!isRecord(item) || !isRecord(item.external) || typeof item.external.url !== 'string') {
    throw shapeError('body', at, 'an external file `{name, external: {url}}` or `{file_upload: {id}}`', item);
  }
  const name = typeof item.name === 'string' ? item.name : item.external.url;
  return { name, type: 'external', external: { url: item.external.url } };
}

function userObject(ws: Workspace, id: string): Record<string, unknown> {
  const member = ws.identity.members.find((m) => m.id === id);
  return member ? renderPerson(member) : { object: 'user', id };
}

/** The value of one property of a page, in the response shape of its type. */
export function renderValue(ws: Workspace, page: PageRecord, schema: PropertySchema): unknown {
  switch (schema.type) {
    case 'created_time':
      return notionTime(page.createdTime);
    case 'last_edited_time':
      return notionTime(page.lastEditedTime);
    case 'created_by':
      return userObject(ws, page.createdBy);
    case 'last_edited_by':
      return userObject(ws, page.lastEditedBy);
    default:
      break;
  }
  const stored = page.values.has(schema.id) ? page.values.get(schema.id) : emptyValue(schema);
  switch (schema.type) {
    case 'select':
    case 'status': {
      const option = options(schema).find((o) => o.id === stored);
      return option ? { id: option.id, name: option.name, color: option.color } : null;
    }
    case 'multi_select':
      return options(schema)
        .filter((o) => (stored as string[]).includes(o.id))
        .sort((a, b) => (stored as string[]).indexOf(a.id) - (stored as string[]).indexOf(b.id))
        .map((o) => ({ id: o.id, name: o.name, color: o.color }));
    case 'people':
      return (stored as string[]).map((id) => userObject(ws, id));
    case 'relation':
      return (stored as string[]).map((id) => ({ id }));
    case 'files':
      return (stored as Record<string, unknown>[]).map((entry) => renderMediaContent(ws, entry));
    default:
      return stored;
  }
}

/** One entry of a page's `properties`, as Notion returns it. */
export function renderPropertyEntry(
  ws: Workspace,
  page: PageRecord,
  schema: PropertySchema,
): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    id: schema.id,
    type: schema.type,
    [schema.type]: renderValue(ws, page, schema),
  };
  if (schema.type === 'relation') entry.has_more = false;
  return entry;
}

/** Text a rich text property holds, for filters. */
export function textOf(value: unknown): string {
  return Array.isArray(value) ? (value as RichText[]).map((t) => t.plain_text).join('') : '';
}
