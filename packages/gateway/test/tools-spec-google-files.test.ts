import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { toolHarness } from './helpers/tools.js';

// The drive_, sheets_ and docs_ tools called with the specification's parameter names only
// (docs/spec/specification.md, "Tools: file storage", "spreadsheets", "word processing"), each
// effect read back through a later call or the Google emulator's state.

const ADA = '110000000000000000001';
const ID = 'spec-files-user';

/** The slice of the Google emulator's state these tests read (packages/emulators/src/providers/google). */
interface GoogleState {
  byUser: Map<
    string,
    {
      drive: Map<string, { id: string; name: string; mimeType: string; extra?: { driveId?: string } }>;
      sheets: {
        spreadsheets: Map<
          string,
          {
            title: string;
            sheets: Array<{ title: string; cells: Map<number, Map<number, { value: unknown }>> }>;
          }
        >;
      };
      docs: {
        documents: Map<
          string,
          { title: string; revisionId: string; body: { runs: Array<{ text: string }> } }
        >;
      };
    }
  >;
}

const MISSING_RULE = /is required \(rule: a missing required parameter is invalid/;

describe.each(BACKENDS)('drive_, sheets_ and docs_ tools by the specification on $name', (backend) => {
  let t: TestGateway;
  const { control, run, expectInvalid } = toolHarness({ gateway: () => t, identifier: ID });
  const ada = () => control().state<GoogleState>('google').byUser.get(ADA)!;

  // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
  async function ok(tool_name: string, tool_input: Record<string, unknown>): Promise<Record<string, any>> {
    const res = await run(tool_name, tool_input);
    expect(res.status, `${tool_name}: ${JSON.stringify(res.body)}`).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
    return res.body.data as Record<string, any>;
  }

  /** Every result of a drive_ search, one page_size-sized page at a time, following page_token. */
  async function allPages(tool: string, input: Record<string, unknown>, pageSize: number): Promise<string[]> {
    const ids: string[] = [];
    let next: Record<string, unknown> = {};
    for (let pages = 0; pages < 50; pages++) {
      const page = await ok(tool, { ...input, page_size: pageSize, ...next });
      expect(page.results.length).toBeLessThanOrEqual(pageSize);
      ids.push(...page.results.map((f: { id: string }) => f.id));
      if (!page.has_more) return ids;
      expect(Object.keys(page.next_page)).toEqual(['page_token']);
      next = page.next_page;
    }
    throw new Error(`${tool} did not finish paging`);
  }

  /** The seeded file in Ada's shared drive, which Drive shows only to calls supporting shared drives. */
  const sharedFile = () => [...ada().drive.values()].find((f) => f.name === 'Difference Engine funding.txt')!;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    for (const provider of ['google_drive', 'google_sheets', 'google_docs']) {
      await sandboxAccount(t, { provider, identifier: ID, userId: ADA });
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  it('drive_get_file_metadata takes file_id, fields and supports_all_drives', async () => {
    const file = sharedFile();
    expect(file.extra?.driveId).toEqual(expect.any(String));
    const data = await ok('drive_get_file_metadata', {
      file_id: file.id,
      fields: 'id,name,mimeType,size,driveId',
      supports_all_drives: true,
    });
    expect(data).toEqual({
      id: file.id,
      name: 'Difference Engine funding.txt',
      mimeType: 'text/plain',
      size: expect.stringMatching(/^\d+$/),
      driveId: file.extra!.driveId,
    });
    const withoutSharedDrives = await run('drive_get_file_metadata', {
      file_id: file.id,
      supports_all_drives: false,
    });
    expect(withoutSharedDrives.status).toBe(404);
  });

  it('drive_search_content takes search_term, mime_type, fields, page_size, page_token and supports_all_drives', async () => {
    const input = { search_term: 'Engine', mime_type: 'text/plain', fields: 'id,name' };
    const everywhere = await allPages('drive_search_content', { ...input, supports_all_drives: true }, 1000);
    expect(everywhere).toContain(sharedFile().id);
    expect(everywhere.length).toBeGreaterThanOrEqual(2);
    expect(await allPages('drive_search_content', { ...input, supports_all_drives: true }, 1)).toEqual(
      everywhere,
    );
    const myDrive = await allPages('drive_search_content', input, 1000);
    expect(myDrive).toEqual(everywhere.filter((id) => id !== sharedFile().id));
  });

  it('drive_search_files takes query, order_by, fields, page_size, page_token and supports_all_drives', async () => {
    const input = { query: "mimeType = 'text/plain'", order_by: 'name', fields: 'id,name' };
    const names = (ids: string[]) => ids.map((id) => ada().drive.get(id)?.name);
    const everywhere = await allPages('drive_search_files', { ...input, supports_all_drives: true }, 1);
    expect(names(everywhere)).toEqual(['Difference Engine funding.txt', 'Note G.txt']);
    expect(names(await allPages('drive_search_files', input, 1))).toEqual(['Note G.txt']);
  });

  it('sheets_create_spreadsheet takes title, locale, time_zone and sheets, and title is optional', async () => {
    const titled = await ok('sheets_create_spreadsheet', {
      title: 'Engine parts',
      locale: 'en_GB',
      time_zone: 'Europe/London',
      sheets: [
        {
          title: 'Parts',
          values: [
            ['Part', 'Count'],
            ['Gear', 12],
            ['Lever', 4],
          ],
        },
      ],
    });
    const stored = ada().sheets.spreadsheets.get(titled.spreadsheetId)!;
    expect(stored.title).toBe('Engine parts');
    expect(stored.sheets.map((s) => s.title)).toEqual(['Parts']);

    const untitled = await ok('sheets_create_spreadsheet', {});
    expect(untitled.properties.title).toBe('Untitled spreadsheet');
    expect(ada().sheets.spreadsheets.get(untitled.spreadsheetId)?.title).toBe('Untitled spreadsheet');
    const read = await ok('sheets_read_spreadsheet', { spreadsheet_id: untitled.spreadsheetId });
    expect(read.properties.title).toBe('Untitled spreadsheet');
  });

  describe('on a spreadsheet of their own', () => {
    let spreadsheet_id: string;

    beforeAll(async () => {
      const created = await ok('sheets_create_spreadsheet', {
        title: 'Bernoulli numbers',
        sheets: [
          {
            title: 'B',
            values: [
              ['n', 'B(n)'],
              [0, 1],
              [1, -0.5],
            ],
          },
        ],
      });
      spreadsheet_id = created.spreadsheetId;
    });

    it('sheets_get_values takes range, major_dimension "columns" and value_render_option', async () => {
      const data = await ok('sheets_get_values', {
        spreadsheet_id,
        range: 'B!A1:B3',
        major_dimension: 'columns',
        value_render_option: 'UNFORMATTED_VALUE',
      });
      expect(data).toEqual({
        range: 'B!A1:B3',
        majorDimension: 'COLUMNS',
        values: [
          ['n', 0, 1],
          ['B(n)', 1, -0.5],
        ],
      });
    });

    it('sheets_read_spreadsheet takes ranges as one A1 string and include_grid_data', async () => {
      const data = await ok('sheets_read_spreadsheet', {
        spreadsheet_id,
        ranges: 'B!A2:B2',
        include_grid_data: true,
      });
      expect(data.sheets).toHaveLength(1);
      const [cell0, cell1] = data.sheets[0].data[0].rowData[0].values;
      expect(cell0).toMatchObject({ effectiveValue: { numberValue: 0 } });
      expect(cell1).toMatchObject({ effectiveValue: { numberValue: 1 } });
    });

    it('sheets_update_values takes values, value_input_option and include_values_in_response', async () => {
      const data = await ok('sheets_update_values', {
        spreadsheet_id,
        range: 'B!A4',
        values: [[2, '=B2+B3']],
        value_input_option: 'USER_ENTERED',
        include_values_in_response: true,
      });
      expect(data).toMatchObject({ updatedRange: 'B!A4:B4', updatedCells: 2 });
      expect(data.updatedData.values).toEqual([['2', '0.5']]);
      const sheet = ada().sheets.spreadsheets.get(spreadsheet_id)!.sheets[0]!;
      expect(sheet.cells.get(3)?.get(1)?.value).toBe('=B2+B3');
      const read = await ok('sheets_get_values', {
        spreadsheet_id,
        range: 'B!A4:B4',
        value_render_option: 'FORMULA',
      });
      expect(read.values).toEqual([[2, '=B2+B3']]);
    });
  });

  it('docs_create_document takes title, and title is optional', async () => {
    const titled = await ok('docs_create_document', { title: 'Notes on the Engine' });
    expect(ada().docs.documents.get(titled.documentId)?.title).toBe('Notes on the Engine');
    const untitled = await ok('docs_create_document', {});
    expect(untitled.title).toBe('Untitled document');
    expect(ada().docs.documents.get(untitled.documentId)?.title).toBe('Untitled document');
  });

  it('docs_read_document takes suggestions_view_mode; docs_update_document takes requests and write_control', async () => {
    const { documentId: document_id } = await ok('docs_create_document', { title: 'Note A' });
    const read = await ok('docs_read_document', {
      document_id,
      suggestions_view_mode: 'PREVIEW_WITHOUT_SUGGESTIONS',
    });
    expect(read.revisionId).toBe(ada().docs.documents.get(document_id)!.revisionId);
    expect(read.text).toBe('\n');

    const updated = await ok('docs_update_document', {
      document_id,
      requests: [{ insertText: { location: { index: 1 }, text: 'The Engine weaves algebraic patterns.' } }],
      write_control: { requiredRevisionId: read.revisionId },
    });
    expect(updated.replies).toHaveLength(1);
    const after = await ok('docs_read_document', {
      document_id,
      suggestions_view_mode: 'SUGGESTIONS_INLINE',
    });
    expect(after.text).toBe('The Engine weaves algebraic patterns.\n');
    expect(after.revisionId).toBe(updated.revisionId);
    expect(after.revisionId).not.toBe(read.revisionId);

    // The revision read before the update is stale now: nothing is written.
    const stale = await run('docs_update_document', {
      document_id,
      requests: [{ insertText: { location: { index: 1 }, text: 'Lost. ' } }],
      write_control: { requiredRevisionId: read.revisionId },
    });
    expect(stale.status).toBe(409);
    expect(
      ada()
        .docs.documents.get(document_id)!
        .body.runs.map((r) => r.text)
        .join(''),
    ).toBe('The Engine weaves algebraic patterns.\n');
  });

  it('takes schema_version and tool_version inside tool_input', async () => {
    const data = await ok('drive_get_file_metadata', {
      file_id: 'root',
      fields: 'name',
      schema_version: '1',
      tool_version: '1',
    });
    expect(data).toEqual({ name: 'My Drive' });
  });

  it('refuses a missing required parameter, naming it, before calling Google', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['drive_get_file_metadata', { fields: 'id' }, 'file_id'],
      ['drive_search_content', { page_size: 10 }, 'search_term'],
      ['sheets_get_values', { range: 'A1' }, 'spreadsheet_id'],
      ['sheets_get_values', { spreadsheet_id: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms' }, 'range'],
      ['sheets_read_spreadsheet', { ranges: 'A1' }, 'spreadsheet_id'],
      [
        'sheets_update_values',
        { spreadsheet_id: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms', values: [[1]] },
        'range',
      ],
      [
        'sheets_update_values',
        { spreadsheet_id: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms', range: 'A1' },
        'values',
      ],
      ['docs_read_document', { suggestions_view_mode: 'SUGGESTIONS_INLINE' }, 'document_id'],
      ['docs_update_document', { document_id: '1Pq7Yh3xKc2eN0dVfWmBzRtL9sAaJgU4oHiE5nX6yC8w' }, 'requests'],
      [
        'docs_update_document',
        { requests: [{ insertText: { location: { index: 1 }, text: 'x' } }] },
        'document_id',
      ],
    ];
    for (const [tool, input, missing] of cases) {
      await expectInvalid(tool, input, `/tool_input/${missing}`, MISSING_RULE);
    }
  });
});
