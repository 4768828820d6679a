/**
 * OpenAI: Chat Completions function tools (`openaiChat`) and Responses API function tools
 * (`openaiResponses`). Types only: nothing of the `openai` package is loaded at run time.
 */
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type {
  FunctionTool,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseOutputItem,
} from 'openai/resources/responses/responses';
import type { ToolContext, ToolFramework } from '../tools/framework.js';
import {
  checkDefinition,
  dropStrictNulls,
  fitDescription,
  parseArguments,
  strictSchema,
} from '../tools/llm-schema.js';
import type { JsonSchema, ToolDefinition } from '../types.js';

interface Prepared {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Strict mode where the schema has a strict form; then the model's nulls mean "not given". */
  strict: boolean;
  original: JsonSchema;
}

function prepare(tool: ToolDefinition): Prepared {
  checkDefinition(tool);
  const strict = strictSchema(tool.inputSchema);
  return {
    name: tool.name,
    description: fitDescription(tool.description),
    parameters: strict ?? tool.inputSchema,
    strict: strict !== undefined,
    original: tool.inputSchema,
  };
}

/** Runs one function call; `undefined` when the function is not one of Portico's (the application's own). */
async function runCall(
  byName: Map<string, Prepared>,
  context: ToolContext,
  name: string,
  args: string,
): Promise<string | undefined> {
  const tool = byName.get(name);
  if (!tool) return undefined;
  const parsed = parseArguments(args);
  if (!parsed.ok) return parsed.text;
  const input = tool.strict ? dropStrictNulls(parsed.value, tool.original) : parsed.value;
  return (await context.run(name, input)).text;
}

export interface OpenAIChatTools {
  /** For `chat.completions.create({ tools })`. */
  definitions: ChatCompletionFunctionTool[];
  /**
   * Runs the assistant message's calls to Portico's tools and returns the `tool` messages to append
   * (a failure is a message whose content is the problem, for the model to correct its call).
   * Calls to other functions are left to the application.
   */
  run(message: {
    tool_calls?: ChatCompletionMessageToolCall[] | null;
  }): Promise<ChatCompletionToolMessageParam[]>;
}

export const openaiChat: ToolFramework<OpenAIChatTools> = {
  name: 'openai-chat',
  build(tools, context) {
    const prepared = tools.map(prepare);
    const byName = new Map(prepared.map((t) => [t.name, t]));
    return {
      definitions: prepared.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters, strict: t.strict },
      })),
      async run(message) {
        const out: ChatCompletionToolMessageParam[] = [];
        for (const call of message.tool_calls ?? []) {
          if (call.type !== 'function') continue;
          const content = await runCall(byName, context, call.function.name, call.function.arguments);
          if (content !== undefined) out.push({ role: 'tool', tool_call_id: call.id, content });
        }
        return out;
      },
    };
  },
};

export interface OpenAIResponsesTools {
  /** For `responses.create({ tools })`. */
  definitions: FunctionTool[];
  /**
   * Runs the response's `function_call` items for Portico's tools and returns the
   * `function_call_output` items to send back as input.
   */
  run(
    output: ResponseOutputItem[] | { output: ResponseOutputItem[] } | ResponseFunctionToolCall[],
  ): Promise<ResponseInputItem.FunctionCallOutput[]>;
}

export const openaiResponses: ToolFramework<OpenAIResponsesTools> = {
  name: 'openai-responses',
  build(tools, context) {
    const prepared = tools.map(prepare);
    const byName = new Map(prepared.map((t) => [t.name, t]));
    return {
      definitions: prepared.map((t) => ({
        type: 'function',
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        strict: t.strict,
      })),
      async run(output) {
        const items: Array<{ type: string }> = Array.isArray(output) ? output : output.output;
        const out: ResponseInputItem.FunctionCallOutput[] = [];
        for (const item of items) {
          if (item.type !== 'function_call') continue;
          const call = item as ResponseFunctionToolCall;
          const text = await runCall(byName, context, call.name, call.arguments);
          if (text !== undefined)
            out.push({ type: 'function_call_output', call_id: call.call_id, output: text });
        }
        return out;
      },
    };
  },
};
