/**
 * Anthropic Messages API: `tools` definitions and `tool_use` → `tool_result`. Types only: nothing
 * of `@anthropic-ai/sdk` is loaded at run time.
 */
import type {
  MessageParam,
  Tool,
  ToolReferenceBlockParam,
  ToolResultBlockParam,
  ToolUnion,
} from '@anthropic-ai/sdk/resources/messages';
import { AUTHORIZE_TOOL } from '../tools/authorization.js';
import type { ToolContext, ToolFramework } from '../tools/framework.js';
import { checkDefinition } from '../tools/llm-schema.js';
import { SEARCH_TOOLS_TOOL, searchInput, searchToolsDefinition } from '../tools/search.js';

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

type ToolUseMessage = { content: ReadonlyArray<{ type: string }> };

/**
 * A tool_result block for each of the message's tool_use blocks that names one of these tools, in
 * order; `intercept` answers a block itself (the search tool) or leaves it to the gateway.
 */
async function toolResults(
  message: ToolUseMessage,
  names: ReadonlySet<string>,
  context: ToolContext,
  intercept?: (use: ToolUse) => Promise<ToolResultBlockParam> | undefined,
): Promise<ToolResultBlockParam[]> {
  const out: ToolResultBlockParam[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_use') continue;
    const use = block as ToolUse;
    const answered = intercept?.(use);
    if (answered) {
      out.push(await answered);
      continue;
    }
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
}

/** The user turn that carries the results back to the model, or nothing when there are none. */
function userTurn(
  results: (message: ToolUseMessage) => Promise<ToolResultBlockParam[]>,
): (message: ToolUseMessage) => Promise<MessageParam[]> {
  return async (message) => {
    const content = await results(message);
    return content.length ? [{ role: 'user', content }] : [];
  };
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
    const results: AnthropicTools['results'] = (message) => toolResults(message, names, context);
    return { definitions, results, run: userTurn(results) };
  },
};

export interface AnthropicToolSearchOptions {
  /**
   * Who searches the deferred tools: Anthropic's own tool search tool, `bm25` (the model searches
   * in words; default) or `regex` (it writes patterns); or `portico`, a tool of the application's
   * (`portico_search_tools`) answered by the gateway's tool search with `tool_reference` blocks,
   * which load the matches the same way (Anthropic's custom tool search).
   */
  search?: 'bm25' | 'regex' | 'portico';
}

export interface AnthropicDeferredTools {
  /** For `messages.create({ tools })`: a tool search tool, then every tool with `defer_loading: true`. */
  definitions: ToolUnion[];
  run(message: { content: ReadonlyArray<{ type: string }> }): Promise<MessageParam[]>;
  results(message: { content: ReadonlyArray<{ type: string }> }): Promise<ToolResultBlockParam[]>;
}

const ANTHROPIC_SEARCH = {
  bm25: { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
  regex: { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
} as const;

/**
 * Anthropic's deferred loading: every tool is sent with `defer_loading: true`, so none enters
 * the model's context until a search finds it, and a tool search tool (see
 * `AnthropicToolSearchOptions.search`) finds them. `portico_authorize` stays loaded: the model
 * needs it when nothing is connected yet. Use it as `tools.for(anthropicToolSearch(), { identifier })`;
 * the model's `server_tool_use` and `tool_search_tool_result` blocks are Anthropic's, left alone.
 */
export function anthropicToolSearch(
  options: AnthropicToolSearchOptions = {},
): ToolFramework<AnthropicDeferredTools> {
  const search = options.search ?? 'bm25';
  return {
    name: `anthropic-tool-search-${search}`,
    build(tools, context) {
      const names = new Set<string>();
      const deferred: Tool[] = tools.map((tool) => {
        checkDefinition(tool);
        names.add(tool.name);
        return {
          name: tool.name,
          description: tool.description,
          input_schema: tool.inputSchema as Tool.InputSchema,
          ...(tool.name === AUTHORIZE_TOOL ? {} : { defer_loading: true }),
        };
      });
      const searcher: ToolUnion =
        search === 'portico'
          ? {
              name: SEARCH_TOOLS_TOOL,
              description: searchToolsDefinition.description,
              input_schema: searchToolsDefinition.inputSchema as Tool.InputSchema,
            }
          : { ...ANTHROPIC_SEARCH[search] };
      const intercept =
        search === 'portico'
          ? (use: ToolUse) => (use.name === SEARCH_TOOLS_TOOL ? referenceResult(use, context) : undefined)
          : undefined;
      const results: AnthropicDeferredTools['results'] = (message) =>
        toolResults(message, names, context, intercept);
      return { definitions: [searcher, ...deferred], results, run: userTurn(results) };
    },
  };
}

/** portico_search_tools answered as Anthropic's custom tool search: a tool_reference per match. */
async function referenceResult(use: ToolUse, context: ToolContext): Promise<ToolResultBlockParam> {
  const input = searchInput(use.input);
  if ('ok' in input) return { type: 'tool_result', tool_use_id: use.id, content: input.text, is_error: true };
  const { tools } = await context.search(input.query, input.limit);
  if (!tools.length) {
    return {
      type: 'tool_result',
      tool_use_id: use.id,
      content: 'No tool fits these words; try other words.',
    };
  }
  const references: ToolReferenceBlockParam[] = tools.map((t) => ({
    type: 'tool_reference',
    tool_name: t.name,
  }));
  return { type: 'tool_result', tool_use_id: use.id, content: references };
}
