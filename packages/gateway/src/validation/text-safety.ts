import type { FieldError } from '../errors/problem.js';

/**
 * Deepest JSON nesting any input may have. The deepest real inputs (a Docs batch request, a
 * compound Notion filter) stay under 12 levels; 2,000 levels overflowed the stack of the copy the
 * tool engine makes.
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * The first string in `value` (keys included) that no store or provider can take as text: one
 * with a NUL character (PostgreSQL refuses it) or an unpaired UTF-16 surrogate (not encodable as
 * UTF-8, so silently replaced); or nesting deeper than MAX_INPUT_DEPTH. `path` names where it is.
 */
export function unsafeInput(value: unknown, path: string, depth = 0): FieldError | undefined {
  if (typeof value === 'string') return unsafeText(value, path);
  if (value === null || typeof value !== 'object' || !isPlain(value)) return undefined;
  if (depth >= MAX_INPUT_DEPTH) {
    return { path, message: `nests deeper than ${MAX_INPUT_DEPTH} levels; flatten the input` };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsafeInput(value[i], `${path}/${i}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const key in value) {
    const found =
      unsafeText(key, `${path}/${key}`) ??
      unsafeInput((value as Record<string, unknown>)[key], `${path}/${key}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Parsed JSON, a query string or route parameters (the router makes them from a prototype-less
 * constructor); never a stream or a Buffer to walk into.
 */
function isPlain(value: object): boolean {
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}

// With the u flag a surrogate pair is one code point, so only an unpaired half matches.
const LONE_SURROGATE = /\p{Cs}/u;

function unsafeText(text: string, path: string): FieldError | undefined {
  if (text.includes('\u0000')) {
    return { path, message: 'contains a NUL character (U+0000); remove it' };
  }
  if (LONE_SURROGATE.test(text)) {
    return {
      path,
      message: 'contains an unpaired UTF-16 surrogate (not valid Unicode text); fix the encoding',
    };
  }
  return undefined;
}
