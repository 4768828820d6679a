import type { FastifyRequest } from 'fastify';

// Request bodies arrive unparsed (the routes take any content type, see routes.ts); each endpoint
// reads them the way its definition says.

/** The body as text ('' when there is none). */
export function bodyText(req: FastifyRequest): string {
  const body = req.body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return typeof body === 'string' ? body : '';
}

export function mediaType(req: FastifyRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** application/json and the +json types (application/vnd.api+json, application/merge-patch+json). */
export function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/** A form body's fields; the first of repeated fields wins, as the core's OAuth endpoints read them. */
export function formFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (!(name in fields)) fields[name] = value;
  }
  return fields;
}

/** The JSON body, or undefined when it does not parse. */
export function jsonValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Parses the body for the core's OAuth endpoints, which read `req.body` as an object: a form, or a
 * JSON object. False when the body claims JSON and is not (the caller answers malformed_body).
 */
export function parseOAuthBody(req: FastifyRequest): boolean {
  const text = bodyText(req);
  const type = mediaType(req);
  if (type === 'application/x-www-form-urlencoded') {
    req.body = formFields(text);
    return true;
  }
  if (isJsonType(type)) {
    const value = text.trim() === '' ? {} : jsonValue(text);
    req.body = value;
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
  // Another type: the token endpoint refuses it by its Content-Type.
  req.body = {};
  return true;
}

/** What the echo shows of the body: parsed JSON, else the text; null when there is none. */
export function echoBody(req: FastifyRequest): unknown {
  const text = bodyText(req);
  if (text === '') return null;
  if (isJsonType(mediaType(req))) {
    const value = jsonValue(text);
    if (value !== undefined) return value;
  }
  return text;
}
