import { Readable } from 'node:stream';
import { type drive_v3, google } from 'googleapis';
import { beforeEach, describe, expect, it } from 'vitest';
import { mintToken, useEmulators } from './helpers/emulators.js';
import { failure, type GoogleErrorBody, googleClient } from './helpers/googleapis.js';

const DRIVE = 'https://www.googleapis.com/auth/drive';
const ADA = 'ada.lovelace@example.com';

describe('Google Drive v3 emulator, through googleapis', () => {
  const emu = useEmulators({ modules: ['google'] });
  let drive: drive_v3.Drive;
  let token: string;

  beforeEach(() => {
    token = mintToken(emu, 'google', ADA, [DRIVE]);
    drive = googleClient(emu, token, (auth) => google.drive({ version: 'v3', auth }));
  });

  const raw = (path: string, init: RequestInit = {}) =>
    fetch(`${emu.urls.google}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...init.headers },
    });

  const names = (res: { data: drive_v3.Schema$FileList }) => (res.data.files ?? []).map((f) => f.name).sort();

  it('lists the seeded files with the default fields', async () => {
    const res = await drive.files.list();
    expect(res.data.kind).toBe('drive#fileList');
    expect(res.data.incompleteSearch).toBe(false);
    const files = res.data.files ?? [];
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const f of files) expect(Object.keys(f).sort()).toEqual(['id', 'kind', 'mimeType', 'name']);
    const types = files.map((f) => f.mimeType);
    for (const t of [
      'application/pdf',
      'image/png',
      'text/plain',
      'text/csv',
      'application/vnd.google-apps.folder',
    ]) {
      expect(types).toContain(t);
    }
    expect(names(res)).not.toContain('My Drive');
  });

  it('narrows the response to the requested fields', async () => {
    const res = await drive.files.list({ fields: 'files(id,name,size,parents)', pageSize: 2 });
    expect(res.data.nextPageToken).toBeUndefined();
    expect(res.data.kind).toBeUndefined();
    for (const f of res.data.files ?? []) {
      expect(Object.keys(f).every((k) => ['id', 'name', 'size', 'parents'].includes(k))).toBe(true);
    }
    const withToken = await drive.files.list({ fields: 'nextPageToken, files(id)', pageSize: 2 });
    expect(withToken.data.nextPageToken).toBeTruthy();
  });

  it('searches with q: name, mimeType, parents, trashed, starred, dates and boolean logic', async () => {
    const folder = (await drive.files.list({ q: "mimeType = 'application/vnd.google-apps.folder'" })).data
      .files!;
    expect(folder).toHaveLength(1);
    const folderId = folder[0]!.id!;

    const inFolder = await drive.files.list({ q: `'${folderId}' in parents and trashed = false` });
    expect(names(inFolder)).toEqual([
      'Lecture: poetical science',
      'Sketch of the Analytical Engine.pdf',
      'engine-diagram.png',
    ]);
    // Sheets and Docs file their seeded documents in the root too; only Drive's own are checked here.
    const inRoot = await drive.files.list({
      q: "'root' in parents and not mimeType contains 'vnd.google-apps.document' and not mimeType contains 'vnd.google-apps.spreadsheet'",
    });
    expect(names(inRoot)).toEqual(['Analytical Engine', 'Note G.txt', 'bernoulli-numbers.csv']);

    expect(names(await drive.files.list({ q: "name contains 'bernoulli'" }))).toEqual([
      'bernoulli-numbers.csv',
    ]);
    expect(names(await drive.files.list({ q: "name contains 'numbers'" }))).toEqual([
      'bernoulli-numbers.csv',
    ]);
    expect(names(await drive.files.list({ q: "name contains 'ernoulli'" }))).toEqual([]);
    expect(names(await drive.files.list({ q: "name = 'Note G.txt'" }))).toEqual(['Note G.txt']);
    expect(names(await drive.files.list({ q: 'starred = true' }))).toEqual([
      'Sketch of the Analytical Engine.pdf',
    ]);
    expect(
      names(
        await drive.files.list({
          q: "(mimeType = 'text/plain' or mimeType = 'text/csv') and not name contains 'note'",
        }),
      ),
    ).toEqual(['bernoulli-numbers.csv']);
    const notFolders = await drive.files.list({ q: "mimeType != 'application/vnd.google-apps.folder'" });
    expect(notFolders.data.files?.some((f) => f.mimeType === 'application/vnd.google-apps.folder')).toBe(
      false,
    );
    const since = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const recent = `modifiedTime > '${since}' and not mimeType contains 'vnd.google-apps'`;
    expect(names(await drive.files.list({ q: recent }))).toEqual(['bernoulli-numbers.csv']);
    const older = await drive.files.list({ q: `modifiedTime <= '${since}' and mimeType = 'text/csv'` });
    expect(older.data.files).toEqual([]);
  });

  it('searches text content, descriptions and names with fullText', async () => {
    expect(names(await drive.files.list({ q: "fullText contains 'first published algorithm'" }))).toEqual([
      'Note G.txt',
    ]);
    expect(names(await drive.files.list({ q: "fullText contains 'translator'" }))).toEqual([
      'Sketch of the Analytical Engine.pdf',
    ]);
    expect(names(await drive.files.list({ q: "fullText contains 'imagination'" }))).toEqual([
      'Lecture: poetical science',
    ]);
  });

  it('handles escaped quotes and backslashes in q literals', async () => {
    await drive.files.create({ requestBody: { name: "Ada's punch cards" } });
    await drive.files.create({ requestBody: { name: 'C:\\engine\\cards' } });
    expect(names(await drive.files.list({ q: "name = 'Ada\\'s punch cards'" }))).toEqual([
      "Ada's punch cards",
    ]);
    expect(names(await drive.files.list({ q: "name contains 'Ada\\'s punch'" }))).toEqual([
      "Ada's punch cards",
    ]);
    expect(names(await drive.files.list({ q: "name = 'C:\\\\engine\\\\cards'" }))).toEqual([
      'C:\\engine\\cards',
    ]);
    // The file's own text says "It's": fullText sees through the escape too.
    expect(names(await drive.files.list({ q: "fullText contains 'It\\'s the first'" }))).toEqual([
      'Note G.txt',
    ]);
  });

  it('orders and pages results', async () => {
    const byName = await drive.files.list({ orderBy: 'name', fields: 'files(name)' });
    const list = byName.data.files!.map((f) => f.name!);
    expect(list).toEqual([...list].sort((a, b) => a.localeCompare(b, 'en')));
    const folderFirst = await drive.files.list({ orderBy: 'folder,name desc', fields: 'files(mimeType)' });
    expect(folderFirst.data.files![0]!.mimeType).toBe('application/vnd.google-apps.folder');
    const newest = await drive.files.list({ orderBy: 'modifiedTime desc', fields: 'files(modifiedTime)' });
    const times = newest.data.files!.map((f) => f.modifiedTime!);
    expect([...times].sort().reverse()).toEqual(times);

    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await drive.files.list({
        pageSize: 2,
        pageToken,
        orderBy: 'name',
        fields: 'nextPageToken,files(name)',
      });
      expect(page.data.files!.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.files!.map((f) => f.name!));
      pageToken = page.data.nextPageToken ?? undefined;
    } while (pageToken);
    expect(seen).toEqual(list);
  });

  it('gets metadata with fields and downloads bytes with alt=media', async () => {
    const csv = (await drive.files.list({ q: "mimeType = 'text/csv'" })).data.files![0]!;
    const meta = await drive.files.get({
      fileId: csv.id!,
      fields: 'id,name,size,md5Checksum,owners(emailAddress),parents',
    });
    expect(meta.data.name).toBe('bernoulli-numbers.csv');
    expect(meta.data.owners).toEqual([{ emailAddress: ADA }]);
    expect(Number(meta.data.size)).toBeGreaterThan(10);
    const media = await drive.files.get({ fileId: csv.id!, alt: 'media' }, { responseType: 'text' });
    expect(
      media.headers['content-type'] ?? (media.headers as unknown as Headers).get?.('content-type'),
    ).toMatch(/^text\/csv/);
    expect(String(media.data)).toMatch(/^n,numerator,denominator\n/);
    const { createHash } = await import('node:crypto');
    expect(createHash('md5').update(String(media.data)).digest('hex')).toBe(meta.data.md5Checksum);

    const png = (await drive.files.list({ q: "mimeType = 'image/png'" })).data.files![0]!;
    const bytes = await drive.files.get({ fileId: png.id!, alt: 'media' }, { responseType: 'arraybuffer' });
    expect(
      Buffer.from(bytes.data as ArrayBuffer)
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');

    const root = await drive.files.get({ fileId: 'root', fields: 'id,name,mimeType' });
    expect(root.data).toMatchObject({ name: 'My Drive', mimeType: 'application/vnd.google-apps.folder' });
  });

  it('uploads with multipart (metadata + media) and with a simple media upload', async () => {
    const folder = (await drive.files.list({ q: "mimeType = 'application/vnd.google-apps.folder'" })).data
      .files![0]!;
    const created = await drive.files.create({
      requestBody: { name: 'report.txt', parents: [folder.id!], description: 'weekly' },
      media: { mimeType: 'text/plain', body: Readable.from(['hello ', 'drive']) },
      fields: 'id,name,mimeType,parents,size,description',
    });
    expect(created.data).toMatchObject({
      name: 'report.txt',
      mimeType: 'text/plain',
      parents: [folder.id],
      size: '11',
      description: 'weekly',
    });
    const back = await drive.files.get({ fileId: created.data.id!, alt: 'media' }, { responseType: 'text' });
    expect(back.data).toBe('hello drive');

    const simple = await drive.files.create({ media: { mimeType: 'application/json', body: '{"a":1}' } });
    expect(simple.data).toMatchObject({ kind: 'drive#file', name: 'Untitled', mimeType: 'application/json' });
    const json = await raw(`/drive/v3/files/${simple.data.id}?alt=media`);
    expect(await json.text()).toBe('{"a":1}');

    const named = await raw('/upload/drive/v3/files?uploadType=media&name=from-proxy.bin', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 1, 2, 255]),
    });
    expect(named.status).toBe(200);
    const namedFile = (await named.json()) as { id: string; name: string; mimeType: string };
    expect(namedFile).toMatchObject({ name: 'from-proxy.bin', mimeType: 'application/octet-stream' });
    const bin = await raw(`/drive/v3/files/${namedFile.id}?alt=media`);
    expect(new Uint8Array(await bin.arrayBuffer())).toEqual(new Uint8Array([0, 1, 2, 255]));
  });

  it('replaces content with an update upload', async () => {
    const created = await drive.files.create({
      requestBody: { name: 'v.txt' },
      media: { mimeType: 'text/plain', body: 'one' },
    });
    const updated = await drive.files.update({
      fileId: created.data.id!,
      requestBody: { name: 'v2.txt' },
      media: { mimeType: 'text/plain', body: 'two!' },
      fields: 'name,size,version',
    });
    expect(updated.data).toMatchObject({ name: 'v2.txt', size: '4' });
    expect(Number(updated.data.version)).toBeGreaterThan(1);
  });

  it('creates folders, renames, moves, trashes and deletes', async () => {
    const folder = await drive.files.create({
      requestBody: { name: 'Archive', mimeType: 'application/vnd.google-apps.folder' },
      fields: 'id,mimeType,parents',
    });
    const rootId = (await drive.files.get({ fileId: 'root', fields: 'id' })).data.id!;
    expect(folder.data.parents).toEqual([rootId]);
    const txt = (await drive.files.list({ q: "name = 'Note G.txt'" })).data.files![0]!;

    const renamed = await drive.files.update({
      fileId: txt.id!,
      requestBody: { name: 'Note G (final).txt' },
    });
    expect(renamed.data.name).toBe('Note G (final).txt');
    const moved = await drive.files.update({
      fileId: txt.id!,
      addParents: folder.data.id!,
      removeParents: rootId,
      fields: 'parents',
    });
    expect(moved.data.parents).toEqual([folder.data.id]);

    const trashed = await drive.files.update({
      fileId: folder.data.id!,
      requestBody: { trashed: true },
      fields: 'trashed,explicitlyTrashed',
    });
    expect(trashed.data).toEqual({ trashed: true, explicitlyTrashed: true });
    const child = await drive.files.get({ fileId: txt.id!, fields: 'trashed,explicitlyTrashed' });
    expect(child.data).toEqual({ trashed: true, explicitlyTrashed: false });
    expect(names(await drive.files.list({ q: 'trashed = true' }))).toEqual(['Archive', 'Note G (final).txt']);
    expect(names(await drive.files.list({ q: 'trashed = false' }))).not.toContain('Archive');

    const del = await drive.files.delete({ fileId: folder.data.id! });
    expect(del.status).toBe(204);
    const gone = await failure(drive.files.get({ fileId: txt.id! }));
    expect(gone.status).toBe(404);
    const again = await failure(drive.files.delete({ fileId: folder.data.id! }));
    expect(again.status).toBe(404);
  });

  it('exports native files and refuses to download them', async () => {
    const deck = (await drive.files.list({ q: "mimeType = 'application/vnd.google-apps.presentation'" })).data
      .files![0]!;
    const exported = await drive.files.export(
      { fileId: deck.id!, mimeType: 'text/plain' },
      { responseType: 'text' },
    );
    expect(String(exported.data)).toMatch(/^Poetical science/);

    const res = await raw(`/drive/v3/files/${deck.id}?alt=media`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      error: {
        code: 403,
        message: 'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
        errors: [
          { reason: 'fileNotDownloadable', domain: 'global', location: 'alt', locationType: 'parameter' },
        ],
      },
    });
    const pdf = (await drive.files.list({ q: "mimeType = 'application/pdf'" })).data.files![0]!;
    const notExportable = await failure(drive.files.export({ fileId: pdf.id!, mimeType: 'text/plain' }));
    expect(notExportable.status).toBe(403);
    expect(notExportable.body.error.errors?.[0]?.reason).toBe('fileNotExportable');
  });

  it('serves byte ranges of a download', async () => {
    const txt = (await drive.files.list({ q: "name = 'Note G.txt'" })).data.files![0]!;
    const part = await raw(`/drive/v3/files/${txt.id}?alt=media`, { headers: { range: 'bytes=0-5' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toMatch(/^bytes 0-5\/\d+$/);
    expect(await part.text()).toBe('Note G');
  });

  it('finds shared-drive items only for a request that supports shared drives and asks for them', async () => {
    const q = "name = 'Difference Engine funding.txt'";
    expect(names(await drive.files.list({ q }))).toEqual([]);
    expect(names(await drive.files.list({ q, includeItemsFromAllDrives: true }))).toEqual([]);
    expect(names(await drive.files.list({ q, supportsAllDrives: true }))).toEqual([]);
    const all = { supportsAllDrives: true, includeItemsFromAllDrives: true };
    const found = await drive.files.list({ q, ...all, fields: 'files(id,name,driveId,owners)' });
    const file = found.data.files![0]!;
    // Drive names the shared drive of an item and no owners.
    expect(file).toEqual({
      id: expect.any(String),
      name: 'Difference Engine funding.txt',
      driveId: expect.any(String),
    });
    const sharedDrive = file.driveId!;
    const inDrive = await drive.files.list({ corpora: 'drive', driveId: sharedDrive, ...all });
    expect(names(inDrive)).toEqual(['Difference Engine funding.txt']);
    expect(names(await drive.files.list({ corpora: 'drive', driveId: sharedDrive }))).toEqual([]);

    expect((await failure(drive.files.get({ fileId: file.id! }))).status).toBe(404);
    const meta = await drive.files.get({ fileId: file.id!, supportsAllDrives: true, fields: 'name,driveId' });
    expect(meta.data).toEqual({ name: 'Difference Engine funding.txt', driveId: sharedDrive });
    const root = await drive.files.get({
      fileId: sharedDrive,
      supportsAllDrives: true,
      fields: 'name,mimeType',
    });
    expect(root.data).toEqual({ name: 'Analytical Society', mimeType: 'application/vnd.google-apps.folder' });

    // A file created in a shared-drive folder is in that drive; without the flag the folder is not found.
    const into = { name: 'Minutes.txt', parents: [sharedDrive] };
    expect((await failure(drive.files.create({ requestBody: into }))).status).toBe(404);
    const created = await drive.files.create({
      requestBody: into,
      supportsAllDrives: true,
      fields: 'driveId',
    });
    expect(created.data.driveId).toBe(sharedDrive);
    expect(names(await drive.files.list({ corpora: 'drive', driveId: sharedDrive, ...all }))).toEqual([
      'Difference Engine funding.txt',
      'Minutes.txt',
    ]);

    const bad = await raw('/drive/v3/files?supportsAllDrives=yes');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as GoogleErrorBody).error.errors?.[0]).toMatchObject({
      location: 'supportsAllDrives',
    });
  });

  it('keeps each user’s Drive separate', async () => {
    const grace = emu.control.issueToken('google', { userId: 'grace.hopper@example.com', scopes: [DRIVE] });
    const res = await fetch(
      `${emu.urls.google}/drive/v3/files?q=${encodeURIComponent("name = 'Note G.txt'")}`,
      {
        headers: { authorization: `Bearer ${grace.access_token}` },
      },
    );
    expect(((await res.json()) as { files: unknown[] }).files).toEqual([]);
  });

  describe('errors on the wire', () => {
    it('answers 400 invalid on a malformed q', async () => {
      for (const q of [
        "name contains 'unterminated",
        "name ~ 'x'",
        "bogus = 'x'",
        "(name = 'x'",
        'trashed = maybe',
      ]) {
        const res = await raw(`/drive/v3/files?q=${encodeURIComponent(q)}`);
        expect(res.status, q).toBe(400);
        expect(await res.json()).toEqual({
          error: {
            code: 400,
            message: 'Invalid Value',
            errors: [
              {
                message: 'Invalid Value',
                domain: 'global',
                reason: 'invalid',
                location: 'q',
                locationType: 'parameter',
              },
            ],
            status: 'INVALID_ARGUMENT',
          },
        });
      }
    });

    it('answers 400 for bad pageSize, orderBy and fields', async () => {
      expect((await raw('/drive/v3/files?pageSize=0')).status).toBe(400);
      expect((await raw('/drive/v3/files?pageSize=1001')).status).toBe(400);
      expect((await raw('/drive/v3/files?orderBy=size')).status).toBe(400);
      const fields = await raw('/drive/v3/files?fields=files(id,bogus)');
      expect(fields.status).toBe(400);
      expect(((await fields.json()) as GoogleErrorBody).error.errors?.[0]).toMatchObject({
        location: 'fields',
      });
    });

    it('answers 404 notFound with the file id', async () => {
      const res = await raw('/drive/v3/files/1nosuchfile');
      expect(res.status).toBe(404);
      expect(((await res.json()) as GoogleErrorBody).error).toMatchObject({
        code: 404,
        message: 'File not found: 1nosuchfile.',
        errors: [{ reason: 'notFound', location: 'fileId', locationType: 'parameter' }],
      });
    });

    it('refuses to write parents directly on update', async () => {
      const txt = (await drive.files.list({ q: "name = 'Note G.txt'" })).data.files![0]!;
      const res = await failure(drive.files.update({ fileId: txt.id!, requestBody: { parents: ['root'] } }));
      expect(res.status).toBe(403);
      expect(res.body.error.errors?.[0]?.reason).toBe('fieldNotWritable');
    });

    it('answers 401 in Google shape and 403 for a token without a Drive scope', async () => {
      const bad = await fetch(`${emu.urls.google}/drive/v3/files`, {
        headers: { authorization: 'Bearer nope' },
      });
      expect(bad.status).toBe(401);
      expect(((await bad.json()) as GoogleErrorBody).error.errors?.[0]?.reason).toBe('authError');
      const calendarOnly = emu.control.issueToken('google', {
        userId: ADA,
        scopes: ['https://www.googleapis.com/auth/calendar'],
      }).access_token;
      const res = await fetch(`${emu.urls.google}/drive/v3/files`, {
        headers: { authorization: `Bearer ${calendarOnly}` },
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as GoogleErrorBody).error.errors?.[0]?.reason).toBe(
        'insufficientPermissions',
      );
    });

    it('lets a metadata-only token list but not download', async () => {
      const meta = emu.control.issueToken('google', {
        userId: ADA,
        scopes: ['https://www.googleapis.com/auth/drive.metadata.readonly'],
      }).access_token;
      const headers = { authorization: `Bearer ${meta}` };
      const list = await fetch(
        `${emu.urls.google}/drive/v3/files?q=${encodeURIComponent("name = 'Note G.txt'")}`,
        { headers },
      );
      const id = ((await list.json()) as { files: Array<{ id: string }> }).files[0]!.id;
      expect((await fetch(`${emu.urls.google}/drive/v3/files/${id}?alt=media`, { headers })).status).toBe(
        403,
      );
      const write = await fetch(`${emu.urls.google}/drive/v3/files/${id}`, {
        method: 'DELETE',
        headers,
      });
      expect(write.status).toBe(403);
    });
  });
});

describe('Google Drive v3 change log, through googleapis', () => {
  const emu = useEmulators({ modules: ['google'] });
  let drive: drive_v3.Drive;

  beforeEach(() => {
    const token = mintToken(emu, 'google', ADA, [DRIVE]);
    drive = googleClient(emu, token, (auth) => google.drive({ version: 'v3', auth }));
  });

  it('lists what changed since a start page token: created, edited, trashed and removed files, each once', async () => {
    const start = (await drive.changes.getStartPageToken()).data.startPageToken!;
    const quiet = await drive.changes.list({ pageToken: start });
    expect(quiet.data).toMatchObject({ kind: 'drive#changeList', changes: [], newStartPageToken: start });
    const made = (await drive.files.create({ requestBody: { name: 'log.txt' }, fields: 'id' })).data.id!;
    await drive.files.update({ fileId: made, requestBody: { name: 'log-renamed.txt' } });
    const gone = (await drive.files.create({ requestBody: { name: 'gone.txt' }, fields: 'id' })).data.id!;
    await drive.files.delete({ fileId: gone });
    const fields = 'newStartPageToken,nextPageToken,changes(fileId,removed,time,file(name,version))';
    const listed = await drive.changes.list({ pageToken: start, fields });
    expect(listed.data.changes).toEqual([
      {
        fileId: made,
        removed: false,
        time: expect.any(String),
        file: { name: 'log-renamed.txt', version: expect.any(String) },
      },
      { fileId: gone, removed: true, time: expect.any(String) },
    ]);
    const next = listed.data.newStartPageToken!;
    expect(Number(next)).toBeGreaterThan(Number(start));
    expect((await drive.changes.list({ pageToken: next })).data.changes).toEqual([]);
    // Pages of one change each: a nextPageToken, then the new start page token on the last page.
    const first = await drive.changes.list({ pageToken: start, pageSize: 1 });
    expect(first.data.changes).toHaveLength(1);
    expect(first.data.nextPageToken).toBeTruthy();
    const second = await drive.changes.list({ pageToken: first.data.nextPageToken!, pageSize: 1 });
    expect(second.data.changes?.[0]?.fileId).toBe(gone);
    expect(second.data.newStartPageToken).toBe(next);
    await expect(drive.changes.list({ pageToken: 'nope' })).rejects.toMatchObject({ code: 400 });
  });
});
