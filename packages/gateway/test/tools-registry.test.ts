import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { specificationTools, TOOLS } from '../src/tools/catalog.js';
import { COMPILED_PRECEDENCE, ToolRegistry, type ToolSource } from '../src/tools/registry.js';
import { type AnyTool, defineTool } from '../src/tools/types.js';

function tool(name: string, extra: Partial<AnyTool> = {}): AnyTool {
  return defineTool({
    name,
    description: `the ${name} tool`,
    provider: 'github',
    input: Type.Object({ q: Type.String() }),
    annotations: { read_only: true, destructive: false, idempotent: true },
    run: async () => ({ from: extra.description ?? name }),
    ...extra,
  });
}

describe('the tool registry', () => {
  it('keeps the specification tools first and lets them win a name', () => {
    const spec = TOOLS[0]!;
    const other = tool(spec.name, { description: 'compiled twin' });
    const registry = new ToolRegistry([
      { id: 'compiled', precedence: COMPILED_PRECEDENCE, tools: () => [other, tool('github_x')] },
      specificationTools,
    ]);
    expect(registry.get(spec.name)).toBe(spec);
    expect(registry.sourceOf(spec.name)).toBe('specification');
    expect(registry.sourceOf('github_x')).toBe('compiled');
    const names = registry.names();
    expect(names.slice(0, TOOLS.length)).toEqual(TOOLS.map((t) => t.name));
    expect(names.filter((n) => n === spec.name)).toHaveLength(1);
    expect(names).toHaveLength(TOOLS.length + 1);
  });

  it('reads a source only when a question needs it', () => {
    let reads = 0;
    const lazy: ToolSource = {
      id: 'lazy',
      precedence: COMPILED_PRECEDENCE,
      providers: ['github'],
      mayServe: (name) => name.startsWith('github_'),
      tools: () => {
        reads += 1;
        return [tool('github_y')];
      },
    };
    const registry = new ToolRegistry([specificationTools, lazy]);
    expect(registry.get('notes_page_create')?.name).toBe('notes_page_create');
    expect(registry.get('calendar_nothing')).toBeUndefined();
    expect(registry.list({ provider: 'notion' }).length).toBeGreaterThan(0);
    expect(reads).toBe(0);
    expect(registry.get('github_y')?.name).toBe('github_y');
    registry.list();
    expect(reads).toBe(1);
  });

  it('tells listeners of a change and bumps its version; a removed source is gone', () => {
    let changed: () => void = () => {};
    let tools = [tool('mcp_a')];
    const remote: ToolSource = {
      id: 'mcp:one',
      precedence: 200,
      tools: () => tools,
      watch: (callback) => {
        changed = callback;
      },
    };
    const registry = new ToolRegistry([specificationTools]);
    const seen: number[] = [];
    registry.onChange((v) => seen.push(v));
    const before = registry.version;
    const remove = registry.register(remote);
    expect(registry.get('mcp_a')).toBeDefined();
    tools = [tool('mcp_b')];
    changed();
    expect(registry.get('mcp_a')).toBeUndefined();
    expect(registry.get('mcp_b')).toBeDefined();
    remove();
    expect(registry.get('mcp_b')).toBeUndefined();
    expect(registry.version).toBe(before + 3);
    expect(seen).toEqual([before + 1, before + 2, before + 3]);
    expect(() => registry.register(specificationTools)).toThrow(/registered twice/);
  });

  it('shows an environment-bound tool only in its environment', () => {
    const registry = new ToolRegistry([
      {
        id: 'mcp',
        precedence: 200,
        tools: () => [
          tool('mcp_same', { environmentId: 'env_a', description: 'a' }),
          tool('mcp_same', { environmentId: 'env_b', description: 'b' }),
        ],
      },
    ]);
    expect(registry.get('mcp_same')).toBeUndefined();
    expect(registry.get('mcp_same', 'env_a')?.description).toBe('a');
    expect(registry.get('mcp_same', 'env_b')?.description).toBe('b');
    expect(registry.list({ environmentId: 'env_a' }).map((t) => t.description)).toEqual(['a']);
    expect(registry.list()).toEqual([]);
  });

  it('compiles a validator once, at the first use', () => {
    const registry = new ToolRegistry([specificationTools]);
    const t = registry.get('notes_page_create')!;
    const validate = registry.validator(t);
    expect(registry.validator(t)).toBe(validate);
    expect(validate({ no_such_parameter: 1 })).toBe(false);
  });
});
