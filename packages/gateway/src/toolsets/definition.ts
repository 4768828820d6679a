import { type Static, Type } from '@sinclair/typebox';
import { TAG_PATTERN } from '../tools/tags.js';
import type { AnyTool } from '../tools/types.js';

/** A toolset's name: the last segment of its MCP URL (/mcp/t/{name}), so URL-safe. */
export const TOOLSET_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

const names = (description: string, maxItems: number, item: Record<string, unknown> = {}) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 128, ...item }), {
    maxItems,
    uniqueItems: true,
    description,
  });

const SELECTORS = {
  tools: names('These tools, by name.', 500),
  patterns: names(
    'Tools whose name matches one of these patterns, where * stands for any characters (github_issues_*).',
    50,
    { pattern: '^[A-Za-z0-9_*-]+$' },
  ),
  providers: names("These providers' tools.", 50),
  connections: names("These connections' tools: their provider's, or their remote MCP server's own.", 50),
  tags: Type.Array(Type.String({ pattern: TAG_PATTERN }), {
    maxItems: 10,
    uniqueItems: true,
    description:
      'Only tools with every one of these tags (read-only, specification, calendar, …): they narrow what the other selectors choose, or the whole catalog when they are the only ones.',
  }),
};

const DESCRIPTION = Type.String({ maxLength: 500, description: 'What the toolset is for.' });
const MCP_MODE = Type.Union([Type.Literal('full'), Type.Literal('search')], {
  description:
    'How its MCP URL offers the tools: full (the list, default) or search (portico_search_tools and portico_call_tool); ?mode= on the URL overrides it.',
});

export const ToolsetBody = Type.Object(
  {
    name: Type.String({
      pattern: TOOLSET_NAME_PATTERN,
      description: 'Lower case, digits, - and _; at most 64.',
    }),
    description: Type.Optional(DESCRIPTION),
    tools: Type.Optional(SELECTORS.tools),
    patterns: Type.Optional(SELECTORS.patterns),
    providers: Type.Optional(SELECTORS.providers),
    connections: Type.Optional(SELECTORS.connections),
    tags: Type.Optional(SELECTORS.tags),
    mcp_mode: Type.Optional(MCP_MODE),
  },
  { additionalProperties: false },
);
export type ToolsetDefinition = Static<typeof ToolsetBody>;

/** A change: the fields given replace the toolset's, null clears one. */
export const ToolsetPatch = Type.Object(
  {
    description: Type.Optional(Type.Union([DESCRIPTION, Type.Null()])),
    tools: Type.Optional(Type.Union([SELECTORS.tools, Type.Null()])),
    patterns: Type.Optional(Type.Union([SELECTORS.patterns, Type.Null()])),
    providers: Type.Optional(Type.Union([SELECTORS.providers, Type.Null()])),
    connections: Type.Optional(Type.Union([SELECTORS.connections, Type.Null()])),
    tags: Type.Optional(Type.Union([SELECTORS.tags, Type.Null()])),
    mcp_mode: Type.Optional(MCP_MODE),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ToolsetChange = Static<typeof ToolsetPatch>;

/** The selectors that choose tools; tags only narrow. */
export const CHOOSING = ['tools', 'patterns', 'providers', 'connections'] as const;

/**
 * Whether a tool is in the toolset: it is chosen by one of the names, patterns, providers or
 * connections (or there are none of those: every tool), and it has every tag. `connections` are
 * given with their providers, looked up by the caller.
 */
export function memberOf(
  definition: ToolsetDefinition,
  connections: ReadonlyMap<string, string>,
  tagsOf: (tool: AnyTool) => readonly string[],
): (tool: AnyTool) => boolean {
  const tools = new Set(definition.tools ?? []);
  const providers = new Set(definition.providers ?? []);
  const patterns = (definition.patterns ?? []).map(
    (p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`),
  );
  const chooses = CHOOSING.some((key) => (definition[key]?.length ?? 0) > 0);
  const tags = definition.tags ?? [];
  return (tool) => {
    const chosen =
      !chooses ||
      tools.has(tool.name) ||
      providers.has(tool.provider) ||
      patterns.some((p) => p.test(tool.name)) ||
      (tool.connection
        ? connections.has(tool.connection)
        : [...connections.values()].includes(tool.provider));
    if (!chosen) return false;
    if (!tags.length) return true;
    const has = tagsOf(tool);
    return tags.every((tag) => has.includes(tag));
  };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
