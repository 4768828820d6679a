import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { type FieldError, Problem } from '../../errors/problem.js';
import { paged } from '../pagination.js';
import { stringEnum } from '../schema.js';
import { normalizeId } from './ids.js';

/** Notion caps one text object at 2000 characters; longer text is sent as several. */
const TEXT_CHUNK = 2000;

export type RichText = Array<{ type: 'text'; text: { content: string } }>;

/** Plain text as Notion rich text (split into 2000-character runs). */
export function richText(text: string): RichText {
  const runs: RichText = [];
  for (let i = 0; i < text.length; i += TEXT_CHUNK) {
    runs.push({ type: 'text', text: { content: text.slice(i, i + TEXT_CHUNK) } });
  }
  return runs.length ? runs : [{ type: 'text', text: { content: '' } }];
}

/** The text of a Notion rich text array. */
export function plainText(value: unknown): string {
  return Array.isArray(value)
    ? value.map((t) => (typeof t?.plain_text === 'string' ? t.plain_text : (t?.text?.content ?? ''))).join('')
    : '';
}

// ---------------------------------------------------------------------------------------------
// Blocks

/** The ten block types the text tools write. */
export const TEXT_BLOCK_TYPES = [
  'paragraph',
  'heading_1',
  'heading_2',
  'heading_3',
  'bulleted_list_item',
  'numbered_list_item',
  'to_do',
  'quote',
  'callout',
  'code',
] as const;
export type TextBlockType = (typeof TEXT_BLOCK_TYPES)[number];

/** Languages Notion's code blocks accept. */
export const CODE_LANGUAGES = [
  'abap',
  'arduino',
  'bash',
  'basic',
  'c',
  'clojure',
  'coffeescript',
  'c++',
  'c#',
  'css',
  'dart',
  'diff',
  'docker',
  'elixir',
  'elm',
  'erlang',
  'flow',
  'fortran',
  'f#',
  'gherkin',
  'glsl',
  'go',
  'graphql',
  'groovy',
  'haskell',
  'html',
  'java',
  'javascript',
  'json',
  'julia',
  'kotlin',
  'latex',
  'less',
  'lisp',
  'livescript',
  'lua',
  'makefile',
  'markdown',
  'markup',
  'matlab',
  'mermaid',
  'nix',
  'objective-c',
  'ocaml',
  'pascal',
  'perl',
  'php',
  'plain text',
  'powershell',
  'prolog',
  'protobuf',
  'python',
  'r',
  'reason',
  'ruby',
  'rust',
  'sass',
  'scala',
  'scheme',
  'scss',
  'shell',
  'sql',
  'swift',
  'typescript',
  'vb.net',
  'verilog',
  'vhdl',
  'visual basic',
  'webassembly',
  'xml',
  'yaml',
  'java/c/c++/c#',
] as const;

export const BlockTypeSchema = stringEnum(
  TEXT_BLOCK_TYPES,
  'Block type: paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, quote, callout or code.',
);

export const LanguageSchema = stringEnum(
  CODE_LANGUAGES,
  'Language of a code block (only with type "code"), e.g. "python", "typescript", "plain text".',
);

export const BlockTextSchema = Type.String({
  maxLength: 100_000,
  description: 'The block text (plain text; long text is split into 2000-character runs as Notion requires).',
});

export const BlockInputSchema = Type.Object(
  {
    type: BlockTypeSchema,
    text: BlockTextSchema,
    language: Type.Optional(LanguageSchema),
    checked: Type.Optional(
      Type.Boolean({ description: 'Whether a to_do block is checked (only with type "to_do").' }),
    ),
  },
  { additionalProperties: false, description: 'One block: {"type": "paragraph", "text": "Hello"}.' },
);
export type BlockInput = Static<typeof BlockInputSchema>;

/** Rules for one block that the schema cannot say (`language` only on code, `checked` only on to_do). */
export function checkBlock(block: Partial<BlockInput>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (block.language !== undefined && block.type !== 'code') {
    errors.push({
      path: `${path}/language`,
      message: `"language" is only allowed when "type" is "code" (rule: only code blocks have a language); remove it or set type "code".`,
    });
  }
  if (block.checked !== undefined && block.type !== 'to_do') {
    errors.push({
      path: `${path}/checked`,
      message: `"checked" is only allowed when "type" is "to_do" (rule: only to-do blocks can be checked); remove it or set type "to_do".`,
    });
  }
  return errors;
}

/** The type payload of a block (what goes under `block[type]`). */
export function blockPayload(block: BlockInput, update = false): Record<string, unknown> {
  const payload: Record<string, unknown> = { rich_text: richText(block.text) };
  if (block.type === 'code' && (block.language !== undefined || !update)) {
    payload.language = block.language ?? 'plain text';
  }
  if (block.type === 'to_do' && block.checked !== undefined) payload.checked = block.checked;
  return payload;
}

/** A block as Notion's append/create endpoints take it. */
export function toNotionBlock(block: BlockInput): Record<string, unknown> {
  return { object: 'block', type: block.type, [block.type]: blockPayload(block) };
}

// ---------------------------------------------------------------------------------------------
// Icons and covers

export const IconSchema = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Page icon: an emoji ("🚀") or the https URL of an image.',
});
export const CoverSchema = Type.String({
  format: 'uri',
  pattern: '^https?://',
  maxLength: 2048,
  description: 'Cover image: the http(s) URL of an external image.',
});

export function toIcon(value: string | null): Record<string, unknown> | null {
  if (value === null) return null;
  return /^https?:\/\//i.test(value)
    ? { type: 'external', external: { url: value } }
    : { type: 'emoji', emoji: value };
}

export function toCover(value: string | null): Record<string, unknown> | null {
  return value === null ? null : { type: 'external', external: { url: value } };
}

/** POST /v1/pages: a page (or database row) with its properties, optional content, icon and cover. */
export async function createPage(
  client: ProviderClient,
  parent: Record<string, unknown>,
  properties: Record<string, unknown>,
  input: { blocks?: BlockInput[]; icon?: string | null; cover?: string | null },
): Promise<Record<string, unknown>> {
  const res = await client.request({
    method: 'POST',
    path: '/v1/pages',
    json: {
      parent,
      properties,
      ...(input.blocks ? { children: input.blocks.map(toNotionBlock) } : {}),
      ...(input.icon !== undefined ? { icon: toIcon(input.icon) } : {}),
      ...(input.cover !== undefined ? { cover: toCover(input.cover) } : {}),
    },
  });
  return withoutRequestId(res.data);
}

// ---------------------------------------------------------------------------------------------
// Paging

export const PageSizeSchema = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: 'How many results to return (1-100; Notion default 100).',
});
export const StartCursorSchema = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'Continue a previous listing: pass next_page.start_cursor from the previous result.',
});

/** A Notion list as a tool result: the items, and exactly what to pass to get the next page. */
export function listResult(body: unknown, results = (body as { results?: unknown[] }).results ?? []) {
  const cursor = (body as { next_cursor?: string | null }).next_cursor ?? null;
  return { results, next_cursor: cursor, ...paged('start_cursor', cursor) };
}

/** Notion's answer without the request id (it identifies the HTTP call, not the object). */
export function withoutRequestId(body: unknown): Record<string, unknown> {
  const { request_id: _ignored, ...rest } = (body ?? {}) as Record<string, unknown>;
  return rest;
}

// ---------------------------------------------------------------------------------------------
// Page property values

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
      'Column values keyed by column name (or property id). Plain values are converted by column type: title/rich_text/url/email/phone_number/select/status take a string, number a number, checkbox a boolean, multi_select an array of option names, date an ISO date string ("2025-01-31" or "2025-01-31T10:00:00Z"), people/relation an array of ids, files an array of URLs; null clears. Notion\'s own value objects (e.g. {"select": {"name": "High"}}) are also accepted.',
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
  columns: Array<{ id: string; name: string; type: string }>,
  path = '/tool_input/properties',
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(values)) {
    const column =
      columns.find((c) => c.name === key) ??
      columns.find((c) => c.id === key || safeDecode(c.id) === key) ??
      (key === 'title' ? columns.find((c) => c.type === 'title') : undefined);
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

/** The columns (`id`, `name`, `type`) of a Notion database or page `properties` object. */
export function columnsOf(properties: unknown): Array<{ id: string; name: string; type: string }> {
  return Object.entries(isRecord(properties) ? properties : {}).map(([name, p]) => ({
    id: String((p as { id?: unknown }).id ?? name),
    name,
    type: String((p as { type?: unknown }).type ?? ''),
  }));
}

/** The database's columns, fetched from Notion. */
export async function databaseColumns(client: ProviderClient, databaseId: string) {
  const res = await client.request<{ properties?: unknown }>({
    method: 'GET',
    path: `/v1/databases/${encodeURIComponent(databaseId)}`,
  });
  return columnsOf(res.data.properties);
}

/** A rule violation of the input, as the engine reports it. */
export function rule(path: string, message: string): FieldError {
  return { path, message };
}

/**
 * The "exactly one of a or b" rule: neither is reported at the input's root, both at the second
 * field. The message quotes the rule.
 */
export function exactlyOne(input: Record<string, unknown>, a: string, b: string, why: string): FieldError[] {
  const hasA = input[a] !== undefined;
  const hasB = input[b] !== undefined;
  if (hasA !== hasB) return [];
  return [
    {
      path: hasA ? `/${b}` : '/',
      message: `Provide exactly one of "${a}" or "${b}" (rule: ${why}).`,
    },
  ];
}

export { stringEnum };
