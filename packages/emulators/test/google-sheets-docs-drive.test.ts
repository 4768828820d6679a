import { beforeEach, describe, expect, it } from 'vitest';
import { documentIdFrom } from '../src/providers/google/native-files.js';
import { mintToken, useEmulators } from './helpers/emulators.js';

/** Sheets and Docs files as Drive sees them, over plain HTTP as any Drive client would. */

const S = 'https://www.googleapis.com/auth/';
const ADA = '110000000000000000001';
const ADA_BUDGET = documentIdFrom(`sheets:${ADA}:quarterly-budget`);
const ADA_NOTES = documentIdFrom(`docs:${ADA}:kickoff-notes`);

const emu = useEmulators({ modules: ['google'] });
let token: string;

async function call(method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${emu.urls.google}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // exports are not JSON
  }
  return { status: res.status, json, text };
}

beforeEach(() => {
  token = mintToken(emu, 'google', ADA, [`${S}drive`, `${S}spreadsheets`, `${S}documents`]);
});

describe('Sheets and Docs files in Drive', () => {
  it('lists seeded and created native files in the Drive root', async () => {
    const sheet = await call('POST', '/v4/spreadsheets', { properties: { title: 'Fresh numbers' } });
    const doc = await call('POST', '/v1/documents', { title: 'Fresh words' });
    const about = await call('GET', '/drive/v3/about?fields=*');
    expect(about.status).toBe(200);
    const q = encodeURIComponent(
      "mimeType = 'application/vnd.google-apps.spreadsheet' or mimeType = 'application/vnd.google-apps.document'",
    );
    const list = await call(
      'GET',
      `/drive/v3/files?q=${q}&fields=files(id,name,mimeType,parents)&pageSize=100`,
    );
    expect(list.status).toBe(200);
    const files = list.json.files as Array<{ id: string; name: string; mimeType: string; parents: string[] }>;
    const byId = new Map(files.map((f) => [f.id, f]));
    expect(byId.get(ADA_BUDGET)).toMatchObject({
      name: 'Quarterly budget',
      mimeType: 'application/vnd.google-apps.spreadsheet',
    });
    expect(byId.get(ADA_NOTES)).toMatchObject({
      name: 'Project kickoff notes',
      mimeType: 'application/vnd.google-apps.document',
    });
    expect(byId.get(sheet.json.spreadsheetId as string)?.name).toBe('Fresh numbers');
    expect(byId.get(doc.json.documentId as string)?.name).toBe('Fresh words');
    const root = await call('GET', '/drive/v3/files/root?fields=id');
    expect(byId.get(ADA_BUDGET)?.parents).toEqual([root.json.id]);
  });

  it('exports the current spreadsheet and document contents', async () => {
    await call('PUT', `/v4/spreadsheets/${ADA_BUDGET}/values/Budget!A2?valueInputOption=RAW`, {
      values: [['Wages, all']],
    });
    const csv = await call('GET', `/drive/v3/files/${ADA_BUDGET}/export?mimeType=text/csv`);
    expect(csv.status).toBe(200);
    expect(csv.text.split('\r\n').slice(0, 2)).toEqual([
      'Category,Q1,Q2,Q3,Q4,Total',
      '"Wages, all",42000,42000,45000,45000,174000',
    ]);
    await call('POST', `/v1/documents/${ADA_NOTES}:batchUpdate`, {
      requests: [{ insertText: { location: { index: 1 }, text: 'Updated: ' } }],
    });
    const txt = await call('GET', `/drive/v3/files/${ADA_NOTES}/export?mimeType=text/plain`);
    expect(txt.text.startsWith('Updated: Project kickoff\n')).toBe(true);
  });

  it('follows renames both ways and bumps the Drive version on edits', async () => {
    const before = await call('GET', `/drive/v3/files/${ADA_BUDGET}?fields=version,modifiedTime`);
    await call('PATCH', `/drive/v3/files/${ADA_BUDGET}`, { name: 'Budget FY25' });
    const viaSheets = await call('GET', `/v4/spreadsheets/${ADA_BUDGET}?fields=properties.title`);
    expect(viaSheets.json).toEqual({ properties: { title: 'Budget FY25' } });
    await call('POST', `/v4/spreadsheets/${ADA_BUDGET}:batchUpdate`, {
      requests: [{ updateSpreadsheetProperties: { properties: { title: 'Budget FY26' }, fields: 'title' } }],
    });
    const viaDrive = await call('GET', `/drive/v3/files/${ADA_BUDGET}?fields=name,version`);
    expect(viaDrive.json.name).toBe('Budget FY26');
    expect(Number(viaDrive.json.version)).toBeGreaterThan(Number(before.json.version));

    await call('PATCH', `/drive/v3/files/${ADA_NOTES}`, { name: 'Kickoff (final)' });
    const doc = await call('GET', `/v1/documents/${ADA_NOTES}?fields=title`);
    expect(doc.json).toEqual({ title: 'Kickoff (final)' });
  });

  it('forgets files deleted through Drive', async () => {
    expect((await call('DELETE', `/drive/v3/files/${ADA_BUDGET}`)).status).toBe(204);
    expect((await call('GET', `/v4/spreadsheets/${ADA_BUDGET}`)).status).toBe(404);
    expect((await call('DELETE', `/drive/v3/files/${ADA_NOTES}`)).status).toBe(204);
    expect((await call('GET', `/v1/documents/${ADA_NOTES}`)).status).toBe(404);
  });

  it('opens native files created through Drive as blank documents and spreadsheets', async () => {
    const sheet = await call('POST', '/drive/v3/files', {
      name: 'Made in Drive',
      mimeType: 'application/vnd.google-apps.spreadsheet',
    });
    expect(sheet.status).toBe(200);
    const ss = await call('GET', `/v4/spreadsheets/${sheet.json.id}`);
    expect(ss.status).toBe(200);
    expect((ss.json.properties as { title: string }).title).toBe('Made in Drive');
    expect((ss.json.sheets as Array<{ properties: { title: string } }>)[0]?.properties.title).toBe('Sheet1');

    const doc = await call('POST', '/drive/v3/files', {
      name: 'Doc from Drive',
      mimeType: 'application/vnd.google-apps.document',
    });
    const d = await call('GET', `/v1/documents/${doc.json.id}`);
    expect(d.status).toBe(200);
    expect(d.json.title).toBe('Doc from Drive');
    expect((d.json.body as { content: unknown[] }).content).toHaveLength(2);
  });
});
