import type { AnyTool } from './types.js';
import { publishedInput } from './versions.js';

export const TOOL_FORMATS = ['json_schema', 'openai', 'anthropic', 'mcp'] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];

/**
 * A tool definition as each agent framework expects it, all generated from the one definition.
 * `shared`: the caller only serializes the result, so it may hold the catalog's own schema
 * instead of a copy.
 */
export function formatTool(
  tool: AnyTool,
  format: ToolFormat,
  { shared = false }: { shared?: boolean } = {},
): Record<string, unknown> {
  const schema = shared ? publishedInput(tool) : structuredClone(publishedInput(tool));
  switch (format) {
    case 'openai':
      return {
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: schema },
      };
    case 'anthropic':
      return { name: tool.name, description: tool.description, input_schema: schema };
    case 'mcp':
      return {
        name: tool.name,
        description: tool.description,
        inputSchema: schema,
        annotations: {
          readOnlyHint: tool.annotations.read_only,
          destructiveHint: tool.annotations.destructive,
          idempotentHint: tool.annotations.idempotent,
          // Every tool acts on a provider outside Portico.
          openWorldHint: true,
        },
      };
    default:
      return {
        name: tool.name,
        description: tool.description,
        provider: tool.provider,
        input_schema: schema,
        annotations: tool.annotations,
        versions: tool.versions ?? ['1'],
      };
  }
}

const serialized: Record<ToolFormat, WeakMap<AnyTool, string>> = {
  json_schema: new WeakMap(),
  openai: new WeakMap(),
  anthropic: new WeakMap(),
  mcp: new WeakMap(),
};

/**
 * The tool as `formatTool` gives it, serialized once per tool and format. Listing thousands of
 * compiled tools rebuilt and re-serialized every definition on every request: 5 MB of garbage per
 * listing, kept in the old generation until V8's threshold (NODE_FLAGS) and so in the RSS.
 */
export function formattedJson(tool: AnyTool, format: ToolFormat): string {
  let json = serialized[format].get(tool);
  if (json === undefined) {
    json = JSON.stringify(formatTool(tool, format, { shared: true }));
    serialized[format].set(tool, json);
  }
  return json;
}
