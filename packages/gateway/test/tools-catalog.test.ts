import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../src/providers/catalog.js';
import { TOOLS } from '../src/tools/catalog.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');

describe('tool catalog', () => {
  it('has the 45 tools of the specification, each named for its provider', () => {
    expect(TOOLS).toHaveLength(45);
    expect(new Set(TOOLS.map((t) => t.name)).size).toBe(45);
    for (const tool of TOOLS) {
      expect(tool.name.startsWith(`${PROVIDERS[tool.provider].toolPrefix}_`), tool.name).toBe(true);
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

  it('is listed completely in the README and in docs/tools', () => {
    for (const tool of TOOLS) {
      expect(readme, tool.name).toContain(`\`${tool.name}\``);
      const family = tool.name.split('_')[0]!;
      const page = readFileSync(`${root}docs/tools/${family === 'notes' ? 'notes' : family}.md`, 'utf8');
      expect(page, tool.name).toContain(`### ${tool.name}`);
    }
  });
});
