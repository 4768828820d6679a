import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@hubspot/api-client';
import { describe, expect, it } from 'vitest';
import { useEmulators } from './helpers/emulators.js';

/** Conformance: HubSpot's Files API v3 through the official Node SDK, and its signed links. */

const ADA = '71000001';
const emu = useEmulators({ modules: ['hubspot'] });

function sdk(scopes?: string[]): Client {
  const { access_token } = emu.control.issueToken('hubspot', { userId: ADA, ...(scopes ? { scopes } : {}) });
  return new Client({ accessToken: access_token, basePath: emu.urls.hubspot, numberOfApiCallRetries: 0 });
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function failure(promise: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeTruthy();
  const { code, body } = error as { code: number; body: unknown };
  return { code, body: (typeof body === 'string' ? JSON.parse(body) : body) as Record<string, unknown> };
}

describe('HubSpot Files API v3 through the official SDK', () => {
  it('uploads a private file, reads it, and serves its bytes only through a signed URL', async () => {
    const client = sdk();
    const bytes = randomBytes(2 * 1024 * 1024);
    const uploaded = await client.files.filesApi.upload(
      { data: bytes, name: 'report.pdf' },
      undefined,
      '/reports',
      undefined,
      undefined,
      JSON.stringify({ access: 'PRIVATE' }),
    );
    expect(uploaded).toMatchObject({
      name: 'report',
      extension: 'pdf',
      type: 'DOCUMENT',
      size: bytes.length,
      access: 'PRIVATE',
      archived: false,
      path: '/reports/report.pdf',
    });
    expect(Number.isNaN(new Date(uploaded.createdAt).getTime())).toBe(false);
    const read = await client.files.filesApi.getById(uploaded.id);
    expect(read.id).toBe(uploaded.id);

    // A private file's plain URL is refused; the signed one needs no Authorization.
    expect((await fetch(uploaded.url as string)).status).toBe(403);
    const signed = await client.files.filesApi.getSignedUrl(uploaded.id, undefined, 60);
    expect(signed).toMatchObject({ name: 'report', extension: 'pdf', type: 'DOCUMENT', size: bytes.length });
    expect(signed.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    expect(signed.url.startsWith(`${emu.urls.hubspot}/hubfs/`)).toBe(true);
    const download = await fetch(signed.url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));
    const forged = signed.url.replace(/Signature=[^&]+/, 'Signature=forged');
    expect((await fetch(forged)).status).toBe(403);
  });

  it('serves public files without a signature, suffixes clashing names, and archives', async () => {
    const client = sdk();
    const options = JSON.stringify({ access: 'PUBLIC_NOT_INDEXABLE' });
    const first = await client.files.filesApi.upload(
      { data: Buffer.from('one'), name: 'a.txt' },
      undefined,
      '/docs',
      undefined,
      undefined,
      options,
    );
    const second = await client.files.filesApi.upload(
      { data: Buffer.from('two'), name: 'a.txt' },
      first.parentFolderId,
      undefined,
      undefined,
      undefined,
      options,
    );
    expect(second.parentFolderId).toBe(first.parentFolderId);
    expect(second.path).toBe('/docs/a-1.txt');
    expect(await (await fetch(first.url as string)).text()).toBe('one');
    await client.files.filesApi.archive(first.id);
    const gone = await failure(client.files.filesApi.getById(first.id));
    expect(gone.code).toBe(404);
    expect(gone.body.category).toBe('OBJECT_NOT_FOUND');
  });

  it("refuses bad uploads and missing scopes in HubSpot's error shape", async () => {
    const noOptions = await failure(
      sdk().files.filesApi.upload({ data: Buffer.from('x'), name: 'x.txt' }, undefined, '/docs'),
    );
    expect(noOptions.code).toBe(400);
    expect(noOptions.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
    expect(String(noOptions.body.message)).toContain('options');
    const noFolder = await failure(
      sdk().files.filesApi.upload(
        { data: Buffer.from('x'), name: 'x.txt' },
        undefined,
        undefined,
        undefined,
        undefined,
        '{"access":"PRIVATE"}',
      ),
    );
    expect(String(noFolder.body.message)).toContain('folderPath');
    const crmOnly = sdk(['oauth', 'crm.objects.contacts.read']);
    const scope = await failure(crmOnly.files.filesApi.getById('1'));
    expect(scope.code).toBe(403);
    expect(scope.body.category).toBe('MISSING_SCOPES');
  });
});
