import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FormDataError, formBoundary, parseFormData } from '../src/core/multipart.js';

/** The strict multipart/form-data parser the Notion and HubSpot file uploads share. */

const TYPE = 'multipart/form-data; boundary=----b0undary';

function form(...parts: Array<[headers: string, body: Buffer | string]>): Buffer {
  const chunks: Buffer[] = [];
  for (const [headers, body] of parts) {
    chunks.push(Buffer.from(`------b0undary\r\n${headers}\r\n\r\n`), Buffer.from(body), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from('------b0undary--\r\n'));
  return Buffer.concat(chunks);
}

describe('parseFormData', () => {
  it('reads fields and files, byte for byte, with their names, filenames and types', () => {
    // Binary bodies may hold CRLFs and dashes: only the full delimiter ends a part.
    const bytes = Buffer.concat([randomBytes(4096), Buffer.from('\r\n----b0undar\r\n'), randomBytes(4096)]);
    const parts = parseFormData(
      form(
        ['Content-Disposition: form-data; name="options"', '{"access":"PRIVATE"}'],
        [
          'Content-Disposition: form-data; name="file"; filename="a \\"quoted\\" name.bin"\r\nContent-Type: application/octet-stream',
          bytes,
        ],
      ),
      TYPE,
    );
    expect(parts.map((p) => p.name)).toEqual(['options', 'file']);
    expect(parts[0]?.body.toString()).toBe('{"access":"PRIVATE"}');
    expect(parts[0]?.filename).toBeUndefined();
    expect(parts[1]).toMatchObject({
      filename: 'a "quoted" name.bin',
      contentType: 'application/octet-stream',
    });
    expect(parts[1]?.body.equals(bytes)).toBe(true);
  });

  it('takes a quoted boundary and refuses other content types', () => {
    expect(formBoundary('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(formBoundary('multipart/related; boundary=x')).toBeNull();
    expect(() => parseFormData(Buffer.from(''), 'application/json')).toThrow(FormDataError);
  });

  it('says what is wrong with a malformed body', () => {
    const unterminated = Buffer.from('------b0undary\r\nContent-Disposition: form-data; name="f"\r\n\r\nabc');
    expect(() => parseFormData(unterminated, TYPE)).toThrow(/closing boundary/);
    const noDisposition = form(['Content-Type: text/plain', 'x']);
    expect(() => parseFormData(noDisposition, TYPE)).toThrow(/Content-Disposition/);
    const noName = form(['Content-Disposition: form-data; filename="x"', 'x']);
    expect(() => parseFormData(noName, TYPE)).toThrow(/name/);
    expect(() => parseFormData(Buffer.from('garbage'), TYPE)).toThrow(/start with the boundary/);
  });
});
