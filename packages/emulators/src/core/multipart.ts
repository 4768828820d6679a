/** One field of a `multipart/form-data` body (RFC 7578). */
export interface FormPart {
  name: string;
  /** Present when the part is a file (its Content-Disposition carries `filename`). */
  filename?: string;
  contentType?: string;
  /** A view into the request buffer: uploads are not copied. */
  body: Buffer;
}

/** Why a form-data body was refused, worded for the provider's error message. */
export class FormDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormDataError';
  }
}

/** The boundary parameter of a multipart content type, or null when absent. */
export function formBoundary(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? ((match[1] ?? match[2]) as string) : null;
}

/** A header parameter (`name="x"`), unquoting the escapes browsers and form-data libraries emit. */
function dispositionParam(header: string, param: string): string | undefined {
  const match = new RegExp(`;\\s*${param}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${param}=([^;\\s]+)`, 'i').exec(
    header,
  );
  if (!match) return undefined;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2];
}

function parsePartHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new FormDataError(`malformed part header line ${JSON.stringify(line)}`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function toPart(raw: Buffer): FormPart {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new FormDataError('a part has no blank line between its headers and its body');
  const headers = parsePartHeaders(raw.subarray(0, split).toString('utf8'));
  const disposition = headers['content-disposition'];
  if (!disposition || !/^form-data\s*;/i.test(disposition)) {
    throw new FormDataError('every part needs a `Content-Disposition: form-data; name="…"` header');
  }
  const name = dispositionParam(disposition, 'name');
  if (name === undefined) throw new FormDataError('a part has no `name` in its Content-Disposition');
  const part: FormPart = { name, body: raw.subarray(split + 4) };
  const filename = dispositionParam(disposition, 'filename');
  if (filename !== undefined) part.filename = filename;
  if (headers['content-type']) part.contentType = headers['content-type'];
  return part;
}

/**
 * Splits a `multipart/form-data` body strictly: CRLF line endings, a closing delimiter, and a
 * named form-data disposition on every part. Throws FormDataError saying what is wrong.
 */
export function parseFormData(body: Buffer, contentType: string | undefined): FormPart[] {
  const boundary = formBoundary(contentType);
  if (!boundary) throw new FormDataError('the Content-Type must be multipart/form-data with a boundary');
  const opening = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  if (!body.subarray(0, opening.length).equals(opening)) {
    throw new FormDataError('the body does not start with the boundary');
  }
  const parts: FormPart[] = [];
  let at = opening.length;
  for (;;) {
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts; // closing "--"
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) throw new FormDataError('malformed boundary line');
    const start = at + 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw new FormDataError('the body ends before the closing boundary');
    parts.push(toPart(body.subarray(start, next)));
    at = next + delimiter.length;
  }
}
