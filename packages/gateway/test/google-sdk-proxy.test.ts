import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { google } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { freePort, startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Google's official clients (googleapis; the @googleapis/* packages are the same generated code,
 * one API each) through the proxy at the root of its own origin, set up as the guide says: the
 * service's rootUrl and, for media uploads, the call's own rootUrl; a proxy token as the access
 * token. Every request they make lands on the proxy origin: a request elsewhere would fail (the
 * sandbox emulators refuse the proxy token, and Google's hosts are unreachable).
 */
type ClientError = Error & {
  response?: { status: number; data?: { error?: { errors?: Array<{ reason?: string }> } } };
};

describe.each(BACKENDS)("Google's official clients through the proxy origin ($name)", (backend) => {
  let t: TestGateway;
  let origin: string;
  const ID = 'google-sdk-user';
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestGateway(backend, { PORTICO_PROXY_PORT: String(port) });
    origin = `http://127.0.0.1:${port}`;
    for (const provider of ['google_drive', 'google_calendar', 'google_sheets', 'google_docs']) {
      const { connection } = await sandboxAccount(t, { provider, identifier: ID });
      const minted = await t.api('/api/v1/proxy/tokens', {
        method: 'POST',
        json: { connection_name: connection, identifier: ID },
      });
      expect(minted.status).toBe(201);
      tokens[provider] = ((await minted.json()) as { token: string }).token;
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const authFor = (provider: string) => {
    const auth = new google.auth.OAuth2();
    auth.setCredentials({ access_token: tokens[provider]! });
    return auth;
  };

  it('Drive: folders, pages of files by pageToken, rename, delete, and a 404 as GaxiosError', async () => {
    const drive = google.drive({ version: 'v3', auth: authFor('google_drive'), rootUrl: `${origin}/` });
    const folder = await drive.files.create({
      requestBody: { name: 'sdk-paging', mimeType: 'application/vnd.google-apps.folder' },
      fields: 'id',
    });
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      const file = await drive.files.create({
        requestBody: {
          name: `f-${i}`,
          parents: [folder.data.id!],
          mimeType: 'application/vnd.google-apps.folder',
        },
        fields: 'id',
      });
      made.push(file.data.id!);
    }
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await drive.files.list({
        q: `'${folder.data.id}' in parents and trashed = false`,
        pageSize: 3,
        fields: 'nextPageToken, files(id)',
        ...(pageToken ? { pageToken } : {}),
      });
      seen.push(...(page.data.files ?? []).map((f) => f.id!));
      pageToken = page.data.nextPageToken ?? undefined;
      pages++;
    } while (pageToken);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...made].sort());
    const renamed = await drive.files.update({
      fileId: made[0]!,
      requestBody: { name: 'renamed' },
      fields: 'name',
    });
    expect(renamed.data.name).toBe('renamed');
    await drive.files.delete({ fileId: made[0]! });
    const gone = await drive.files.get({ fileId: made[0]! }).catch((e: unknown) => e);
    // The client's own error class (from the gaxios copy googleapis carries), with Google's body.
    expect((gone as Error).constructor.name).toBe('GaxiosError');
    expect((gone as ClientError).response?.status).toBe(404);
    expect((gone as ClientError).response?.data?.error?.errors?.[0]?.reason).toBe('notFound');
  });

  it('Drive: a 3 MiB binary up (multipart and resumable) and down, identical bytes', async () => {
    const drive = google.drive({ version: 'v3', auth: authFor('google_drive'), rootUrl: `${origin}/` });
    const bytes = randomBytes(3 * 1024 * 1024);
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    for (const uploadType of ['multipart', 'resumable'] as const) {
      const uploaded = await drive.files.create(
        {
          uploadType,
          requestBody: { name: `blob-${uploadType}.bin` },
          media: { mimeType: 'application/octet-stream', body: Readable.from([bytes]) },
          fields: 'id,size',
        },
        // Media uploads take their URL from the call's rootUrl only (the guide says so).
        { rootUrl: `${origin}/` },
      );
      expect(Number(uploaded.data.size)).toBe(bytes.length);
      const down = await drive.files.get(
        { fileId: uploaded.data.id!, alt: 'media' },
        { responseType: 'arraybuffer' },
      );
      expect(digest(Buffer.from(down.data as ArrayBuffer))).toBe(digest(bytes));
    }
  });

  it('Calendar: insert, page through events, patch and delete', async () => {
    const calendar = google.calendar({
      version: 'v3',
      auth: authFor('google_calendar'),
      rootUrl: `${origin}/`,
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const event = await calendar.events.insert({
        calendarId: 'primary',
        requestBody: {
          summary: `sdk event ${i}`,
          start: { dateTime: `2030-01-0${i + 1}T10:00:00Z` },
          end: { dateTime: `2030-01-0${i + 1}T11:00:00Z` },
        },
      });
      ids.push(event.data.id!);
    }
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await calendar.events.list({
        calendarId: 'primary',
        timeMin: '2030-01-01T00:00:00Z',
        timeMax: '2030-01-31T00:00:00Z',
        maxResults: 2,
        ...(pageToken ? { pageToken } : {}),
      });
      seen.push(...(page.data.items ?? []).map((e) => e.id!));
      pageToken = page.data.nextPageToken ?? undefined;
    } while (pageToken);
    expect(ids.every((id) => seen.includes(id))).toBe(true);
    const patched = await calendar.events.patch({
      calendarId: 'primary',
      eventId: ids[0]!,
      requestBody: { summary: 'patched' },
    });
    expect(patched.data.summary).toBe('patched');
    await calendar.events.delete({ calendarId: 'primary', eventId: ids[0]! });
    // As Google does, a deleted event is still there to read, cancelled.
    const gone = await calendar.events.get({ calendarId: 'primary', eventId: ids[0]! });
    expect(gone.data.status).toBe('cancelled');
    const missing = await calendar.events
      .get({ calendarId: 'primary', eventId: 'nosuchevent' })
      .catch((e: unknown) => e);
    expect((missing as ClientError).response?.status).toBe(404);
  });

  it('Sheets: create a spreadsheet, write and read values', async () => {
    const sheets = google.sheets({ version: 'v4', auth: authFor('google_sheets'), rootUrl: `${origin}/` });
    const created = await sheets.spreadsheets.create({ requestBody: { properties: { title: 'sdk sheet' } } });
    const id = created.data.spreadsheetId!;
    await sheets.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'A1:B2',
      valueInputOption: 'RAW',
      requestBody: {
        values: [
          ['a', 'b'],
          ['1', '2'],
        ],
      },
    });
    const read = await sheets.spreadsheets.values.get({ spreadsheetId: id, range: 'A1:B2' });
    expect(read.data.values).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('Docs: create a document, insert text, read it back', async () => {
    const docs = google.docs({ version: 'v1', auth: authFor('google_docs'), rootUrl: `${origin}/` });
    const created = await docs.documents.create({ requestBody: { title: 'sdk doc' } });
    const id = created.data.documentId!;
    await docs.documents.batchUpdate({
      documentId: id,
      requestBody: { requests: [{ insertText: { location: { index: 1 }, text: 'Hello through Portico' } }] },
    });
    const doc = await docs.documents.get({ documentId: id });
    const text = JSON.stringify(doc.data.body);
    expect(text).toContain('Hello through Portico');
  });
});
