/**
 * Vercel AI SDK: a `ToolSet` of `tool()` objects whose `execute` runs through Portico, for
 * `generateText({ tools })` / `streamText({ tools })`.
 */
import { jsonSchema, type Tool, tool } from 'ai';
import type { ToolFramework } from '../tools/framework.js';
import { checkDefinition } from '../tools/llm-schema.js';

/** What a Portico tool returns to the application (`toolResults[].output`). */
export type PorticoToolOutput =
  | { ok: true; data: unknown; executionId: string }
  | { ok: false; code: string; detail: string; text: string };

export type PorticoToolSet = Record<string, Tool<Record<string, unknown>, PorticoToolOutput>>;

export const aiSdk: ToolFramework<PorticoToolSet> = {
  name: 'ai',
  build(tools, context) {
    const set: PorticoToolSet = {};
    for (const definition of tools) {
      checkDefinition(definition);
      set[definition.name] = tool<Record<string, unknown>, PorticoToolOutput>({
        description: definition.description,
        // The gateway validates the input and answers the model what to change; no second validator here.
        inputSchema: jsonSchema<Record<string, unknown>>(
          definition.inputSchema as Parameters<typeof jsonSchema>[0],
        ),
        execute: async (input) => {
          const outcome = await context.run(definition.name, input);
          return outcome.ok
            ? { ok: true, data: outcome.data, executionId: outcome.executionId }
            : { ok: false, code: outcome.error.code, detail: outcome.error.detail, text: outcome.text };
        },
        // A failure reaches the model as an error result carrying the problem's text.
        toModelOutput: ({ output }) =>
          output.ok
            ? { type: 'text', value: JSON.stringify(output.data) }
            : { type: 'error-text', value: output.text },
      });
    }
    return set;
  },
};
