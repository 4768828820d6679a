import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../src/tools/catalog.js';
import { formatTool } from '../src/tools/formats.js';
import { VERSION_PARAMETERS } from '../src/tools/versions.js';
import { bodyAjv as ajv } from '../src/validation/validator.js';

// The specification's tool tables, transcribed as data (docs/spec/tools.json), against every
// tool's published schema: names, types (a wider type is fine), required iff R, limits, values.

interface SpecParameter {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';
  items?: 'string' | 'object' | 'array';
  required: boolean;
  minimum?: number;
  maximum?: number;
  format?: 'uuid' | 'rfc3339' | 'date';
  values?: string[];
  computed?: boolean;
  versioning?: boolean;
}
interface SpecTool {
  name: string;
  parameters: SpecParameter[];
}
interface SpecFile {
  tools: SpecTool[];
  proxy_paths: unknown[];
}
type Schema = {
  type?: string | string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
};

const spec = JSON.parse(
  readFileSync(new URL('../../../docs/spec/tools.json', import.meta.url), 'utf8'),
) as SpecFile;

/** Every JSON type a schema (or any branch of it) admits. */
function typesOf(schema: Schema): Set<string> {
  const out = new Set<string>();
  if (Array.isArray(schema.type)) for (const t of schema.type) out.add(t);
  else if (schema.type) out.add(schema.type);
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])])
    for (const t of typesOf(branch)) out.add(t);
  return out;
}

function admits(schema: Schema, type: string): boolean {
  const types = typesOf(schema);
  return types.has(type) || (type === 'integer' && types.has('number'));
}

/** The branch of a schema that carries a given type (the schema itself when it is not a union). */
function branchOf(schema: Schema, type: string): Schema {
  if (!schema.anyOf && !schema.oneOf) return schema;
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].find((b) => admits(b, type)) ?? schema;
}

const SAMPLES: Record<string, unknown> = {
  uuid: '9adbce3c-958d-4ca1-8679-b7b8efbfb488',
  rfc3339: '2030-03-04T10:00:00+01:00',
  date: '2030-03-31',
};

const published = new Map(
  TOOLS.map((tool) => [tool.name, formatTool(tool, 'json_schema').input_schema as Schema]),
);

describe('docs/spec/tools.json, the specification transcribed', () => {
  it('lists the 45 tools and the 12 proxy paths, each tool once', () => {
    expect(spec.tools).toHaveLength(45);
    expect(new Set(spec.tools.map((t) => t.name)).size).toBe(45);
    expect(spec.proxy_paths).toHaveLength(12);
  });

  it('names exactly the tools Portico serves', () => {
    expect(spec.tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
  });

  it('holds every tool name and parameter name the specification text holds', () => {
    const text = readFileSync(new URL('../../../docs/spec/specification.md', import.meta.url), 'utf8');
    for (const tool of spec.tools) {
      const line = text.split('\n').find((l) => l.startsWith(`| \`${tool.name}\``));
      expect(line, tool.name).toBeDefined();
      for (const p of tool.parameters) {
        // "same parameters as …" and "all other parameters of create" name their parameters elsewhere.
        if (/same parameters as|all other parameters/.test(line!)) continue;
        expect(line, `${tool.name}.${p.name}`).toContain(p.name);
      }
    }
  });
});

describe.each(spec.tools)('$name takes the specification’s parameters', (tool) => {
  const schema = published.get(tool.name)!;
  const properties = schema.properties ?? {};

  it('every parameter under its own name, with its type, and no computed one', () => {
    for (const p of tool.parameters) {
      const where = `${tool.name}.${p.name}`;
      if (p.computed) {
        expect(properties, `${where} is computed, never taken from the caller`).not.toHaveProperty(p.name);
        continue;
      }
      const property = properties[p.name];
      expect(property, `${where} is missing`).toBeDefined();
      expect(admits(property!, p.type), `${where} must admit ${p.type}: ${JSON.stringify(property)}`).toBe(
        true,
      );
      if (p.items) {
        const items = branchOf(property!, 'array').items;
        expect(items, `${where} items`).toBeDefined();
        expect(admits(items!, p.items), `${where} items must admit ${p.items}`).toBe(true);
      }
    }
  });

  it("shows the specification's parameters first, in its order", () => {
    // The version parameters are appended to every published schema, so they take part in neither check.
    const versioning = new Set<string>(VERSION_PARAMETERS);
    const named = tool.parameters
      .filter((p) => !p.computed && !p.versioning && !versioning.has(p.name))
      .map((p) => p.name);
    const inSpec = new Set(named);
    const keys = Object.keys(properties).filter((key) => !versioning.has(key));
    expect(keys.filter((key) => inSpec.has(key))).toEqual(named);
    const lastSpecKey = keys.findLastIndex((key) => inSpec.has(key));
    const before = keys.slice(0, lastSpecKey + 1).filter((key) => !inSpec.has(key));
    expect(before, `${tool.name}: Portico's own parameters come after the specification's`).toEqual([]);
  });

  it('requires exactly the parameters marked R', () => {
    const required = tool.parameters.filter((p) => p.required).map((p) => p.name);
    expect([...(schema.required ?? [])].sort()).toEqual(required.sort());
  });

  it('keeps the stated limits, formats and values', () => {
    const validate = (name: string, value: unknown) =>
      ajv.validate({ type: 'object', properties: { [name]: properties[name] } }, { [name]: value });
    for (const p of tool.parameters) {
      if (p.computed) continue;
      const property = branchOf(properties[p.name]!, p.type);
      if (p.maximum !== undefined) {
        expect(property.maximum, `${tool.name}.${p.name} maximum`).toBe(p.maximum);
        expect(validate(p.name, p.maximum)).toBe(true);
        expect(validate(p.name, p.maximum + 1)).toBe(false);
      }
      if (p.minimum !== undefined) {
        expect(property.minimum, `${tool.name}.${p.name} minimum`).toBe(p.minimum);
        expect(validate(p.name, p.minimum)).toBe(true);
        expect(validate(p.name, p.minimum - 1)).toBe(false);
      }
      if (p.format)
        expect(validate(p.name, SAMPLES[p.format]), `${tool.name}.${p.name} ${p.format}`).toBe(true);
      for (const value of p.values ?? []) {
        expect(validate(p.name, value), `${tool.name}.${p.name} = ${value}`).toBe(true);
      }
    }
  });
});
