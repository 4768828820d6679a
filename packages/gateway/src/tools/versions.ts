import type { FieldError } from '../errors/problem.js';
import { findBuiltInProvider } from '../providers/catalog.js';
import type { AnyTool } from './types.js';

/**
 * The specification's version parameters (Versioning 1 and 2). They are parameters of the tools
 * (inside the tool input) and, for callers of the REST API, fields beside it; both mean the same.
 * Tools never see them: the engine takes them out of the input before validation.
 */
export const VERSION_PARAMETERS = ['schema_version', 'tool_version', 'upstream_version'] as const;
export type VersionParameter = (typeof VERSION_PARAMETERS)[number];
export type Versions = Partial<Record<VersionParameter, string>>;

const MAX_VERSION_LENGTH = 40;

const DESCRIPTIONS: Record<VersionParameter, string> = {
  schema_version:
    'Internal override: the input schema version to validate against (omit for the current one).',
  tool_version: 'Internal override: the tool implementation version to run (omit for the current one).',
  upstream_version:
    'Overrides the provider API version header sent upstream, a date such as 2022-06-28 (omit for the default).',
};

/** The version parameters a tool takes: all tools take two; tools of a versioned provider API the third. */
export function versionParametersOf(tool: AnyTool): VersionParameter[] {
  // A connection's own tool (a remote MCP server's) has no built-in provider to name a header.
  return findBuiltInProvider(tool.provider)?.api.versionHeader
    ? [...VERSION_PARAMETERS]
    : ['schema_version', 'tool_version'];
}

const published = new WeakMap<AnyTool, Record<string, unknown>>();

/** The tool's input schema as callers see it: its own parameters, then the version parameters. */
export function publishedInput(tool: AnyTool): Record<string, unknown> {
  let schema = published.get(tool);
  if (!schema) {
    const own = JSON.parse(JSON.stringify(tool.input)) as Record<string, unknown>;
    const properties = { ...(own.properties as Record<string, unknown>) };
    for (const name of versionParametersOf(tool)) {
      properties[name] = { type: 'string', maxLength: MAX_VERSION_LENGTH, description: DESCRIPTIONS[name] };
    }
    schema = { ...own, properties };
    published.set(tool, schema);
  }
  return schema;
}

/**
 * Takes the version parameters out of `input` (a private copy) and merges them with those given
 * beside it. A value given both ways must agree; a version parameter the tool does not take is
 * reported where it was written.
 */
export function takeVersions(
  tool: AnyTool,
  input: Record<string, unknown>,
  beside: Versions,
): { versions: Versions; errors: FieldError[] } {
  const accepted = versionParametersOf(tool);
  const versions: Versions = {};
  const errors: FieldError[] = [];
  for (const name of VERSION_PARAMETERS) {
    const outside = beside[name];
    if (outside !== undefined) versions[name] = outside;
    if (!(name in input)) continue;
    const inside = input[name];
    delete input[name];
    const path = `/tool_input/${name}`;
    if (typeof inside !== 'string' || inside.length === 0 || inside.length > MAX_VERSION_LENGTH) {
      errors.push({
        path,
        message: `must be a non-empty string of at most ${MAX_VERSION_LENGTH} characters`,
      });
    } else if (outside !== undefined && outside !== inside) {
      errors.push({
        path,
        message: `"${name}" is given inside tool_input ("${inside}") and beside it ("${outside}") with different values; give it once`,
      });
    } else {
      versions[name] = inside;
    }
  }
  for (const name of VERSION_PARAMETERS) {
    if (versions[name] !== undefined && !accepted.includes(name)) {
      const where = name in beside && beside[name] !== undefined ? `/${name}` : `/tool_input/${name}`;
      errors.push({
        path: where,
        message: `${tool.name} does not take "${name}" (${findBuiltInProvider(tool.provider)?.displayName ?? tool.provider} has no API version header); remove it`,
      });
    }
  }
  return { versions, errors };
}
