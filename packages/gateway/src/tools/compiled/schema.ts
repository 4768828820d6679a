import type { JsonSchema } from './operation.js';

/** How deep a tool's schema follows nested objects; below that a value is any JSON. */
export const MAX_SCHEMA_DEPTH = 5;
/** How many schema nodes one tool's input may have; past that, values are any JSON. */
export const MAX_SCHEMA_NODES = 600;
const MAX_BRANCHES = 12;

/** A description's schema dialect, as the converter needs it. */
export interface SchemaDialect {
  /** The schema a reference names and that name (a $ref in OpenAPI, a schema id in discovery). */
  resolve(schema: JsonSchema): { name: string; schema: JsonSchema } | undefined;
}

interface State {
  dialect: SchemaDialect;
  /** References being expanded: a reference met again inside itself is recursive. */
  stack: string[];
  nodes: number;
}

/** A budget shared by every schema of one tool's input. */
export function newBudget(dialect: SchemaDialect): State {
  return { dialect, stack: [], nodes: 0 };
}

const ANY: JsonSchema = {};
const KEPT_FORMATS = new Set(['date-time', 'date', 'email', 'uri']);

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return pattern.length <= 200;
  } catch {
    return false;
  }
}

/**
 * A provider's schema as a plain JSON Schema a tool validates with: types, enums, required sets,
 * properties, items and bounds; no prose, no defaults (the validator would fill them in), no
 * formats or patterns (their dialects differ from Ajv's); `$ref`s resolved; recursion and depth
 * cut off as "any JSON"; properties the provider marks read-only left out of what is sent.
 */
export function convertSchema(schema: JsonSchema | undefined, state: State, depth = 0): JsonSchema {
  if (!schema || typeof schema !== 'object') return ANY;
  state.nodes += 1;
  if (state.nodes > MAX_SCHEMA_NODES || depth > MAX_SCHEMA_DEPTH) return ANY;
  const ref = state.dialect.resolve(schema);
  if (ref) {
    if (state.stack.includes(ref.name)) return ANY;
    state.stack.push(ref.name);
    try {
      return convertSchema(ref.schema, state, depth);
    } finally {
      state.stack.pop();
    }
  }
  if (Array.isArray(schema.allOf)) return mergeAll(schema.allOf as JsonSchema[], state, depth);
  const out: JsonSchema = {};
  const branches = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(branches)) {
    if (branches.length > MAX_BRANCHES) return ANY;
    const converted = branches.map((b) => convertSchema(b, state, depth + 1));
    if (converted.some((b) => Object.keys(b).length === 0)) return ANY;
    out.anyOf = converted;
  }
  let type = schema.type as string | string[] | undefined;
  if (type === 'any') type = undefined;
  if (Array.isArray(type)) type = type.filter((t) => typeof t === 'string');
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    if (schema.nullable === true && !types.includes('null')) types.push('null');
    out.type = types.length === 1 ? types[0] : types;
  }
  if (Array.isArray(schema.enum)) out.enum = schema.enum;
  else if (schema.const !== undefined) out.enum = [schema.const];
  if (out.enum && Array.isArray(out.enum) && schema.nullable === true && !out.enum.includes(null)) {
    out.enum = [...out.enum, null];
  }
  // Only the formats every validator reads alike; a provider's own (int64, google-datetime) are not checked.
  if (typeof schema.format === 'string' && KEPT_FORMATS.has(schema.format)) out.format = schema.format;
  if (typeof schema.pattern === 'string' && compiles(schema.pattern)) out.pattern = schema.pattern;
  for (const bound of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']) {
    if (typeof schema[bound] === 'number') out[bound] = schema[bound];
  }
  if (schema.properties && typeof schema.properties === 'object') {
    const properties: Record<string, JsonSchema> = {};
    for (const [key, value] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
      if (value && typeof value === 'object' && value.readOnly === true) continue;
      properties[key] = convertSchema(value, state, depth + 1);
    }
    out.properties = properties;
    out.type ??= 'object';
  }
  if (Array.isArray(schema.required) && schema.required.length) {
    // Kept without properties too: a branch of oneOf that only requires one of its parent's fields.
    const properties = out.properties as Record<string, unknown> | undefined;
    const required = (schema.required as string[]).filter((k) => !properties || k in properties);
    if (required.length) out.required = required;
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    out.additionalProperties = convertSchema(schema.additionalProperties as JsonSchema, state, depth + 1);
  }
  if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) {
    out.items = convertSchema(schema.items as JsonSchema, state, depth + 1);
  }
  return out;
}

function mergeAll(parts: JsonSchema[], state: State, depth: number): JsonSchema {
  const converted = parts.map((p) => convertSchema(p, state, depth));
  if (converted.length === 1) return converted[0]!;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const part of converted) {
    if (part.type !== undefined && part.type !== 'object') return ANY;
    Object.assign(properties, part.properties ?? {});
    required.push(...((part.required as string[] | undefined) ?? []));
  }
  return { type: 'object', properties, ...(required.length ? { required: [...new Set(required)] } : {}) };
}

/** A short name for the body's type in a description (its schema's name), when it has one. */
export function schemaName(schema: JsonSchema | undefined, dialect: SchemaDialect): string | undefined {
  if (!schema) return undefined;
  return dialect.resolve(schema)?.name;
}
