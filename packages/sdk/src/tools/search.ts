import { InvalidInputError } from '../errors/errors.js';
import type { ToolDefinition } from '../types.js';
import type { ToolOutcome } from './framework.js';

/**
 * The two tools that find tools, for `tools.for(framework, { mode: 'search' })`: the model
 * searches the user's tools by a task in words, reads the few schemas that fit, and calls one by
 * name, so it holds three or four definitions whatever the size of the catalog. The same names
 * and behaviour as the gateway's MCP endpoint in search mode.
 */
export const SEARCH_TOOLS_TOOL = 'portico_search_tools';
export const CALL_TOOL_TOOL = 'portico_call_tool';

const DEFAULT_MATCHES = 5;
const MAX_MATCHES = 20;

export const searchToolsDefinition: ToolDefinition = {
  name: SEARCH_TOOLS_TOOL,
  description: `Find the tools for a task among the user's connected apps: describe the task in plain words (e.g. "list the open pull requests of acme/api", "send an email to Ann") and get back the few tools that fit best, each with its name, description and input schema. Then call one with ${CALL_TOOL_TOOL}. Search again with other words if none fits.`,
  provider: 'portico',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The task, in plain words.' },
      limit: {
        type: 'integer',
        description: `How many tools to return (default ${DEFAULT_MATCHES}, at most ${MAX_MATCHES}).`,
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnly: true, destructive: false, idempotent: true },
  versions: ['1'],
};

export const callToolDefinition: ToolDefinition = {
  name: CALL_TOOL_TOOL,
  description: `Call a tool ${SEARCH_TOOLS_TOOL} returned, by its name, with arguments that follow its input schema. Answers what the tool answers; a refused input says which field to change.`,
  provider: 'portico',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: `The tool's name, as ${SEARCH_TOOLS_TOOL} returned it.` },
      arguments: {
        type: 'object',
        description: "The tool's input, following its input schema.",
        additionalProperties: true,
      },
    },
    required: ['name'],
    additionalProperties: false,
  },
  annotations: { readOnly: false, destructive: true, idempotent: false },
  versions: ['1'],
};

function refused(detail: string, path: string, message: string): ToolOutcome {
  const error = new InvalidInputError(400, {
    code: 'invalid_input',
    title: 'Invalid input',
    detail,
    errors: [{ path, message }],
  });
  return {
    ok: false,
    error,
    text: JSON.stringify({ code: error.code, detail, errors: error.problem.errors }),
  };
}

/** portico_search_tools' input, checked; an outcome for the model when it is not usable. */
export function searchInput(input: unknown): { query: string; limit: number } | ToolOutcome {
  const { query, limit } = (input ?? {}) as { query?: unknown; limit?: unknown };
  if (typeof query !== 'string' || !query.trim()) {
    return refused(
      `${SEARCH_TOOLS_TOOL} takes {"query": "<the task in words>"}.`,
      '/query',
      'must be the task in words',
    );
  }
  if (
    limit !== undefined &&
    limit !== null &&
    (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_MATCHES)
  ) {
    return refused(
      `limit must be a whole number from 1 to ${MAX_MATCHES}.`,
      '/limit',
      `must be 1 to ${MAX_MATCHES}`,
    );
  }
  return { query, limit: (limit as number | undefined | null) ?? DEFAULT_MATCHES };
}

/** portico_call_tool's input, checked against the tools this tool set offers. */
export function callInput(
  input: unknown,
  offered: ReadonlyMap<string, ToolDefinition>,
): { name: string; arguments: Record<string, unknown> } | ToolOutcome {
  const { name, arguments: args } = (input ?? {}) as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || !offered.has(name)) {
    return refused(
      typeof name === 'string'
        ? `${name} is not one of the tools ${SEARCH_TOOLS_TOOL} can return here; search for the task first and use a name it returns.`
        : `${CALL_TOOL_TOOL} takes {"name": "<a tool's name>", "arguments": {…}}.`,
      '/name',
      `must be the name of a tool ${SEARCH_TOOLS_TOOL} returned`,
    );
  }
  if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args))) {
    return refused(
      'arguments must be an object following the tool’s input schema.',
      '/arguments',
      'must be an object',
    );
  }
  return { name, arguments: (args ?? {}) as Record<string, unknown> };
}

/** The matches as the model reads them: name, description and input schema of each. */
export function searchOutcome(matches: ToolDefinition[], total: number): ToolOutcome {
  const tools = matches.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema,
  }));
  const data = { tools, total };
  const text = tools.length
    ? `${JSON.stringify(data)}\nCall one with ${CALL_TOOL_TOOL}: {"name": "<name>", "arguments": {…}}.`
    : 'No tool fits these words; try other words for the task.';
  return { ok: true, data, executionId: '', text };
}
