/**
 * The emulated remote MCP server's tools: a small notes app per signed-in user, with side effects
 * the tests read back, names that exercise Portico's naming rule (a dot, a hyphen) and every
 * annotation MCP defines.
 */
export interface Note {
  id: string;
  title: string;
  body: string;
}

export interface McpToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  /** The scope a call needs on the step-up variant (others take any token of the server). */
  scope: 'notes:read' | 'notes:write';
}

export const MCP_TOOLS: McpToolSpec[] = [
  {
    name: 'notes.create',
    title: 'Create a note',
    description: 'Creates a note with a title and a body.',
    inputSchema: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200 },
        body: { type: 'string', maxLength: 10000 },
      },
      required: ['title'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    scope: 'notes:write',
  },
  {
    name: 'notes.list',
    title: 'List notes',
    description: 'Lists the notes, newest first.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
    scope: 'notes:read',
  },
  {
    name: 'delete-note',
    title: 'Delete a note',
    description: 'Deletes a note for good.',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string', minLength: 1 } },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    scope: 'notes:write',
  },
  {
    name: 'slow_echo',
    title: 'Echo, slowly',
    description: 'Answers its text after waiting delay_ms milliseconds (for timeouts).',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' }, delay_ms: { type: 'integer', minimum: 0, maximum: 600000 } },
      required: ['text'],
    },
    annotations: { readOnlyHint: true },
    scope: 'notes:read',
  },
];

/**
 * A tool the server lists only once a test adds it (POST /mcp/{variant}/_tools/notes.archive):
 * the server then tells its clients `notifications/tools/list_changed`.
 */
export const ADDABLE_TOOLS: McpToolSpec[] = [
  {
    name: 'notes.archive',
    title: 'Archive a note',
    description: 'Moves a note out of the list into the archive.',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string', minLength: 1 } },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    scope: 'notes:write',
  },
];

export interface ToolOutcome {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Runs a tool against one user's notes (the caller checked the token and the scope). */
export async function runTool(
  notes: Note[],
  name: string,
  args: Record<string, unknown>,
  newId: () => string,
): Promise<ToolOutcome | undefined> {
  const ok = (structured: Record<string, unknown>): ToolOutcome => ({
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
  });
  switch (name) {
    case 'notes.create': {
      if (typeof args.title !== 'string' || args.title === '')
        return { content: [{ type: 'text', text: 'title is required' }], isError: true };
      const note = { id: newId(), title: args.title, body: typeof args.body === 'string' ? args.body : '' };
      notes.unshift(note);
      return ok({ note });
    }
    case 'notes.list':
      return ok({ notes });
    case 'delete-note': {
      const index = notes.findIndex((n) => n.id === args.id);
      if (index < 0)
        return { content: [{ type: 'text', text: `No note ${String(args.id)}.` }], isError: true };
      notes.splice(index, 1);
      return ok({ deleted: args.id });
    }
    case 'notes.archive': {
      const index = notes.findIndex((n) => n.id === args.id);
      if (index < 0)
        return { content: [{ type: 'text', text: `No note ${String(args.id)}.` }], isError: true };
      notes.splice(index, 1);
      return ok({ archived: args.id });
    }
    case 'slow_echo': {
      const delay = typeof args.delay_ms === 'number' ? args.delay_ms : 0;
      await new Promise((resolve) => setTimeout(resolve, delay));
      return ok({ text: args.text });
    }
    default:
      return undefined;
  }
}
