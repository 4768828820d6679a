import { createHash, randomBytes } from 'node:crypto';
import { APIErrorCode, APIResponseError, Client, LogLevel } from '@notionhq/client-v5';
import { describe, expect, it } from 'vitest';
import { notionSeedIds } from '../src/providers/notion/index.js';
import { useEmulators } from './helpers/emulators.js';

/** Conformance: Notion's File Upload API, driven by the official SDK 5.x, and the signed links it hands out. */

const ADA = 'ada00000-0000-4000-8000-000000000001';
const ada = notionSeedIds(ADA);
const MiB = 1024 * 1024;

const emu = useEmulators({ modules: ['notion'] });

function sdk(): Client {
  return new Client({
    auth: emu.control.issueToken('notion', { userId: ADA }).access_token,
    baseUrl: emu.urls.notion,
    logLevel: LogLevel.ERROR,
    retry: false,
  });
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function apiError(promise: Promise<unknown>): Promise<APIResponseError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIResponseError);
  return error as APIResponseError;
}

async function uploaded(notion: Client, bytes: Buffer, filename = 'report.bin') {
  const created = await notion.fileUploads.create({ filename, content_type: 'application/octet-stream' });
  return notion.fileUploads.send({
    file_upload_id: created.id,
    file: { filename, data: new Blob([bytes], { type: 'application/octet-stream' }) },
  });
}

describe('Notion File Upload API through the official SDK', () => {
  it('creates a pending upload with its upload_url, sends bytes, and reads it back as uploaded', async () => {
    const notion = sdk();
    const created = await notion.fileUploads.create({ filename: 'notes.txt', content_type: 'text/plain' });
    expect(created).toMatchObject({
      object: 'file_upload',
      status: 'pending',
      filename: 'notes.txt',
      content_type: 'text/plain',
      content_length: null,
      in_trash: false,
      archived: false,
      upload_url: `${emu.urls.notion}/v1/file_uploads/${created.id}/send`,
    });
    expect(Date.parse(created.expiry_time ?? '') - Date.now()).toBeGreaterThan(50 * 60 * 1000);
    const sent = await notion.fileUploads.send({
      file_upload_id: created.id,
      file: { filename: 'notes.txt', data: new Blob(['hello, notion'], { type: 'text/plain' }) },
    });
    expect(sent).toMatchObject({ status: 'uploaded', content_length: 13 });
    expect(sent.upload_url).toBeUndefined();
    const read = await notion.fileUploads.retrieve({ file_upload_id: created.id });
    expect(read.status).toBe('uploaded');
    const list = await notion.fileUploads.list({ status: 'uploaded' });
    expect(list.results.map((u) => u.id)).toEqual([created.id]);
  });

  it('attaches an upload to a file block whose signed URL serves the exact bytes without a token', async () => {
    const notion = sdk();
    const bytes = randomBytes(2 * MiB);
    const upload = await uploaded(notion, bytes);
    const appended = await notion.blocks.children.append({
      block_id: ada.notesPageId,
      children: [{ type: 'file', file: { type: 'file_upload', file_upload: { id: upload.id } } }],
    });
    const blockId = appended.results[0]?.id as string;
    const block = (await notion.blocks.retrieve({ block_id: blockId })) as {
      type: string;
      file: { type: string; file: { url: string; expiry_time: string } };
    };
    expect(block.type).toBe('file');
    expect(block.file.type).toBe('file');
    const { url, expiry_time } = block.file.file;
    expect(url.startsWith(`${emu.urls.notion}/_files/`)).toBe(true);
    expect(Date.parse(expiry_time)).toBeGreaterThan(Date.now());
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));
    // Attached uploads no longer expire.
    expect((await notion.fileUploads.retrieve({ file_upload_id: upload.id })).expiry_time).toBeNull();

    const tampered = new URL(url);
    tampered.searchParams.set('expires', String(Number(tampered.searchParams.get('expires')) + 60));
    const refused = await fetch(tampered);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('AccessDenied');
  });

  it('attaches an upload to a `files` page property, read back as a signed Notion-hosted file', async () => {
    const notion = sdk();
    const upload = await uploaded(notion, Buffer.from('attachment bytes'), 'invoice.txt');
    const call = async (path: string, body: unknown) => {
      const res = await fetch(`${emu.urls.notion}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${emu.control.issueToken('notion', { userId: ADA }).access_token}`,
          'notion-version': '2022-06-28',
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      // biome-ignore lint/suspicious/noExplicitAny: asserted as loose JSON
      return (await res.json()) as Record<string, any>;
    };
    const db = await call('/v1/databases', {
      parent: { type: 'page_id', page_id: ada.notesPageId },
      title: [{ text: { content: 'Invoices' } }],
      properties: { Name: { title: {} }, Attachments: { files: {} } },
    });
    const page = await call('/v1/pages', {
      parent: { database_id: db.id },
      properties: {
        Name: { title: [{ text: { content: 'March' } }] },
        Attachments: { files: [{ type: 'file_upload', file_upload: { id: upload.id } }] },
      },
    });
    const [entry] = page.properties.Attachments.files;
    expect(entry).toMatchObject({ name: 'invoice.txt', type: 'file' });
    const res = await fetch(entry.file.url);
    expect(await res.text()).toBe('attachment bytes');
  });

  it('assembles a multi_part upload from its parts on complete', async () => {
    const notion = sdk();
    const first = randomBytes(5 * MiB);
    const last = randomBytes(1024);
    const created = await notion.fileUploads.create({
      mode: 'multi_part',
      filename: 'big.bin',
      number_of_parts: 2,
    });
    expect(created.number_of_parts).toEqual({ total: 2, sent: 0 });
    const early = await apiError(notion.fileUploads.complete({ file_upload_id: created.id }));
    expect(early.code).toBe(APIErrorCode.ValidationError);
    expect(early.message).toContain('send part(s) 1, 2');
    await notion.fileUploads.send({
      file_upload_id: created.id,
      part_number: '2',
      file: { data: new Blob([last]) },
    });
    await notion.fileUploads.send({
      file_upload_id: created.id,
      part_number: '1',
      file: { data: new Blob([first]) },
    });
    const done = await notion.fileUploads.complete({ file_upload_id: created.id });
    expect(done).toMatchObject({ status: 'uploaded', content_length: first.length + last.length });
  });

  it("refuses what Notion refuses, in Notion's error shape", async () => {
    const notion = sdk();
    const external = await apiError(
      notion.fileUploads.create({ mode: 'external_url', external_url: 'https://x.test/a.png' }),
    );
    expect(external.code).toBe(APIErrorCode.ValidationError);
    const pending = await notion.fileUploads.create({ filename: 'a.txt' });
    const early = await apiError(
      notion.blocks.children.append({
        block_id: ada.notesPageId,
        children: [{ type: 'file', file: { type: 'file_upload', file_upload: { id: pending.id } } }],
      }),
    );
    expect(early.code).toBe(APIErrorCode.ValidationError);
    expect(early.message).toContain('status `pending`');
    const tooBig = await apiError(
      notion.fileUploads.send({
        file_upload_id: pending.id,
        file: { data: new Blob([Buffer.alloc(21 * MiB)]) },
      }),
    );
    expect(tooBig.code).toBe(APIErrorCode.ValidationError);
    expect(tooBig.message).toContain('multi_part');
    await notion.fileUploads.send({ file_upload_id: pending.id, file: { data: new Blob(['x']) } });
    const again = await apiError(
      notion.fileUploads.send({ file_upload_id: pending.id, file: { data: new Blob(['y']) } }),
    );
    expect(again.message).toContain('status `uploaded`');
    const unknown = await apiError(
      notion.fileUploads.retrieve({ file_upload_id: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(unknown.code).toBe(APIErrorCode.ObjectNotFound);
  });

  it('refuses a send that is not multipart/form-data', async () => {
    const notion = sdk();
    const created = await notion.fileUploads.create({});
    const res = await fetch(`${emu.urls.notion}/v1/file_uploads/${created.id}/send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${emu.control.issueToken('notion', { userId: ADA }).access_token}`,
        'notion-version': '2025-09-03',
        'content-type': 'multipart/form-data; boundary=xyz',
      },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"\r\n\r\nunterminated',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe('validation_error');
    expect(body.message).toContain('closing boundary');
  });
});
