import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { formatTool } from '../tools/formats.js';
import type { AnyTool } from '../tools/types.js';
import { VERSION_PARAMETERS } from '../tools/versions.js';

/**
 * What every provider tool's structuredContent holds: the tool's own output (its fields vary by
 * tool, so they stay open) and the execution record's id.
 */
export const TOOL_OUTPUT_SCHEMA: NonNullable<Tool['outputSchema']> = {
  type: 'object',
  properties: {
    execution_id: {
      type: 'string',
      description: 'The execution record of this call (GET /api/v1/executions/{execution_id}).',
    },
  },
  required: ['execution_id'],
  additionalProperties: true,
};

const definitions = new WeakMap<AnyTool, Tool>();

/**
 * A provider tool as the model reads it over MCP. The version parameters stay accepted in the
 * input (the engine takes them out before validation) but are left out of the schema: they are
 * operators' overrides, and a model that sees them fills them in.
 */
export function modelFacingTool(source: AnyTool): Tool {
  let tool = definitions.get(source);
  if (!tool) {
    const described = formatTool(source, 'mcp') as unknown as Tool;
    const properties = { ...described.inputSchema.properties };
    for (const parameter of VERSION_PARAMETERS) delete properties[parameter];
    tool = {
      ...described,
      inputSchema: { ...described.inputSchema, properties },
      outputSchema: TOOL_OUTPUT_SCHEMA,
    };
    definitions.set(source, tool);
  }
  return tool;
}
