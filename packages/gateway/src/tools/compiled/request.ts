import type { ProviderRequest } from '../../accounts/provider-client.js';
import type { CompiledOperation } from './operation.js';

type QueryValue = string | number | boolean | string[];

function text(value: unknown): string {
  return typeof value === 'string'
    ? value
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);
}

/**
 * The request a compiled tool's call makes, from its validated input: path parameters into the
 * path (encoded as a segment, or as a URI for Google's `{+name}`), query and header parameters
 * where the description puts them, and `body` as the JSON body.
 */
export function buildRequest(op: CompiledOperation, input: Record<string, unknown>): ProviderRequest {
  let path = op.path;
  const query: Record<string, QueryValue> = {};
  const headers: Record<string, string> = { ...op.headers };
  for (const param of op.params) {
    const value = input[param.key];
    if (value === undefined || value === null) continue;
    if (param.in === 'path') {
      const encoded = param.reserved ? encodeURI(text(value)) : encodeURIComponent(text(value));
      path = path.replace(`{${param.name}}`, encoded);
    } else if (param.in === 'query') {
      query[param.name] = Array.isArray(value)
        ? value.map(text)
        : typeof value === 'object'
          ? JSON.stringify(value)
          : (value as string | number | boolean);
    } else {
      headers[param.name.toLowerCase()] = text(value);
    }
  }
  return {
    method: op.method,
    path,
    ...(Object.keys(query).length ? { query } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(op.body && input.body !== undefined ? { json: input.body } : {}),
  };
}

/** The provider's answer as the tool's data (always an object): a list as `items`. */
export function shapeAnswer(data: unknown): Record<string, unknown> {
  if (Array.isArray(data)) return { items: data };
  if (data && typeof data === 'object') return data as Record<string, unknown>;
  return data === undefined || data === '' ? {} : { value: data };
}
