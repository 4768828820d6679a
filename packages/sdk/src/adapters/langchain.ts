/**
 * LangChain.js: structured tools (`DynamicStructuredTool`) whose calls run through Portico, for
 * `model.bindTools(tools)` and agents; `runToolCalls` turns an `AIMessage`'s tool calls into
 * `ToolMessage`s.
 */
import type { AIMessage } from '@langchain/core/messages';
import { ToolMessage } from '@langchain/core/messages';
import {
  DynamicStructuredTool,
  ToolInputParsingException,
  type ToolRunnableConfig,
} from '@langchain/core/tools';
import type { JSONSchema } from '@langchain/core/utils/json_schema';
import type { ToolContext, ToolFramework, ToolOutcome } from '../tools/framework.js';
import { checkDefinition } from '../tools/llm-schema.js';

export type PorticoLangChainTool = DynamicStructuredTool<
  JSONSchema,
  Record<string, unknown>,
  unknown,
  string | ToolMessage
>;

/** How each tool built here runs outside LangChain's own input check (see `runToolCalls`). */
const runners = new WeakMap<object, (input: unknown, toolCallId: string) => Promise<ToolMessage>>();

/**
 * The ToolMessage of an outcome: an error one when Portico refused the call. When the user must
 * connect an account, the content leads with the link and the `artifact` is the authorization.
 */
function message(
  name: string,
  toolCallId: string,
  outcome: Pick<ToolOutcome, 'ok' | 'text' | 'authorization'>,
): ToolMessage {
  return new ToolMessage({
    content: outcome.text,
    tool_call_id: toolCallId,
    name,
    status: outcome.ok ? 'success' : 'error',
    ...(outcome.authorization ? { artifact: outcome.authorization } : {}),
  });
}

export const langchain: ToolFramework<PorticoLangChainTool[]> = {
  name: 'langchain',
  build(tools, context: ToolContext) {
    return tools.map((definition) => {
      checkDefinition(definition);
      const runAs = async (input: unknown, toolCallId: string) => {
        const outcome = await context.run(definition.name, input);
        return message(definition.name, toolCallId, outcome);
      };
      const structured: PorticoLangChainTool = new DynamicStructuredTool({
        name: definition.name,
        description: definition.description,
        schema: definition.inputSchema as JSONSchema,
        verboseParsingErrors: true,
        func: async (input: Record<string, unknown>, _runManager?: unknown, config?: ToolRunnableConfig) => {
          const toolCallId = config?.toolCall?.id;
          // Invoked with a tool call: a ToolMessage, an error one when Portico refused the call.
          if (toolCallId) return runAs(input, toolCallId);
          const outcome = await context.run(definition.name, input);
          // An account to connect is an answer for the model (the link and what to say), not a throw.
          if (!outcome.ok && !outcome.authorization) throw outcome.error;
          return outcome.text;
        },
      });
      runners.set(structured, runAs);
      return structured;
    });
  },
};

/**
 * Runs an `AIMessage`'s calls to the given Portico tools and returns the `ToolMessage`s to append.
 * Input LangChain's own schema check refuses still goes to Portico, whose answer says exactly which
 * field to change; calls to other tools are left to the application.
 */
export async function runToolCalls(
  tools: PorticoLangChainTool[],
  aiMessage: AIMessage,
): Promise<ToolMessage[]> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const out: ToolMessage[] = [];
  for (const call of aiMessage.tool_calls ?? []) {
    const structured = byName.get(call.name);
    const runAs = structured && runners.get(structured);
    if (!structured || !runAs) continue;
    const id = call.id ?? '';
    try {
      const result = await structured.invoke({ ...call, id, type: 'tool_call' });
      out.push(
        result instanceof ToolMessage ? result : message(call.name, id, { ok: true, text: String(result) }),
      );
    } catch (error) {
      if (!(error instanceof ToolInputParsingException)) throw error;
      out.push(await runAs(call.args, id));
    }
  }
  return out;
}
