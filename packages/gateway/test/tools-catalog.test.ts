import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { getProvider } from '../src/providers/catalog.js';
import { TOOLS } from '../src/tools/catalog.js';
import { formatTool, TOOL_FORMATS } from '../src/tools/formats.js';
import { publishedInput } from '../src/tools/versions.js';
import { bodyAjv } from '../src/validation/validator.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const toolsGuide = readFileSync(`${root}docs/guides/tools.md`, 'utf8');

describe('tool catalog', () => {
  it('has the 45 tools of the specification, each named for its provider', () => {
    expect(TOOLS).toHaveLength(45);
    expect(new Set(TOOLS.map((t) => t.name)).size).toBe(45);
    for (const tool of TOOLS) {
      expect(tool.name.startsWith(`${getProvider(tool.provider).toolPrefix}_`), tool.name).toBe(true);
    }
  });

  it('gives every tool a strict, valid JSON Schema and an LLM-ready description', () => {
    const ajv = new Ajv({ strict: false });
    for (const tool of TOOLS) {
      const schema = JSON.parse(JSON.stringify(tool.input)) as Record<string, unknown>;
      expect(ajv.validateSchema(schema), tool.name).toBe(true);
      expect(schema.type, tool.name).toBe('object');
      expect(schema.additionalProperties, tool.name).toBe(false);
      for (const [name, property] of Object.entries(
        schema.properties as Record<string, { description?: string }>,
      )) {
        expect(property.description, `${tool.name}.${name}`).toBeTruthy();
      }
      expect(tool.description.length, tool.name).toBeGreaterThan(80);
      expect(tool.description, tool.name).toMatch(/example/i);
    }
  });

  it('compiles every input schema with the engine’s validator (the engine compiles each at first call)', () => {
    for (const tool of TOOLS) expect(typeof bodyAjv.compile(tool.input), tool.name).toBe('function');
  });

  it('gives every tool in every format as the LLM APIs accept it', () => {
    // OpenAI: names ^[a-zA-Z0-9_-]{1,64}$, function descriptions of at most 1,024 characters; OpenAI
    // and Anthropic: an object schema at the top level without top-level combinators.
    for (const tool of TOOLS) {
      for (const format of TOOL_FORMATS) {
        // biome-ignore lint/suspicious/noExplicitAny: each format is asserted as loose JSON
        const out = formatTool(tool, format) as Record<string, any>;
        const fn = format === 'openai' ? out.function : out;
        expect(fn.name, `${format} ${tool.name}`).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
        expect(fn.description.length, `${format} ${tool.name}`).toBeLessThanOrEqual(1024);
        const schema = fn.parameters ?? fn.input_schema ?? fn.inputSchema;
        expect(schema.type, `${format} ${tool.name}`).toBe('object');
        for (const combinator of ['anyOf', 'oneOf', 'allOf', 'not', 'enum']) {
          expect(schema[combinator], `${format} ${tool.name} top-level ${combinator}`).toBeUndefined();
        }
        // One schema in every format: the tool's own parameters, then the version parameters.
        expect(JSON.stringify(schema), `${format} ${tool.name}`).toBe(JSON.stringify(publishedInput(tool)));
        expect(schema.properties).toMatchObject({
          schema_version: { type: 'string' },
          tool_version: { type: 'string' },
        });
      }
    }
  });

  it('is listed completely in the tools guide and in docs/tools', () => {
    for (const tool of TOOLS) {
      expect(toolsGuide, tool.name).toContain(`\`${tool.name}\``);
      const family = tool.name.split('_')[0]!;
      const page = readFileSync(`${root}docs/tools/${family === 'notes' ? 'notes' : family}.md`, 'utf8');
      expect(page, tool.name).toContain(`### ${tool.name}`);
    }
  });
});
