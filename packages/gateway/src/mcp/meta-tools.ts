import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Problem } from '../errors/problem.js';
import type { ToolListing } from '../tools/search/listing.js';
import type { AnyTool } from '../tools/types.js';
import { modelFacingTool, TOOL_OUTPUT_SCHEMA } from './tool-definitions.js';

/**
 * How an MCP session offers the provider tools: `full` lists them all (paginated, as the
 * specification's tools/list does); `search` lists two tools instead, one that finds tools by a
 * task in words and one that calls a tool by name, so a client holds four tool definitions
 * whatever the size of the catalog.
 */
export type McpMode = 'full' | 'search';
export const MCP_MODES: readonly McpMode[] = ['full', 'search'];

export const SEARCH_TOOLS_TOOL = 'portico_search_tools';
export const CALL_TOOL_TOOL = 'portico_call_tool';

/** Matches a search answers unless told otherwise, and at most. */
const DEFAULT_MATCHES = 5;
const MAX_MATCHES = 20;

export const SEARCH_TOOLS: Tool = {
  name: SEARCH_TOOLS_TOOL,
  description: `Find the tools for a task among the user's connected apps: describe the task in plain words (e.g. "list the open pull requests of acme/api", "send an email to Ann") and get back the few tools that fit best, each with its name, description and input schema. Then call one with ${CALL_TOOL_TOOL}. Search again with other words if none fits.`,
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The task, in plain words.', minLength: 1, maxLength: 500 },
      limit: {
        type: 'integer',
        description: `How many tools to return (default ${DEFAULT_MATCHES}, at most ${MAX_MATCHES}).`,
        minimum: 1,
        maximum: MAX_MATCHES,
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      tools: {
        type: 'array',
        description: 'The best matches first: name, description, inputSchema.',
        items: { type: 'object', additionalProperties: true },
      },
      total: { type: 'integer', description: 'How many tools match in all.' },
    },
    required: ['tools', 'total'],
    additionalProperties: true,
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

export const CALL_TOOL: Tool = {
  name: CALL_TOOL_TOOL,
  description: `Call a tool ${SEARCH_TOOLS_TOOL} returned, by its name, with arguments that follow its input schema. Answers what the tool answers; a refused input says which field to change.`,
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: `The tool's name, as ${SEARCH_TOOLS_TOOL} returned it.` },
      arguments: {
        type: 'object',
        description: "The tool's input, following its inputSchema.",
        additionalProperties: true,
      },
    },
    required: ['name'],
    additionalProperties: false,
  },
  outputSchema: TOOL_OUTPUT_SCHEMA,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

/** A search's input, checked: the words and how many tools to answer. */
export function searchInput(args: Record<string, unknown>): { query: string; limit: number } {
  const { query, limit } = args;
  if (typeof query !== 'string' || !query.trim() || query.length > 500) {
    throw new Problem('invalid_input', `${SEARCH_TOOLS_TOOL} takes {"query": "<the task in words>"}.`, {
      errors: [{ path: '/query', message: 'must be the task in words (1 to 500 characters)' }],
    });
  }
  if (
    limit !== undefined &&
    (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_MATCHES)
  ) {
    throw new Problem('invalid_input', `limit must be a whole number from 1 to ${MAX_MATCHES}.`, {
      errors: [{ path: '/limit', message: `must be an integer from 1 to ${MAX_MATCHES}` }],
    });
  }
  return { query, limit: (limit as number | undefined) ?? DEFAULT_MATCHES };
}

/** A call's input, checked: the tool's name and its arguments. */
export function callInput(args: Record<string, unknown>): {
  name: string;
  arguments: Record<string, unknown>;
} {
  const { name, arguments: input = {} } = args;
  if (typeof name !== 'string' || !name) {
    throw new Problem(
      'invalid_input',
      `${CALL_TOOL_TOOL} takes {"name": "<a tool's name>", "arguments": {…}}.`,
      {
        errors: [{ path: '/name', message: `must be the name of a tool ${SEARCH_TOOLS_TOOL} returned` }],
      },
    );
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new Problem('invalid_input', 'arguments must be an object following the tool’s input schema.', {
      errors: [{ path: '/arguments', message: 'must be an object' }],
    });
  }
  if (name === SEARCH_TOOLS_TOOL || name === CALL_TOOL_TOOL) {
    throw new Problem('invalid_input', `Call ${name} directly, not through ${CALL_TOOL_TOOL}.`, {
      errors: [{ path: '/name', message: `must be a provider tool, not ${name}` }],
    });
  }
  return { name, arguments: input as Record<string, unknown> };
}

/** The matches as the model reads them: each tool's MCP definition, without annotations' noise. */
export function searchResult(
  listing: ToolListing,
  nothingConnected: boolean,
): { text: string; structured: Record<string, unknown> } {
  const tools = listing.hits.map(({ tool }: { tool: AnyTool }) => {
    const { name, description, inputSchema } = modelFacingTool(tool);
    return { name, description, inputSchema };
  });
  const structured = { tools, total: listing.total };
  const text = nothingConnected
    ? 'No account is connected yet, so there is no tool to find: call portico_authorize to get a link the user opens to connect one.'
    : tools.length
      ? `${JSON.stringify(structured)}\nCall one with ${CALL_TOOL_TOOL}: {"name": "<name>", "arguments": {…}}.`
      : 'No tool fits these words; try other words for the task.';
  return { text, structured };
}
