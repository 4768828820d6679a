import type { JsonSchema, ToolDefinition } from '../types.js';

/** What every LLM API accepts as a tool name. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** OpenAI's limit on a function description. */
export const MAX_DESCRIPTION = 1024;

/**
 * Refuses a definition an LLM API would refuse, before the model sees it: the name must match
 * `TOOL_NAME` and the input schema must be an object without top-level `anyOf`/`oneOf`/`allOf`
 * (the gateway's catalog guarantees both; this keeps a future tool from failing a whole request).
 */
export function checkDefinition(tool: ToolDefinition): void {
  if (!TOOL_NAME.test(tool.name)) {
    throw new Error(`Portico tool "${tool.name}" has a name LLM APIs refuse (${TOOL_NAME}).`);
  }
  const schema = tool.inputSchema;
  if (schema.type !== 'object' || ['anyOf', 'oneOf', 'allOf', 'not', 'enum'].some((k) => k in schema)) {
    throw new Error(`Portico tool "${tool.name}" has an input schema LLM APIs refuse at its top level.`);
  }
}

/** A description within `max` characters, cut at a sentence (or word) boundary when it must be cut. */
export function fitDescription(description: string, max = MAX_DESCRIPTION): string {
  if (description.length <= max) return description;
  const head = description.slice(0, max - 1);
  const sentence = head.lastIndexOf('. ');
  const cut = sentence > max / 2 ? sentence + 1 : head.lastIndexOf(' ');
  return `${head.slice(0, cut > 0 ? cut : max - 1).trimEnd()}…`;
}

// Keywords OpenAI's strict mode accepts; others are dropped from the strict copy (the gateway still
// validates the call against the full schema and answers the model what to fix).
const STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);
const STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

/**
 * The schema in the form OpenAI's strict mode requires (every object closed, every property
 * required, optional ones made nullable), or `undefined` when it cannot be: an object whose keys are
 * free (`additionalProperties` not false, `patternProperties`) has no strict form.
 */
export function strictSchema(schema: JsonSchema): JsonSchema | undefined {
  try {
    return strictNode(schema);
  } catch (error) {
    if (error === NOT_STRICT) return undefined;
    throw error;
  }
}

const NOT_STRICT = Symbol('not strict');

function strictNode(node: JsonSchema): JsonSchema {
  if ('patternProperties' in node || '$ref' in node || 'oneOf' in node || 'allOf' in node || 'not' in node) {
    throw NOT_STRICT;
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (!STRICT_KEYWORDS.has(key)) continue;
    if (key === 'format' && !STRICT_FORMATS.has(value as string)) continue;
    out[key] = value;
  }
  const isObject = node.type === 'object' || (node.properties !== undefined && node.type === undefined);
  if (isObject) {
    if (node.additionalProperties !== false) throw NOT_STRICT;
    const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((node.required as string[] | undefined) ?? []);
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, property]) => {
        const strict = strictNode(property);
        return [name, required.has(name) ? strict : nullable(strict)];
      }),
    );
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  if (node.items !== undefined) {
    if (typeof node.items !== 'object' || Array.isArray(node.items)) throw NOT_STRICT;
    out.items = strictNode(node.items as JsonSchema);
  }
  if (Array.isArray(node.anyOf)) out.anyOf = (node.anyOf as JsonSchema[]).map(strictNode);
  return out;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  const { description, ...rest } = schema;
  return {
    ...(description === undefined ? {} : { description }),
    anyOf: [rest, { type: 'null' }],
  };
}

/**
 * Undoes `strictSchema`'s nullable optionals in a call's arguments: a null where the original
 * schema had an optional property that does not allow null means "not given", so it is dropped.
 */
export function dropStrictNulls(value: unknown, schema: JsonSchema): unknown {
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return items && typeof items === 'object' ? value.map((v) => dropStrictNulls(v, items)) : value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(schema.anyOf)) {
    return (schema.anyOf as JsonSchema[]).reduce<unknown>((v, branch) => dropStrictNulls(v, branch), value);
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties) return value;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    const property = properties[key];
    if (field === null && property && !required.has(key) && !allowsNull(property)) continue;
    out[key] = property ? dropStrictNulls(field, property) : field;
  }
  return out;
}

function allowsNull(schema: JsonSchema): boolean {
  const type = schema.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  return Array.isArray(schema.anyOf) && (schema.anyOf as JsonSchema[]).some(allowsNull);
}

/** Parses a model's JSON arguments; a parse failure is reported to the model like any bad input. */
export function parseArguments(text: string): { ok: true; value: unknown } | { ok: false; text: string } {
  try {
    const value = text.trim() === '' ? {} : JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { ok: false, text: 'The tool arguments must be a JSON object.' };
    }
    return { ok: true, value };
  } catch (error) {
    return {
      ok: false,
      text: `The tool arguments are not valid JSON (${(error as Error).message}); send a JSON object.`,
    };
  }
}
