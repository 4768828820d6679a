import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from '../errors/problem.js';
import type { AnyTool } from './types.js';

export interface ResolvedAliases {
  /** An alias and its specification name given with different values. */
  conflicts: FieldError[];
  /** Puts an error found under a specification name back on the alias the caller wrote. */
  callerPath(path: string): string;
}

/** Rewrites a tool's alias parameters to the specification's names in `input` (a private copy). */
export function resolveAliases(tool: AnyTool, input: Record<string, unknown>): ResolvedAliases {
  const conflicts: FieldError[] = [];
  const used = new Map<string, { alias: string; converted: boolean }>();
  for (const [alias, { to, convert }] of Object.entries(tool.aliases ?? {})) {
    if (!(alias in input)) continue;
    const value = convert ? convert(input[alias]) : input[alias];
    delete input[alias];
    if (to in input && !isDeepStrictEqual(input[to], value)) {
      conflicts.push({
        path: `/${alias}`,
        message: `"${alias}" is another name for "${to}" and the two disagree; give only "${to}"`,
      });
      continue;
    }
    input[to] = value;
    used.set(to, { alias, converted: Boolean(convert) });
  }
  return {
    conflicts,
    callerPath(path) {
      const [, head = '', ...rest] = path.split('/');
      const hit = used.get(head);
      if (!hit) return path;
      // A converted value has another shape: the error belongs to the alias as a whole.
      return hit.converted ? `/${hit.alias}` : ['', hit.alias, ...rest].join('/');
    },
  };
}

/** The alias names a tool accepts, per specification parameter, for descriptions and docs. */
export function aliasesOf(tool: AnyTool): Map<string, string[]> {
  const byTarget = new Map<string, string[]>();
  for (const [alias, { to }] of Object.entries(tool.aliases ?? {})) {
    byTarget.set(to, [...(byTarget.get(to) ?? []), alias]);
  }
  return byTarget;
}
