/**
 * Vercel AI SDK: a `ToolSet` of `tool()` objects whose `execute` runs through Portico, for
 * `generateText({ tools })` / `streamText({ tools })`.
 */
import { jsonSchema, type Tool, tool } from 'ai';
import type { AuthorizationRequired } from '../tools/authorization.js';
import type { ToolFramework, ToolOutcome } from '../tools/framework.js';
import { checkDefinition } from '../tools/llm-schema.js';

/**
 * What a Portico tool returns to the application (`toolResults[].output`): the data; the link
 * `portico_authorize` made (`authorization`); or the problem, with `authorization` when the user
 * must connect an account first (`text`, what the model reads, then leads with the link).
 */
export type PorticoToolOutput =
  | { ok: true; data: unknown; executionId: string }
  | { ok: true; authorization: AuthorizationRequired; text: string }
  | { ok: false; code: string; detail: string; text: string; authorization?: AuthorizationRequired };

function toOutput(outcome: ToolOutcome): PorticoToolOutput {
  if (!outcome.ok) {
    return {
      ok: false,
      code: outcome.error.code,
      detail: outcome.error.detail,
      text: outcome.text,
      ...(outcome.authorization ? { authorization: outcome.authorization } : {}),
    };
  }
  if (outcome.authorization) return { ok: true, authorization: outcome.authorization, text: outcome.text };
  return { ok: true, data: outcome.data, executionId: outcome.executionId };
}

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
        execute: async (input) => toOutput(await context.run(definition.name, input)),
        // A failure reaches the model as an error result carrying the problem's text (the link
        // first when the user must connect an account).
        toModelOutput: ({ output }) =>
          !output.ok
            ? { type: 'error-text', value: output.text }
            : 'authorization' in output
              ? { type: 'text', value: output.text }
              : { type: 'text', value: JSON.stringify(output.data) },
      });
    }
    return set;
  },
};
