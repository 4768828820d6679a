import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { mintToken, useEmulators } from './helpers/emulators.js';

describe('Google Drive emulator: resumable and large uploads', () => {
  const emu = useEmulators({ modules: ['google'] });
  let auth: { authorization: string };
  beforeEach(() => {
    const token = mintToken(emu, 'google', 'alan.turing@example.com', [
      'https://www.googleapis.com/auth/drive.file',
    ]);
    auth = { authorization: `Bearer ${token}` };
  });

  it('runs a resumable upload in chunks, answering 308 with the received range', async () => {
    const content = Buffer.from('0123456789'.repeat(100));
    const start = await fetch(
      `${emu.urls.google}/upload/drive/v3/files?uploadType=resumable&fields=id,name,size,md5Checksum`,
      {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json; charset=UTF-8',
          'x-upload-content-type': 'text/plain',
          'x-upload-content-length': String(content.length),
        },
        body: JSON.stringify({ name: 'digits.txt' }),
      },
    );
    expect(start.status).toBe(200);
    const session = start.headers.get('location')!;
    expect(session).toMatch(/\/google\/upload\/drive\/v3\/files\?uploadType=resumable&upload_id=/);

    const first = await fetch(session, {
      method: 'PUT',
      headers: { 'content-range': `bytes 0-399/${content.length}` },
      body: content.subarray(0, 400),
    });
    expect(first.status).toBe(308);
    expect(first.headers.get('range')).toBe('bytes=0-399');

    const status = await fetch(session, {
      method: 'PUT',
      headers: { 'content-range': `bytes */${content.length}` },
    });
    expect(status.status).toBe(308);
    expect(status.headers.get('range')).toBe('bytes=0-399');

    const last = await fetch(session, {
      method: 'PUT',
      headers: { 'content-range': `bytes 400-999/${content.length}` },
      body: content.subarray(400),
    });
    expect(last.status).toBe(200);
    expect(await last.json()).toEqual({
      id: expect.any(String),
      name: 'digits.txt',
      size: '1000',
      md5Checksum: createHash('md5').update(content).digest('hex'),
    });
    const gone = await fetch(session, { method: 'PUT', body: 'x' });
    expect(gone.status).toBe(404);
  });

  it('accepts a 64 MiB media upload and streams it back intact', async () => {
    const size = 64 * 1024 * 1024;
    const content = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4096) content.writeUInt32LE(i, i);
    const res = await fetch(
      `${emu.urls.google}/upload/drive/v3/files?uploadType=media&fields=id,size,md5Checksum`,
      {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        body: content,
      },
    );
    expect(res.status).toBe(200);
    const file = (await res.json()) as { id: string; size: string; md5Checksum: string };
    expect(file.size).toBe(String(size));
    const down = await fetch(`${emu.urls.google}/drive/v3/files/${file.id}?alt=media`, { headers: auth });
    const back = Buffer.from(await down.arrayBuffer());
    expect(back.length).toBe(size);
    expect(createHash('md5').update(back).digest('hex')).toBe(
      createHash('md5').update(content).digest('hex'),
    );
  });

  it('refuses an upload without a known uploadType', async () => {
    const res = await fetch(`${emu.urls.google}/upload/drive/v3/files?uploadType=chunky`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(res.status).toBe(400);
    expect(
      ((await res.json()) as { error: { errors: Array<{ location: string }> } }).error.errors[0]?.location,
    ).toBe('uploadType');
  });
});
