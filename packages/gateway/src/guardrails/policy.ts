import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../errors/problem.js';
import type { AnyTool } from '../tools/types.js';

/** Stands for every tool annotated destructive, in a list of tool patterns. */
export const DESTRUCTIVE = '@destructive';
/** Stands for every tool that is not read-only. */
export const WRITES = '@writes';

const ToolPatterns = Type.Array(
  Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '^(@destructive|@writes|[a-z0-9_*]+)$',
    description: `A tool name, a pattern with "*" (e.g. "calendar_*"), "${DESTRUCTIVE}" or "${WRITES}".`,
  }),
  { maxItems: 100 },
);

const Constraint = Type.Object(
  {
    tools: Type.Optional(ToolPatterns),
    path: Type.String({
      pattern: '^(/[^/]+)+$',
      maxLength: 200,
      description: 'A JSON Pointer into tool_input, e.g. /calendar_id.',
    }),
    one_of: Type.Optional(
      Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean()]), { minItems: 1, maxItems: 500 }),
    ),
    prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    max: Type.Optional(Type.Number()),
    required: Type.Optional(
      Type.Boolean({ description: 'Refuse calls that leave the field out (default: allowed).' }),
    ),
  },
  { additionalProperties: false },
);

export const PolicyBody = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'Unique in the environment.' }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    connection_name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
    identifier: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()])),
    allow_tools: Type.Optional(ToolPatterns),
    deny_tools: Type.Optional(ToolPatterns),
    approval_tools: Type.Optional(ToolPatterns),
    approval_expires_in: Type.Optional(Type.Integer({ minimum: 60, maximum: 7 * 24 * 3600 })),
    constraints: Type.Optional(Type.Array(Constraint, { maxItems: 50 })),
    budget: Type.Optional(
      Type.Object(
        {
          calls: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
          period_seconds: Type.Integer({ minimum: 1, maximum: 31 * 24 * 3600 }),
        },
        { additionalProperties: false },
      ),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type PolicyDefinition = Static<typeof PolicyBody>;
export type PolicyConstraint = Static<typeof Constraint>;

/** A stored policy: its definition with the defaults filled in. */
export interface Policy extends PolicyDefinition {
  id: string;
  approval_tools: string[];
  approval_expires_in: number;
  enabled: boolean;
}

export function withDefaults(id: string, definition: PolicyDefinition): Policy {
  return {
    ...definition,
    id,
    // Risky calls wait for a person unless the policy says otherwise.
    approval_tools: definition.approval_tools ?? [DESTRUCTIVE],
    approval_expires_in: definition.approval_expires_in ?? 3600,
    enabled: definition.enabled ?? true,
  };
}

/** Whether a policy speaks about this call's connection and end user. */
export function appliesTo(policy: Policy, connectionName: string, identifier: string): boolean {
  return (
    policy.enabled &&
    (policy.connection_name == null || policy.connection_name === connectionName) &&
    (policy.identifier == null || policy.identifier === identifier)
  );
}

export function matchesTool(patterns: readonly string[] | undefined, tool: AnyTool): boolean {
  if (!patterns) return false;
  return patterns.some((pattern) => {
    if (pattern === DESTRUCTIVE) return tool.annotations.destructive;
    if (pattern === WRITES) return !tool.annotations.read_only;
    if (!pattern.includes('*')) return pattern === tool.name;
    return new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(tool.name);
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Why a policy refuses the tool itself; undefined when it allows it. */
export function toolRefusal(policy: Policy, tool: AnyTool): string | undefined {
  if (matchesTool(policy.deny_tools, tool)) {
    return `policy "${policy.name}" denies ${tool.name} (deny_tools: ${policy.deny_tools!.join(', ')})`;
  }
  if (policy.allow_tools && !matchesTool(policy.allow_tools, tool)) {
    return `policy "${policy.name}" allows only ${policy.allow_tools.join(', ')}`;
  }
  return undefined;
}

/** The input's fields that break the policy's constraints for this tool, at their tool_input paths. */
export function constraintErrors(
  policy: Policy,
  tool: AnyTool,
  input: Record<string, unknown>,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const constraint of policy.constraints ?? []) {
    if (constraint.tools && !matchesTool(constraint.tools, tool)) continue;
    const value = readPointer(input, constraint.path);
    const path = `/tool_input${constraint.path}`;
    const rule = `policy "${policy.name}"`;
    if (value === undefined) {
      if (constraint.required) errors.push({ path, message: `is required by ${rule}` });
      continue;
    }
    if (constraint.one_of && !constraint.one_of.some((allowed) => allowed === value)) {
      errors.push({
        path,
        message: `must be one of ${constraint.one_of.map((v) => JSON.stringify(v)).join(', ')} (${rule})`,
      });
    }
    if (
      constraint.prefix !== undefined &&
      (typeof value !== 'string' || !value.startsWith(constraint.prefix))
    ) {
      errors.push({ path, message: `must start with ${JSON.stringify(constraint.prefix)} (${rule})` });
    }
    if (constraint.max !== undefined && (typeof value !== 'number' || value > constraint.max)) {
      errors.push({ path, message: `must be a number at most ${constraint.max} (${rule})` });
    }
  }
  return errors;
}

function readPointer(input: Record<string, unknown>, pointer: string): unknown {
  let value: unknown = input;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Whether the policy holds this tool's calls for approval. */
export function needsApproval(policy: Policy, tool: AnyTool): boolean {
  return matchesTool(policy.approval_tools, tool);
}
