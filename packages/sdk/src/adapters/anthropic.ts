/**
 * Anthropic Messages API: `tools` definitions and `tool_use` → `tool_result`. Types only: nothing
 * of `@anthropic-ai/sdk` is loaded at run time.
 */
import type { MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ToolContext, ToolFramework } from '../tools/framework.js';
import { checkDefinition } from '../tools/llm-schema.js';

export interface AnthropicTools {
  /** For `messages.create({ tools })`. */
  definitions: Tool[];
  /**
   * Runs the assistant message's `tool_use` blocks for Portico's tools and returns the user message
   * carrying their `tool_result` blocks (none when there was nothing to run). A failure is a result
   * with `is_error: true` whose text is the problem, for the model to correct its call. Blocks for
   * other tools are left to the application.
   */
  run(message: { content: ReadonlyArray<{ type: string }> }): Promise<MessageParam[]>;
  /** The same, as bare `tool_result` blocks (to merge with results of the application's own tools). */
  results(message: { content: ReadonlyArray<{ type: string }> }): Promise<ToolResultBlockParam[]>;
}

interface ToolUse {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export const anthropic: ToolFramework<AnthropicTools> = {
  name: 'anthropic',
  build(tools, context: ToolContext) {
    const names = new Set<string>();
    const definitions: Tool[] = tools.map((tool) => {
      checkDefinition(tool);
      names.add(tool.name);
      return {
        name: tool.name,
        description: tool.description,
        input_schema: tool.inputSchema as Tool.InputSchema,
      };
    });
    const results: AnthropicTools['results'] = async (message) => {
      const out: ToolResultBlockParam[] = [];
      for (const block of message.content) {
        if (block.type !== 'tool_use') continue;
        const use = block as ToolUse;
        if (!names.has(use.name)) continue;
        const outcome = await context.run(use.name, use.input);
        out.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: outcome.text,
          ...(outcome.ok ? {} : { is_error: true }),
        });
      }
      return out;
    };
    return {
      definitions,
      results,
      async run(message) {
        const content = await results(message);
        return content.length ? [{ role: 'user', content }] : [];
      },
    };
  },
};
