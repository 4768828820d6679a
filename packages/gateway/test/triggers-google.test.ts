import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { TRIGGER_ENV, type TriggerHarness, triggerHarness } from './helpers/triggers.js';

// The Drive, Sheets and Docs trigger types against the Google emulator: each change made there
// (through Portico's tools and proxy, as an application would) reaches the receiver once, signed.

const ADA = '110000000000000000001';
const ID = 'gdrive';

describe.each(BACKENDS)('Google Drive, Sheets and Docs triggers on $name', (backend) => {
  let t: TestGateway;
  let h: TriggerHarness;
  let drive: string;

  beforeAll(async () => {
    t = await startTestGateway(backend, TRIGGER_ENV);
    h = await triggerHarness(() => t);
    ({ connection: drive } = await sandboxAccount(t, {
      provider: 'google_drive',
      identifier: ID,
      userId: ADA,
    }));
    await sandboxAccount(t, { provider: 'google_sheets', identifier: ID, userId: ADA });
    await sandboxAccount(t, { provider: 'google_docs', identifier: ID, userId: ADA });
  });

  afterAll(async () => {
    await t?.close();
    await h?.receiver.close();
  });

  const proxy = async (method: string, path: string, json?: unknown) => {
    const res = await t.api(`/proxy${path}`, {
      method,
      headers: { connection_name: drive, identifier: ID },
      ...(json === undefined ? {} : { json }),
    });
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
    return res.status === 204 ? {} : ((await res.json()) as Record<string, unknown>);
  };
  const tool = async (tool_name: string, tool_input: unknown) => {
    const res = await executeTool(t, { tool_name, identifier: ID, tool_input });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as Record<string, unknown>;
  };
  const changesOf = (id: string) => h.firedFor(id).map((e) => [e.data.change, e.data.item_id]);

  it('reports files created, changed and removed in one folder, and nothing outside it', async () => {
    const folder = await proxy('POST', '/drive/v3/files', {
      name: 'Watched',
      mimeType: 'application/vnd.google-apps.folder',
    });
    const trigger = await h.createTrigger({
      connection_name: drive,
      identifier: ID,
      trigger_type: 'drive_files',
      config: { folder_id: folder.id },
    });
    const id = trigger.id as string;
    const inside = await proxy('POST', '/drive/v3/files', { name: 'inside.txt', parents: [folder.id] });
    await proxy('POST', '/drive/v3/files', { name: 'outside.txt' });
    await h.receiver.waitFor(() => h.firedFor(id).length === 1);
    expect(h.firedFor(id)[0]).toMatchObject({
      data: {
        trigger_type: 'drive_files',
        change: 'created',
        item: { name: 'inside.txt', parents: [folder.id] },
      },
    });
    await proxy('PATCH', `/drive/v3/files/${inside.id}`, { name: 'renamed.txt' });
    await h.receiver.waitFor(() => h.firedFor(id).length === 2);
    await proxy('DELETE', `/drive/v3/files/${inside.id}`);
    await h.receiver.waitFor(() => h.firedFor(id).length === 3);
    await h.pollsAfterNow(id, 2);
    expect(changesOf(id)).toEqual([
      ['created', inside.id],
      ['updated', inside.id],
      ['removed', inside.id],
    ]);
    expect(h.firedFor(id)[1]).toMatchObject({ data: { item: { name: 'renamed.txt' } } });
    await h.remove(id);
  });

  it('reports an edit of a spreadsheet through the Sheets API, once', async () => {
    const sheet = await tool('sheets_create_spreadsheet', { title: 'Watched sheet' });
    const spreadsheetId = sheet.spreadsheetId as string;
    const id = (
      await h.createTrigger({
        connection_name: drive,
        identifier: ID,
        trigger_type: 'sheets_spreadsheet',
        config: { spreadsheet_id: spreadsheetId },
      })
    ).id as string;
    await tool('sheets_update_values', {
      spreadsheet_id: spreadsheetId,
      range: 'Sheet1!A1:B1',
      values: [['a', 'b']],
    });
    await h.receiver.waitFor(() => h.firedFor(id).length === 1);
    await h.pollsAfterNow(id, 2);
    expect(changesOf(id)).toEqual([['updated', spreadsheetId]]);
    expect(h.firedFor(id)[0]).toMatchObject({
      data: { item: { name: 'Watched sheet', version: expect.any(String) } },
    });
    // A document is not a spreadsheet: refused when the trigger is created.
    const doc = await tool('docs_create_document', { title: 'Watched doc' });
    const wrong = await t.api('/api/v1/triggers', {
      method: 'POST',
      json: {
        connection_name: drive,
        identifier: ID,
        trigger_type: 'sheets_spreadsheet',
        config: { spreadsheet_id: doc.documentId },
      },
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      code: 'invalid_input',
      errors: [{ path: '/config/spreadsheet_id' }],
    });
    await h.remove(id);
  });

  it('reports an edit of a document through the Docs API, once', async () => {
    const doc = await tool('docs_create_document', { title: 'Watched brief' });
    const documentId = doc.documentId as string;
    const id = (
      await h.createTrigger({
        connection_name: drive,
        identifier: ID,
        trigger_type: 'docs_document',
        config: { document_id: documentId },
      })
    ).id as string;
    await tool('docs_update_document', {
      document_id: documentId,
      requests: [{ insertText: { location: { index: 1 }, text: 'Hello' } }],
    });
    await h.receiver.waitFor(() => h.firedFor(id).length === 1);
    await h.pollsAfterNow(id, 2);
    expect(changesOf(id)).toEqual([['updated', documentId]]);
    await h.remove(id);
  });
});
