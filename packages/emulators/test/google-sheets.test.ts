import { google, type sheets_v4 } from 'googleapis';
import { describe, expect, it } from 'vitest';
import { documentIdFrom } from '../src/providers/google/native-files.js';
import { useEmulators } from './helpers/emulators.js';
import { googleClientFor, rawGoogle } from './helpers/googleapis.js';

const SCOPE = 'https://www.googleapis.com/auth/spreadsheets';
const ADA = '110000000000000000001';
const GRACE = '110000000000000000002';
const ADA_BUDGET = documentIdFrom(`sheets:${ADA}:quarterly-budget`);

const emu = useEmulators({ modules: ['google'] });

function sheetsFor(userId: string, scopes = [SCOPE]): { api: sheets_v4.Sheets; token: string } {
  return googleClientFor(emu, userId, scopes, (auth) => google.sheets({ version: 'v4', auth }));
}

const raw = (path: string, init: RequestInit & { token?: string } = {}) => rawGoogle(emu, path, init);

describe('seeded data', () => {
  it('serves the seeded budget with two tabs, one with a space in its title', async () => {
    const { api } = sheetsFor(ADA);
    const res = await api.spreadsheets.get({ spreadsheetId: ADA_BUDGET });
    expect(res.status).toBe(200);
    expect(res.data.spreadsheetId).toBe(ADA_BUDGET);
    expect(res.data.properties?.title).toBe('Quarterly budget');
    expect(res.data.properties?.locale).toBe('en_US');
    expect(res.data.sheets?.map((s) => s.properties?.title)).toEqual(['Budget', 'Q1 Expenses']);
    expect(res.data.sheets?.[0]?.properties).toMatchObject({
      sheetId: 0,
      index: 0,
      sheetType: 'GRID',
      gridProperties: { rowCount: 1000, columnCount: 26, frozenRowCount: 1 },
    });
    expect(res.data.sheets?.[1]?.properties?.index).toBe(1);
    expect(res.data.spreadsheetUrl).toBe(`https://docs.google.com/spreadsheets/d/${ADA_BUDGET}/edit`);
    expect(res.data.sheets?.[0]?.data).toBeUndefined();
  });

  it('computes seeded formulas and renders them in every value render option', async () => {
    const { api } = sheetsFor(ADA);
    const formatted = await api.spreadsheets.values.get({ spreadsheetId: ADA_BUDGET, range: 'Budget!A2:F2' });
    expect(formatted.data).toEqual({
      range: 'Budget!A2:F2',
      majorDimension: 'ROWS',
      values: [['Salaries', '42000', '42000', '45000', '45000', '174000']],
    });
    const unformatted = await api.spreadsheets.values.get({
      spreadsheetId: ADA_BUDGET,
      range: 'Budget!F2:F5',
      valueRenderOption: 'UNFORMATTED_VALUE',
    });
    expect(unformatted.data.values).toEqual([[174000], [14600], [6150], [194750]]);
    const formulas = await api.spreadsheets.values.get({
      spreadsheetId: ADA_BUDGET,
      range: 'Budget!F2',
      valueRenderOption: 'FORMULA',
    });
    expect(formulas.data).toEqual({ range: 'Budget!F2', majorDimension: 'ROWS', values: [['=SUM(B2:E2)']] });
  });

  it('reads a quoted sheet title with an open range, dates and booleans', async () => {
    const { api } = sheetsFor(ADA);
    const res = await api.spreadsheets.values.get({ spreadsheetId: ADA_BUDGET, range: "'Q1 Expenses'!A:D" });
    expect(res.data.range).toBe("'Q1 Expenses'!A1:D1000");
    expect(res.data.values?.[0]).toEqual(['Date', 'Vendor', 'Amount', 'Approved']);
    expect(res.data.values?.[1]).toEqual(['2024-01-15', 'Northwind Airlines', '640.5', 'TRUE']);
    expect(res.data.values?.[4]).toEqual(['', 'Total', '1800.49']);
    const serial = await api.spreadsheets.values.get({
      spreadsheetId: ADA_BUDGET,
      range: "'Q1 Expenses'!A2:D2",
      valueRenderOption: 'UNFORMATTED_VALUE',
    });
    // 2024-01-15 is day 45306 counted from 1899-12-30.
    expect(serial.data.values).toEqual([[45306, 'Northwind Airlines', 640.5, true]]);
    const asString = await api.spreadsheets.values.get({
      spreadsheetId: ADA_BUDGET,
      range: "'Q1 Expenses'!A2",
      valueRenderOption: 'UNFORMATTED_VALUE',
      dateTimeRenderOption: 'FORMATTED_STRING',
    });
    expect(asString.data.values).toEqual([['2024-01-15']]);
  });

  it('gives each user their own data', async () => {
    const { api } = sheetsFor(GRACE);
    const graceBudget = documentIdFrom(`sheets:${GRACE}:quarterly-budget`);
    const res = await api.spreadsheets.values.get({ spreadsheetId: graceBudget, range: 'Budget!A3' });
    expect(res.data.values).toEqual([['Compilers']]);
    await expect(api.spreadsheets.get({ spreadsheetId: ADA_BUDGET })).rejects.toMatchObject({ status: 404 });
  });
});

describe('values', () => {
  it('writes with USER_ENTERED and reads back in both major dimensions', async () => {
    const { api } = sheetsFor(ADA);
    const created = await api.spreadsheets.create({ requestBody: { properties: { title: 'Scratch' } } });
    const id = created.data.spreadsheetId as string;
    expect(created.data.sheets?.[0]?.properties).toMatchObject({
      title: 'Sheet1',
      sheetId: 0,
      gridProperties: { rowCount: 1000, columnCount: 26 },
    });
    const update = await api.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'Sheet1!A1:C3',
      valueInputOption: 'USER_ENTERED',
      requestBody: {
        values: [
          ['Item', 'Qty', 'Price'],
          ['Pens', '3', 1.5],
          ['Total', '=B2+1', '=B2*C2'],
        ],
      },
    });
    expect(update.data).toEqual({
      spreadsheetId: id,
      updatedRange: 'Sheet1!A1:C3',
      updatedRows: 3,
      updatedColumns: 3,
      updatedCells: 9,
    });
    const rows = await api.spreadsheets.values.get({
      spreadsheetId: id,
      range: 'A1:C3',
      valueRenderOption: 'UNFORMATTED_VALUE',
    });
    expect(rows.data).toEqual({
      range: 'Sheet1!A1:C3',
      majorDimension: 'ROWS',
      values: [
        ['Item', 'Qty', 'Price'],
        ['Pens', 3, 1.5],
        ['Total', 4, 4.5],
      ],
    });
    const cols = await api.spreadsheets.values.get({
      spreadsheetId: id,
      range: 'Sheet1!A1:C3',
      majorDimension: 'COLUMNS',
    });
    expect(cols.data.values).toEqual([
      ['Item', 'Pens', 'Total'],
      ['Qty', '3', '4'],
      ['Price', '1.5', '4.5'],
    ]);
  });

  it('stores RAW input as typed', async () => {
    const { api } = sheetsFor(ADA);
    const res = await api.spreadsheets.values.update({
      spreadsheetId: ADA_BUDGET,
      range: "'Q1 Expenses'!F1",
      valueInputOption: 'RAW',
      requestBody: { values: [['=1+1', '42', 7]] },
      includeValuesInResponse: true,
      responseValueRenderOption: 'UNFORMATTED_VALUE',
    });
    expect(res.data.updatedRange).toBe("'Q1 Expenses'!F1:H1");
    expect(res.data.updatedData).toEqual({
      range: "'Q1 Expenses'!F1:H1",
      majorDimension: 'ROWS',
      values: [['=1+1', '42', 7]],
    });
  });

  it('writes columns-major input and trims trailing empties on read', async () => {
    const { api } = sheetsFor(ADA);
    const id = (await api.spreadsheets.create({ requestBody: {} })).data.spreadsheetId as string;
    await api.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'B2',
      valueInputOption: 'USER_ENTERED',
      requestBody: { majorDimension: 'COLUMNS', values: [['a', 'b'], ['c']] },
    });
    const res = await api.spreadsheets.values.get({ spreadsheetId: id, range: 'A1:E10' });
    expect(res.data.values).toEqual([[], ['', 'a', 'c'], ['', 'b']]);
    const empty = await api.spreadsheets.values.get({ spreadsheetId: id, range: 'Sheet1!H1:J4' });
    expect(empty.data).toEqual({ range: 'Sheet1!H1:J4', majorDimension: 'ROWS' });
  });

  it('parses user-entered percentages, currency, booleans and text forced with an apostrophe', async () => {
    const { api } = sheetsFor(ADA);
    const id = (await api.spreadsheets.create({ requestBody: {} })).data.spreadsheetId as string;
    await api.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'A1',
      valueInputOption: 'USER_ENTERED',
      requestBody: { values: [['12.5%', '$1,200.00', 'true', "'007", '1,234']] },
    });
    const formatted = await api.spreadsheets.values.get({ spreadsheetId: id, range: 'A1:E1' });
    expect(formatted.data.values).toEqual([['12.5%', '$1,200.00', 'TRUE', '007', '1,234']]);
    const unformatted = await api.spreadsheets.values.get({
      spreadsheetId: id,
      range: 'A1:E1',
      valueRenderOption: 'UNFORMATTED_VALUE',
    });
    expect(unformatted.data.values).toEqual([[0.125, 1200, true, '007', 1234]]);
  });

  it('appends after the existing table, growing the grid when needed', async () => {
    const { api } = sheetsFor(ADA);
    const res = await api.spreadsheets.values.append({
      spreadsheetId: ADA_BUDGET,
      range: "'Q1 Expenses'!A1",
      valueInputOption: 'USER_ENTERED',
      requestBody: { values: [['2024-03-31', 'Late vendor', '10']] },
    });
    expect(res.data.tableRange).toBe("'Q1 Expenses'!A1:D5");
    expect(res.data.updates).toEqual({
      spreadsheetId: ADA_BUDGET,
      updatedRange: "'Q1 Expenses'!A6:C6",
      updatedRows: 1,
      updatedColumns: 3,
      updatedCells: 3,
    });
    const back = await api.spreadsheets.values.get({
      spreadsheetId: ADA_BUDGET,
      range: "'Q1 Expenses'!A6:C6",
    });
    expect(back.data.values).toEqual([['2024-03-31', 'Late vendor', '10']]);

    const id = (
      await api.spreadsheets.create({
        requestBody: {
          sheets: [{ properties: { title: 'Tiny', gridProperties: { rowCount: 2, columnCount: 2 } } }],
        },
      })
    ).data.spreadsheetId as string;
    await api.spreadsheets.values.append({
      spreadsheetId: id,
      range: 'Tiny',
      valueInputOption: 'RAW',
      requestBody: { values: [['a'], ['b'], ['c']] },
    });
    const grown = await api.spreadsheets.get({ spreadsheetId: id });
    expect(grown.data.sheets?.[0]?.properties?.gridProperties?.rowCount).toBe(3);
  });

  it('clears a range, batch-reads, batch-writes and batch-clears', async () => {
    const { api } = sheetsFor(ADA);
    const cleared = await api.spreadsheets.values.clear({ spreadsheetId: ADA_BUDGET, range: 'Budget!B2:E2' });
    expect(cleared.data).toEqual({ spreadsheetId: ADA_BUDGET, clearedRange: 'Budget!B2:E2' });
    const batch = await api.spreadsheets.values.batchGet({
      spreadsheetId: ADA_BUDGET,
      ranges: ['Budget!A2:F2', "'Q1 Expenses'!B1"],
    });
    expect(batch.data.valueRanges).toEqual([
      { range: 'Budget!A2:F2', majorDimension: 'ROWS', values: [['Salaries', '', '', '', '', '0']] },
      { range: "'Q1 Expenses'!B1", majorDimension: 'ROWS', values: [['Vendor']] },
    ]);
    const written = await api.spreadsheets.values.batchUpdate({
      spreadsheetId: ADA_BUDGET,
      requestBody: {
        valueInputOption: 'USER_ENTERED',
        data: [
          { range: 'Budget!H1', values: [['x']] },
          { range: "'Q1 Expenses'!H1:I2", values: [[1, 2], [3]] },
        ],
      },
    });
    expect(written.data).toMatchObject({
      spreadsheetId: ADA_BUDGET,
      totalUpdatedRows: 3,
      totalUpdatedColumns: 3,
      totalUpdatedCells: 4,
      totalUpdatedSheets: 2,
    });
    expect(written.data.responses?.map((r) => r.updatedRange)).toEqual(['Budget!H1', "'Q1 Expenses'!H1:I2"]);
    const bc = await api.spreadsheets.values.batchClear({
      spreadsheetId: ADA_BUDGET,
      requestBody: { ranges: ['Budget!H1', "'Q1 Expenses'!H:I"] },
    });
    expect(bc.data.clearedRanges).toEqual(['Budget!H1', "'Q1 Expenses'!H1:I1000"]);
    const after = await api.spreadsheets.values.get({
      spreadsheetId: ADA_BUDGET,
      range: "'Q1 Expenses'!H1:I2",
    });
    expect(after.data.values).toBeUndefined();
  });
});

describe('formulas', () => {
  it('computes across sheets, matches sheet titles case-insensitively and reports Sheets errors', async () => {
    const { api } = sheetsFor(ADA);
    await api.spreadsheets.values.update({
      spreadsheetId: ADA_BUDGET,
      range: 'budget!H1',
      valueInputOption: 'USER_ENTERED',
      requestBody: {
        values: [
          [
            "='Q1 Expenses'!C5*2",
            '=1/0',
            '=NOSUCH(1)',
            '=SUM(',
            '=IF(F2>100000,"big","small")&"!"',
            '=AVERAGE(B2:E2)',
            '=H1',
          ],
        ],
      },
    });
    const formatted = await api.spreadsheets.values.get({ spreadsheetId: ADA_BUDGET, range: 'Budget!H1:N1' });
    expect(formatted.data.range).toBe('Budget!H1:N1');
    expect(formatted.data.values).toEqual([
      ['3600.98', '#DIV/0!', '#NAME?', '#ERROR!', 'big!', '43500', '3600.98'],
    ]);
    const grid = await api.spreadsheets.get({
      spreadsheetId: ADA_BUDGET,
      ranges: ['Budget!I1'],
      includeGridData: true,
    });
    expect(grid.data.sheets?.[0]?.data?.[0]?.rowData?.[0]?.values?.[0]).toEqual({
      userEnteredValue: { formulaValue: '=1/0' },
      effectiveValue: {
        errorValue: { type: 'DIVIDE_BY_ZERO', message: 'Function DIVIDE parameter 2 cannot be zero.' },
      },
      formattedValue: '#DIV/0!',
    });
  });

  it('reports a circular reference instead of looping', async () => {
    const { api } = sheetsFor(ADA);
    const id = (await api.spreadsheets.create({ requestBody: {} })).data.spreadsheetId as string;
    await api.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'A1',
      valueInputOption: 'USER_ENTERED',
      requestBody: { values: [['=B1', '=A1+1']] },
    });
    const res = await api.spreadsheets.values.get({ spreadsheetId: id, range: 'A1:B1' });
    expect(res.data.values).toEqual([['#REF!', '#REF!']]);
  });
});

describe('append with INSERT_ROWS', () => {
  it('inserts rows below the table, moving what was under it', async () => {
    const { api } = sheetsFor(ADA);
    const id = (await api.spreadsheets.create({ requestBody: {} })).data.spreadsheetId as string;
    await api.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'A1',
      valueInputOption: 'RAW',
      requestBody: { values: [['h1', 'h2'], ['a', 'b'], [], ['', '', 'note']] },
    });
    const res = await api.spreadsheets.values.append({
      spreadsheetId: id,
      range: 'A1:B2',
      valueInputOption: 'RAW',
      insertDataOption: 'INSERT_ROWS',
      includeValuesInResponse: true,
      requestBody: { values: [['c', 'd']] },
    });
    expect(res.data.tableRange).toBe('Sheet1!A1:B2');
    expect(res.data.updates?.updatedRange).toBe('Sheet1!A3:B3');
    expect(res.data.updates?.updatedData?.values).toEqual([['c', 'd']]);
    const all = await api.spreadsheets.values.get({ spreadsheetId: id, range: 'Sheet1' });
    expect(all.data.range).toBe('Sheet1!A1:Z1001');
    expect(all.data.values).toEqual([['h1', 'h2'], ['a', 'b'], ['c', 'd'], [], ['', '', 'note']]);
  });
});

describe('large data', () => {
  it('writes and reads back tens of thousands of rows', async () => {
    const { api } = sheetsFor(ADA);
    const id = (
      await api.spreadsheets.create({
        requestBody: {
          sheets: [{ properties: { title: 'Big', gridProperties: { rowCount: 40_000, columnCount: 4 } } }],
        },
      })
    ).data.spreadsheetId as string;
    const rows = Array.from({ length: 30_000 }, (_, i) => [`row ${i + 1}`, i, i * 2, i % 2 === 0]);
    const put = await api.spreadsheets.values.update({
      spreadsheetId: id,
      range: 'Big!A1',
      valueInputOption: 'RAW',
      requestBody: { values: rows },
    });
    expect(put.data.updatedRange).toBe('Big!A1:D30000');
    expect(put.data.updatedCells).toBe(120_000);
    await api.spreadsheets.values.append({
      spreadsheetId: id,
      range: 'Big',
      valueInputOption: 'USER_ENTERED',
      requestBody: { values: [['total', '=SUM(B1:B30000)', '=MAX(C1:C30000)']] },
    });
    const back = await api.spreadsheets.values.get({
      spreadsheetId: id,
      range: 'Big!A29999:D30001',
      valueRenderOption: 'UNFORMATTED_VALUE',
    });
    expect(back.data.values).toEqual([
      ['row 29999', 29998, 59996, true],
      ['row 30000', 29999, 59998, false],
      ['total', 449985000, 59998],
    ]);
  }, 30_000);
});

describe('spreadsheets', () => {
  it('returns grid data for requested ranges only', async () => {
    const { api } = sheetsFor(ADA);
    const res = await api.spreadsheets.get({
      spreadsheetId: ADA_BUDGET,
      ranges: ['Budget!E1:F2'],
      includeGridData: true,
    });
    expect(res.data.sheets).toHaveLength(1);
    const data = res.data.sheets?.[0]?.data?.[0];
    expect(data?.startColumn).toBe(4);
    expect(data?.startRow).toBeUndefined();
    expect(data?.rowData?.[1]?.values?.[1]).toEqual({
      userEnteredValue: { formulaValue: '=SUM(B2:E2)' },
      effectiveValue: { numberValue: 174000 },
      formattedValue: '174000',
    });
    expect(data?.rowData?.[0]?.values?.[0]).toEqual({
      userEnteredValue: { stringValue: 'Q4' },
      effectiveValue: { stringValue: 'Q4' },
      formattedValue: 'Q4',
    });
    expect(data?.rowMetadata).toHaveLength(2);
  });

  it('honours the fields mask', async () => {
    const { api } = sheetsFor(ADA);
    const res = await api.spreadsheets.get({
      spreadsheetId: ADA_BUDGET,
      fields: 'spreadsheetId,sheets(properties(title))',
    });
    expect(res.data).toEqual({
      spreadsheetId: ADA_BUDGET,
      sheets: [{ properties: { title: 'Budget' } }, { properties: { title: 'Q1 Expenses' } }],
    });
  });

  it('creates with several tabs and adds, renames and deletes tabs', async () => {
    const { api } = sheetsFor(ADA);
    const created = await api.spreadsheets.create({
      requestBody: {
        properties: { title: 'Plans', timeZone: 'America/New_York' },
        sheets: [{ properties: { title: 'One' } }, { properties: { title: 'Two words' } }],
      },
    });
    const id = created.data.spreadsheetId as string;
    expect(id).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(created.data.properties?.timeZone).toBe('America/New_York');
    expect(created.data.sheets?.map((s) => s.properties?.title)).toEqual(['One', 'Two words']);
    const upd = await api.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: {
        requests: [
          { addSheet: { properties: { title: 'Three' } } },
          { updateSpreadsheetProperties: { properties: { title: 'Plans 2025' }, fields: 'title' } },
        ],
      },
    });
    const added = upd.data.replies?.[0]?.addSheet?.properties;
    expect(added).toMatchObject({ title: 'Three', index: 2, sheetType: 'GRID' });
    expect(upd.data.replies?.[1]).toEqual({});
    await api.spreadsheets.batchUpdate({
      spreadsheetId: id,
      requestBody: { requests: [{ deleteSheet: { sheetId: added?.sheetId as number } }] },
    });
    const after = await api.spreadsheets.get({ spreadsheetId: id });
    expect(after.data.properties?.title).toBe('Plans 2025');
    expect(after.data.sheets?.map((s) => s.properties?.title)).toEqual(['One', 'Two words']);
  });

  it('files created spreadsheets in the user state and in Drive', async () => {
    const { api } = sheetsFor(GRACE);
    const id = (await api.spreadsheets.create({ requestBody: { properties: { title: 'Compiler costs' } } }))
      .data.spreadsheetId as string;
    const state = emu.control.state('google') as {
      byUser: Map<string, { drive: Map<string, { name: string; mimeType: string }> }>;
    };
    const file = state.byUser.get(GRACE)?.drive.get(id);
    expect(file).toMatchObject({
      name: 'Compiler costs',
      mimeType: 'application/vnd.google-apps.spreadsheet',
    });
  });
});

describe('errors', () => {
  it('answers 404 for an unknown spreadsheet in the modern error shape', async () => {
    const { token } = sheetsFor(ADA);
    const res = await raw('/v4/spreadsheets/doesnotexist/values/A1', { token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' },
    });
  });

  it('rejects an unparsable range and a range beyond the grid', async () => {
    const { token } = sheetsFor(ADA);
    const bad = await raw(`/v4/spreadsheets/${ADA_BUDGET}/values/${encodeURIComponent('Nope!A1:B2')}`, {
      token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({
      code: 400,
      message: 'Unable to parse range: Nope!A1:B2',
      status: 'INVALID_ARGUMENT',
    });
    const junk = await raw(`/v4/spreadsheets/${ADA_BUDGET}/values/${encodeURIComponent('Budget!A1:B2:C3')}`, {
      token,
    });
    expect(junk.body.error.message).toBe('Unable to parse range: Budget!A1:B2:C3');
    const wide = await raw(`/v4/spreadsheets/${ADA_BUDGET}/values/${encodeURIComponent('Budget!A1:AB3')}`, {
      token,
    });
    expect(wide.status).toBe(400);
    expect(wide.body.error.message).toBe(
      'Range (Budget!A1:AB3) exceeds grid limits. Max rows: 1000, max columns: 26',
    );
  });

  it('requires valueInputOption and keeps writes inside the requested range', async () => {
    const { api, token } = sheetsFor(ADA);
    const missing = await raw(`/v4/spreadsheets/${ADA_BUDGET}/values/Budget!H1`, {
      token,
      method: 'PUT',
      body: JSON.stringify({ values: [['x']] }),
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toBe('Invalid valueInputOption: INPUT_VALUE_OPTION_UNSPECIFIED');
    await expect(
      api.spreadsheets.values.update({
        spreadsheetId: ADA_BUDGET,
        range: 'Budget!H1:I1',
        valueInputOption: 'RAW',
        requestBody: { values: [['a', 'b', 'c']] },
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: 'Requested writing within range [Budget!H1:I1], but tried writing to column [J]',
    });
    await expect(
      api.spreadsheets.values.update({
        spreadsheetId: ADA_BUDGET,
        range: 'Budget!H1:I1',
        valueInputOption: 'RAW',
        requestBody: { values: [['a'], ['b']] },
      }),
    ).rejects.toMatchObject({
      message: 'Requested writing within range [Budget!H1:I1], but tried writing to row [2]',
    });
  });

  it('refuses an empty batchUpdate and rolls back a batch with a bad request', async () => {
    const { api } = sheetsFor(ADA);
    await expect(
      api.spreadsheets.batchUpdate({ spreadsheetId: ADA_BUDGET, requestBody: { requests: [] } }),
    ).rejects.toMatchObject({ status: 400, message: 'Must specify at least one request.' });
    await expect(
      api.spreadsheets.batchUpdate({
        spreadsheetId: ADA_BUDGET,
        requestBody: {
          requests: [
            { addSheet: { properties: { title: 'Extra' } } },
            { addSheet: { properties: { title: 'budget' } } },
          ],
        },
      }),
    ).rejects.toMatchObject({
      status: 400,
      message:
        'Invalid requests[1].addSheet: A sheet with the name "budget" already exists. Please enter another name.',
    });
    const after = await api.spreadsheets.get({ spreadsheetId: ADA_BUDGET });
    expect(after.data.sheets?.map((s) => s.properties?.title)).toEqual(['Budget', 'Q1 Expenses']);
  });

  it('refuses missing tokens and tokens without a Sheets scope', async () => {
    const none = await raw(`/v4/spreadsheets/${ADA_BUDGET}`);
    expect(none.status).toBe(401);
    expect(none.body.error.status).toBe('UNAUTHENTICATED');
    const { token } = sheetsFor(ADA, ['https://www.googleapis.com/auth/calendar']);
    const wrong = await raw(`/v4/spreadsheets/${ADA_BUDGET}`, { token });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.message).toBe('Request had insufficient authentication scopes.');
    const { token: readonly } = sheetsFor(ADA, ['https://www.googleapis.com/auth/spreadsheets.readonly']);
    expect((await raw(`/v4/spreadsheets/${ADA_BUDGET}`, { token: readonly })).status).toBe(200);
    const write = await raw(`/v4/spreadsheets/${ADA_BUDGET}/values/Budget!H1:clear`, {
      token: readonly,
      method: 'POST',
      body: '{}',
    });
    expect(write.status).toBe(403);
  });
});
