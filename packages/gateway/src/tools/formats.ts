import type { AnyTool } from './types.js';
import { publishedInput } from './versions.js';

export const TOOL_FORMATS = ['json_schema', 'openai', 'anthropic', 'mcp'] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];

/** A tool definition as each agent framework expects it, all generated from the one definition. */
export function formatTool(tool: AnyTool, format: ToolFormat): Record<string, unknown> {
  const schema = structuredClone(publishedInput(tool));
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
