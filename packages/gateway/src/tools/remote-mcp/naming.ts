import { createHash } from 'node:crypto';

/** The longest tool name the LLM APIs take (OpenAI, Anthropic and Gemini: 64, [a-zA-Z0-9_-]). */
export const TOOL_NAME_MAX = 64;
const HASH_LENGTH = 8;

/** Characters a tool name may not hold in the LLM APIs, each replaced by an underscore. */
function slug(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * Portico's names for one connection's remote MCP tools, by the server's names. The rule
 * (docs/guides/remote-mcp-servers.md):
 *
 *   `{connection}__{tool}`, every character outside [A-Za-z0-9_-] replaced by `_`;
 *
 * when that is longer than 64 characters, or two of the server's tools come out the same, each such
 * name is cut to 55 characters and ends in `_` and the first 8 hex digits of the SHA-256 of
 * `{connection}\0{tool}`. The double underscore cannot occur in a built-in tool's name, and
 * connection names are unique in an environment, so no two tools of an environment share a name.
 */
export function remoteToolNames(connection: string, tools: readonly string[]): Map<string, string> {
  const plain = new Map(tools.map((tool) => [tool, `${slug(connection)}__${slug(tool)}`]));
  const counts = new Map<string, number>();
  for (const name of plain.values()) counts.set(name, (counts.get(name) ?? 0) + 1);
  const out = new Map<string, string>();
  for (const [tool, name] of plain) {
    if (name.length <= TOOL_NAME_MAX && counts.get(name) === 1) {
      out.set(tool, name);
      continue;
    }
    const hash = createHash('sha256')
      .update(`${connection}\u0000${tool}`)
      .digest('hex')
      .slice(0, HASH_LENGTH);
    out.set(tool, `${name.slice(0, TOOL_NAME_MAX - HASH_LENGTH - 1)}_${hash}`);
  }
  return out;
}
