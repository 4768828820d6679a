import { findBuiltInProvider } from '../providers/catalog.js';
import type { AnyTool } from './types.js';

/** What a tag looks like: lower case, digits, `-` and `_`, as toolsets and search filters name them. */
export const TAG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

/**
 * A tool's tags, all derived here so every reader (search filters, toolsets, listings) agrees:
 * - where it comes from: `specification`, `compiled` or `remote-mcp`;
 * - what it does: `read-only` or `writes`, and `destructive` for a tool that may delete or
 *   overwrite what the user cares about;
 * - what its provider is for, from the provider's category: `calendar`, `e-mail`, `file-storage`,
 *   `code-hosting`, …
 */
export function toolTags(tool: AnyTool, sourceId: string): string[] {
  const tags = [sourceTag(sourceId), tool.annotations.read_only ? 'read-only' : 'writes'];
  if (tool.annotations.destructive) tags.push('destructive');
  const category = findBuiltInProvider(tool.provider)?.kind;
  if (category) tags.push(slug(category));
  return tags;
}

function sourceTag(sourceId: string): string {
  if (sourceId === 'specification') return 'specification';
  if (sourceId.startsWith('compiled')) return 'compiled';
  if (sourceId.startsWith('remote-mcp') || sourceId.startsWith('mcp')) return 'remote-mcp';
  return slug(sourceId.split(':')[0] ?? sourceId);
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
}
