import { createHash } from 'node:crypto';
import type { ToolAnnotations } from '../types.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export type JsonSchema = Record<string, unknown>;

/** Where a parameter goes in the request; the input names it `key` (its own name, as a rule). */
export interface CompiledParameter {
  key: string;
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  /** A path parameter that may hold slashes (Google's `{+name}`): encoded as a URI, not a segment. */
  reserved?: boolean;
}

/**
 * One operation of a provider's API description, compiled: everything a tool needs to validate
 * its input and make its request, and nothing of the description's prose.
 */
export interface CompiledOperation {
  name: string;
  provider: string;
  /** The description's own id of the operation (GitHub's operationId, Google's method id). */
  operationId: string;
  method: HttpMethod;
  /** Under the provider's API base, with `{key}` placeholders, e.g. `/repos/{owner}/{repo}`. */
  path: string;
  params: CompiledParameter[];
  /** The operation takes a JSON body, as the input's `body`. */
  body?: { required: boolean };
  /** Headers every call sends (the API version the description is of). */
  headers?: Record<string, string>;
  input: JsonSchema;
  description: string;
  annotations: ToolAnnotations;
}

/** What a provider's compiled catalog file holds. */
export interface CompiledCatalog {
  provider: string;
  /** Which description, at which version, the tools come from. */
  sources: { file: string; version: string }[];
  /** Operations left out, each with why (a body that is not JSON). */
  skipped: { operationId: string; reason: string }[];
  operations: CompiledOperation[];
}

export const MAX_TOOL_NAME = 64;

/**
 * The naming rule: `<provider>_<the operation's own words in snake case>`, only [a-z0-9_], at most
 * 64 characters (the LLM APIs' limit); a longer name keeps its first 55 characters and a hash of
 * the whole, so names stay unique and stable.
 */
export function toolName(provider: string, words: string): string {
  const snake = words
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const full = `${provider}_${snake}`;
  if (full.length <= MAX_TOOL_NAME) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, MAX_TOOL_NAME - 9).replace(/_+$/, '')}_${hash}`;
}

const DESTRUCTIVE_WORDS = /(^|_)(delete|remove|clear|trash|empty|purge|destroy|revoke|cancel|reset)(_|$)/;

/** Read-only and destructive hints from the HTTP method, sharpened by the operation's words. */
export function annotationsFor(method: HttpMethod, name: string): ToolAnnotations {
  switch (method) {
    case 'GET':
      return { read_only: true, destructive: false, idempotent: true };
    case 'DELETE':
      return { read_only: false, destructive: true, idempotent: true };
    case 'PUT':
      // A PUT replaces what is there.
      return { read_only: false, destructive: true, idempotent: true };
    default:
      return { read_only: false, destructive: DESTRUCTIVE_WORDS.test(name), idempotent: false };
  }
}

const VERBS: Record<string, string> = {
  list: 'Lists',
  get: 'Reads',
  retrieve: 'Reads',
  create: 'Creates',
  insert: 'Creates',
  add: 'Adds',
  update: 'Updates',
  patch: 'Updates part of',
  delete: 'Deletes',
  remove: 'Removes',
  search: 'Searches',
  query: 'Queries',
  batch_update: 'Applies a batch of updates to',
  move: 'Moves',
  copy: 'Copies',
  watch: 'Watches',
  stop: 'Stops',
  send: 'Sends',
  import: 'Imports',
  export: 'Exports',
  archive: 'Archives',
  upsert: 'Creates or updates',
  merge: 'Merges',
  purge: 'Permanently deletes',
  read: 'Reads',
  replace: 'Replaces',
  upload: 'Uploads',
  request: 'Requests',
};

/**
 * The action of an operation named by its object and its own name (HubSpot's `contacts` +
 * `getById`): "Reads one of the contacts by its id", "Creates contacts, in a batch".
 */
export function prefixedAction(subject: string[], group: string[], name: string[]): string {
  const [verb = '', ...rest] = name;
  const what = subject.join(' ');
  const batch = group.join(' ') === 'batch';
  const among = group.length && !batch ? ` (${group.join(' ')})` : '';
  const tail = rest.join(' ');
  let action: string;
  if (verb === 'get' && tail === 'by id') action = `Reads one of the ${what}${among} by its id`;
  else if (verb === 'get' && tail === 'page') action = `Lists the ${what}${among}, a page at a time`;
  else if (verb === 'get' && tail === 'all') action = `Lists all the ${what}${among}`;
  else {
    const said = VERBS[verb] ?? verb.replace(/^./, (c) => c.toUpperCase());
    action = tail.startsWith('by ')
      ? `${said} one of the ${what}${among} ${tail}`
      : `${said}${tail ? ` ${tail} of` : ''} ${what}${among}`;
  }
  return batch ? `${action}, in a batch` : action;
}

/**
 * The description an LLM reads, in Portico's words, from the operation's structure only: what it
 * does (from its name), the request it makes, what the input must hold, and its effect. A curated
 * line, when there is one, comes first.
 */
export function describeOperation(
  op: Omit<CompiledOperation, 'description' | 'annotations' | 'input'>,
  displayName: string,
  words: string[],
  bodyType: string | undefined,
  curated: string | undefined,
  named?: string,
): string {
  const [first = '', ...rest] = words;
  const pair = words.length > 1 ? `${words.at(-2)}_${words.at(-1)}` : '';
  const verb = VERBS[pair] ?? VERBS[first] ?? VERBS[words.at(-1) ?? ''];
  const subject = (verb && VERBS[first] ? rest : VERBS[pair] ? words.slice(0, -2) : words.slice(0, -1))
    .join(' ')
    .replace(/_/g, ' ');
  const action = named
    ? named
    : verb
      ? `${verb} ${subject || 'the resource'}`.trim()
      : words
          .join(' ')
          .replace(/_/g, ' ')
          .replace(/^./, (c) => c.toUpperCase());
  const required = op.params.filter((p) => p.required).map((p) => p.key);
  const optional = op.params.filter((p) => !p.required).map((p) => p.key);
  const parts = [
    ...(curated ? [curated] : []),
    `${displayName}: ${action}. Sends ${op.method} ${op.path}.`,
    required.length ? `Required: ${required.join(', ')}.` : '',
    optional.length
      ? `Optional: ${optional.slice(0, 12).join(', ')}${optional.length > 12 ? `, and ${optional.length - 12} more` : ''}.`
      : '',
    op.body ? `Put the request body in "body"${bodyType ? ` (a ${bodyType})` : ''}.` : '',
    `Returns ${displayName}'s JSON answer as it is (a list as "items").`,
  ];
  return parts.filter(Boolean).join(' ');
}

/** The property description of a parameter: where it goes, nothing copied. */
export function parameterNote(param: CompiledParameter): string {
  return `${param.in} parameter "${param.name}"${param.required ? ' (required)' : ''}`;
}
