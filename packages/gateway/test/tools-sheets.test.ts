import { createHash } from 'node:crypto';
import type { EmulatorControl } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  expectRateLimited,
  expectRevokedAccountNotActive,
  expectUpstreamError,
  google403RateLimit,
  google429,
  notFound,
  toolHarness,
} from './helpers/tools.js';

/** The slice of the Google emulator's state these tests read (packages/emulators/src/providers/google). */
type StoredCell = { kind: 'number' | 'string' | 'bool' | 'formula'; value: unknown };
interface SheetModel {
  sheetId: number;
  title: string;
  rowCount: number;
  columnCount: number;
  frozenRowCount?: number;
  cells: Map<number, Map<number, StoredCell>>;
}
interface SpreadsheetModel {
  spreadsheetId: string;
  title: string;
  locale: string;
  timeZone: string;
  sheets: SheetModel[];
}
interface GoogleState {
  byUser: Map<string, { sheets: { spreadsheets: Map<string, SpreadsheetModel> } }>;
}

const ADA = '110000000000000000001';
const ALAN = '110000000000000000003';
/** The seeded "Quarterly budget" spreadsheet of a user (as the emulator derives its id). */
const budgetOf = (userId: string) =>
  `1${createHash('sha256').update(`sheets:${userId}:quarterly-budget`).digest('base64url').slice(0, 43)}`;
const BUDGET = budgetOf(ADA);
const MISSING = '1NoSuchSpreadsheetxxxxxxxxxxxxxxxxxxxxxxxxxx';
const USER = 'sheets_user';

describe('sheets_ tools', () => {
  let t: TestGateway;
  let control: EmulatorControl;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!);
    control = t.gateway.sandbox.control!;
    await sandboxAccount(t, { provider: 'google_sheets', identifier: USER, userId: ADA });
  });
  afterAll(async () => {
    await t?.close();
  });

  const spreadsheet = (id: string, userId = ADA) =>
    control.state<GoogleState>('google').byUser.get(userId)!.sheets.spreadsheets.get(id);
  const cell = (ss: SpreadsheetModel, sheet: string, row: number, col: number) =>
    ss.sheets
      .find((s) => s.title === sheet)!
      .cells.get(row)
      ?.get(col);
  const { run, expectInvalid } = toolHarness({
    gateway: () => t,
    identifier: USER,
    route: '/google/v4/spreadsheets',
  });

  describe('sheets_create_spreadsheet', () => {
    it('creates a spreadsheet with locale, time zone and initial tabs with values', async () => {
      const { status, body } = await run('sheets_create_spreadsheet', {
        title: 'Team budget',
        locale: 'de_DE',
        time_zone: 'America/New_York',
        sheets: [
          {
            title: 'Budget',
            frozen_row_count: 1,
            values: [
              ['Item', 'Cost'],
              ['Laptops', 4200],
              ['Total', '=SUM(B2:B2)'],
              [null, true],
            ],
          },
          { title: 'Notes', row_count: 50, column_count: 5 },
        ],
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.execution_id).toMatch(/^exec_/);
      const data = body.data as {
        spreadsheetId: string;
        spreadsheetUrl: string;
        properties: Record<string, unknown>;
        sheets: Array<{
          sheetId: number;
          title: string;
          index: number;
          gridProperties: Record<string, number>;
        }>;
      };
      expect(data.properties).toEqual({
        title: 'Team budget',
        locale: 'de_DE',
        timeZone: 'America/New_York',
      });
      expect(data.spreadsheetUrl).toContain(data.spreadsheetId);
      expect(data.sheets.map((s) => [s.title, s.index])).toEqual([
        ['Budget', 0],
        ['Notes', 1],
      ]);
      expect(data.sheets[0]!.sheetId).toBe(0);
      expect(data.sheets[1]!.gridProperties).toEqual({ rowCount: 50, columnCount: 5 });
      expect(Number.isInteger(data.sheets[1]!.sheetId)).toBe(true);

      const ss = spreadsheet(data.spreadsheetId)!;
      expect(ss).toMatchObject({ title: 'Team budget', locale: 'de_DE', timeZone: 'America/New_York' });
      expect(ss.sheets.map((s) => s.title)).toEqual(['Budget', 'Notes']);
      expect(ss.sheets[0]!.frozenRowCount).toBe(1);
      expect(ss.sheets[1]).toMatchObject({ rowCount: 50, columnCount: 5 });
      expect(cell(ss, 'Budget', 0, 0)).toEqual({ kind: 'string', value: 'Item' });
      expect(cell(ss, 'Budget', 1, 1)).toMatchObject({ kind: 'number', value: 4200 });
      expect(cell(ss, 'Budget', 2, 1)).toEqual({ kind: 'formula', value: '=SUM(B2:B2)' });
      expect(cell(ss, 'Budget', 3, 0)).toBeUndefined();
      expect(cell(ss, 'Budget', 3, 1)).toEqual({ kind: 'bool', value: true });
    });

    it('creates a default spreadsheet from a title alone', async () => {
      const { status, body } = await run('sheets_create_spreadsheet', { title: 'Scratch' });
      expect(status).toBe(200);
      const data = body.data as { spreadsheetId: string; sheets: Array<{ title: string }> };
      expect(data.sheets.map((s) => s.title)).toEqual(['Sheet1']);
      expect(spreadsheet(data.spreadsheetId)?.title).toBe('Scratch');
    });

    it('leaves the title to Google when none is given (title is optional in the specification)', async () => {
      const { status, body } = await run('sheets_create_spreadsheet', {});
      expect(status, JSON.stringify(body)).toBe(200);
      const data = body.data as { spreadsheetId: string; properties: { title: string } };
      expect(data.properties.title).toBe('Untitled spreadsheet');
      expect(spreadsheet(data.spreadsheetId)?.title).toBe('Untitled spreadsheet');
    });

    it('refuses invalid input before calling Google', async () => {
      await expectInvalid('sheets_create_spreadsheet', { title: '' }, ['/tool_input/title']);
      await expectInvalid('sheets_create_spreadsheet', { title: 42 }, ['/tool_input/title']);
      await expectInvalid('sheets_create_spreadsheet', { title: 'x', extra: 1 }, ['/tool_input/extra']);
      await expectInvalid('sheets_create_spreadsheet', { title: 'x', locale: 'english' }, [
        '/tool_input/locale',
      ]);
      await expectInvalid('sheets_create_spreadsheet', { title: 'x', locale: 'en-US' }, [
        '/tool_input/locale',
      ]);
      await expectInvalid(
        'sheets_create_spreadsheet',
        { title: 'x', time_zone: 'Mars/Olympus' },
        ['/tool_input/time_zone'],
        /rule: time_zone is an IANA name/,
      );
      await expectInvalid(
        'sheets_create_spreadsheet',
        { title: 'x', sheets: [{ title: 'Data' }, { title: 'data' }] },
        ['/tool_input/sheets/1/title'],
        /rule: sheet titles are unique, ignoring case/,
      );
      await expectInvalid(
        'sheets_create_spreadsheet',
        { title: 'x', sheets: [{ title: 'A', row_count: 5, frozen_row_count: 5 }] },
        ['/tool_input/sheets/0/frozen_row_count'],
        /rule: frozen_row_count must be less than row_count/,
      );
      await expectInvalid(
        'sheets_create_spreadsheet',
        { title: 'x', sheets: [{ title: 'A', column_count: 2, frozen_column_count: 2 }] },
        ['/tool_input/sheets/0/frozen_column_count'],
        /rule: frozen_column_count must be less than column_count/,
      );
      await expectInvalid(
        'sheets_create_spreadsheet',
        { title: 'x', sheets: [{ title: 'A', column_count: 2, row_count: 1, values: [[1, 2, 3], [4]] }] },
        ['/tool_input/sheets/0/values/0', '/tool_input/sheets/0/values'],
        /rule: initial values must fit in the grid/,
      );
      await expectInvalid(
        'sheets_create_spreadsheet',
        { title: 'x', sheets: [{ title: 'A', row_count: 1_000_000, column_count: 11 }] },
        ['/tool_input/sheets'],
        /rule: a spreadsheet holds at most 10,000,000 cells/,
      );
      await expectInvalid(
        'sheets_create_spreadsheet',
        { title: 'x', sheets: [{ title: 'A', row_count: 0 }] },
        ['/tool_input/sheets/0/row_count'],
      );
      await expectInvalid('sheets_create_spreadsheet', { title: 'x', sheets: [] }, ['/tool_input/sheets']);
    });
  });

  describe('sheets_get_values', () => {
    it('reads a range with the render option and major dimension asked for', async () => {
      const { status, body } = await run('sheets_get_values', {
        spreadsheet_id: BUDGET,
        range: 'Budget!A1:F2',
        value_render_option: 'UNFORMATTED_VALUE',
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.data).toEqual({
        range: 'Budget!A1:F2',
        majorDimension: 'ROWS',
        values: [
          ['Category', 'Q1', 'Q2', 'Q3', 'Q4', 'Total'],
          ['Salaries', 42000, 42000, 45000, 45000, 174000],
        ],
      });
      const formulas = await run('sheets_get_values', {
        spreadsheet_id: BUDGET,
        range: 'Budget!F2',
        value_render_option: 'FORMULA',
      });
      expect(formulas.body.data).toMatchObject({ values: [['=SUM(B2:E2)']] });
    });

    it('URL-encodes quoted sheet names and reads by columns', async () => {
      const { status, body } = await run('sheets_get_values', {
        spreadsheet_id: BUDGET,
        range: "'Q1 Expenses'!A1:B3",
        major_dimension: 'columns',
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.data).toEqual({
        range: "'Q1 Expenses'!A1:B3",
        majorDimension: 'COLUMNS',
        values: [
          ['Date', expect.any(String), expect.any(String)],
          ['Vendor', 'Northwind Airlines', 'Contoso Cloud'],
        ],
      });
    });

    it('answers an empty range with an empty values array', async () => {
      const { body } = await run('sheets_get_values', { spreadsheet_id: BUDGET, range: 'Budget!M40:N41' });
      expect(body.data).toEqual({ range: 'Budget!M40:N41', majorDimension: 'ROWS', values: [] });
    });

    it('refuses invalid input before calling Google', async () => {
      await expectInvalid('sheets_get_values', { spreadsheet_id: BUDGET }, ['/tool_input/range']);
      await expectInvalid('sheets_get_values', { range: 'A1' }, ['/tool_input/spreadsheet_id']);
      await expectInvalid('sheets_get_values', { spreadsheet_id: 'bad id!', range: 'A1' }, [
        '/tool_input/spreadsheet_id',
      ]);
      await expectInvalid(
        'sheets_get_values',
        { spreadsheet_id: BUDGET, range: 'Budget!A1:B2:C3' },
        ['/tool_input/range'],
        /is not A1 notation.*rule: a range is a sheet name, cells in A1 notation, or both joined by "!"/,
      );
      await expectInvalid('sheets_get_values', { spreadsheet_id: BUDGET, range: "'Budget!A1" }, [
        '/tool_input/range',
      ]);
      await expectInvalid('sheets_get_values', { spreadsheet_id: BUDGET, range: '!A1' }, [
        '/tool_input/range',
      ]);
      const body = await expectInvalid(
        'sheets_get_values',
        { spreadsheet_id: BUDGET, range: 'A1', major_dimension: 'DIAGONAL' },
        ['/tool_input/major_dimension'],
      );
      expect((body.errors as Array<{ message: string }>)[0]!.message).toMatch(/"rows".*"columns".*any case/);
      await expectInvalid(
        'sheets_get_values',
        { spreadsheet_id: BUDGET, range: 'A1', value_render_option: 'RAW' },
        ['/tool_input/value_render_option'],
      );
    });
  });

  describe('sheets_read_spreadsheet', () => {
    it('reads the properties and tabs without grid data', async () => {
      const { status, body } = await run('sheets_read_spreadsheet', { spreadsheet_id: BUDGET });
      expect(status, JSON.stringify(body)).toBe(200);
      const data = body.data as {
        spreadsheetId: string;
        properties: { title: string };
        sheets: Array<{
          properties: { title: string; sheetId: number; gridProperties: Record<string, number> };
        }>;
      };
      expect(data.spreadsheetId).toBe(BUDGET);
      expect(data.properties.title).toBe('Quarterly budget');
      expect(data.sheets.map((s) => s.properties.title)).toEqual(['Budget', 'Q1 Expenses']);
      expect(data.sheets[0]!.properties.gridProperties).toMatchObject({ rowCount: 1000, frozenRowCount: 1 });
      expect(data.sheets[0]).not.toHaveProperty('data');
    });

    it('returns the cells of the ranges asked for', async () => {
      const { status, body } = await run('sheets_read_spreadsheet', {
        spreadsheet_id: BUDGET,
        include_grid_data: true,
        ranges: ['Budget!A1:B2'],
      });
      expect(status, JSON.stringify(body)).toBe(200);
      const sheets = (body.data as { sheets: Array<Record<string, unknown>> }).sheets;
      expect(sheets).toHaveLength(1);
      const data = sheets[0]!.data as Array<{ rowData: Array<{ values: Array<Record<string, unknown>> }> }>;
      expect(data[0]!.rowData[1]!.values[1]).toMatchObject({
        userEnteredValue: { numberValue: 42000 },
        effectiveValue: { numberValue: 42000 },
      });
    });

    it('refuses invalid input before calling Google', async () => {
      await expectInvalid('sheets_read_spreadsheet', {}, ['/tool_input/spreadsheet_id']);
      await expectInvalid('sheets_read_spreadsheet', { spreadsheet_id: BUDGET, include_grid_data: 'yes' }, [
        '/tool_input/include_grid_data',
      ]);
      await expectInvalid('sheets_read_spreadsheet', { spreadsheet_id: BUDGET, ranges: ['Budget!1A'] }, [
        '/tool_input/ranges/0',
      ]);
      await expectInvalid('sheets_read_spreadsheet', { spreadsheet_id: BUDGET, ranges: 'Budget!1A' }, [
        '/tool_input/ranges',
      ]);
      await expectInvalid('sheets_read_spreadsheet', { spreadsheet_id: BUDGET, ranges: 3 }, [
        '/tool_input/ranges',
      ]);
      await expectInvalid('sheets_read_spreadsheet', { spreadsheet_id: BUDGET, ranges: [] }, [
        '/tool_input/ranges',
      ]);
    });
  });

  describe('sheets_update_values', () => {
    it('writes values as user-entered and returns the computed cells', async () => {
      const { status, body } = await run('sheets_update_values', {
        spreadsheet_id: BUDGET,
        range: 'Budget!A10',
        values: [
          ['Marketing', 1200, '1,500', 900, 2000, '=SUM(B10:E10)'],
          ['Launch date', '2024-05-01'],
        ],
        include_values_in_response: true,
        response_value_render_option: 'UNFORMATTED_VALUE',
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.data).toMatchObject({
        spreadsheetId: BUDGET,
        updatedRange: 'Budget!A10:F11',
        updatedRows: 2,
        updatedColumns: 6,
        updatedCells: 8,
        updatedData: {
          values: [
            ['Marketing', 1200, 1500, 900, 2000, 5600],
            ['Launch date', 45413],
          ],
        },
      });
      const ss = spreadsheet(BUDGET)!;
      expect(cell(ss, 'Budget', 9, 0)).toEqual({ kind: 'string', value: 'Marketing' });
      expect(cell(ss, 'Budget', 9, 2)).toMatchObject({ kind: 'number', value: 1500 });
      expect(cell(ss, 'Budget', 9, 5)).toEqual({ kind: 'formula', value: '=SUM(B10:E10)' });
    });

    it('stores RAW values as given, by columns, leaving null cells unchanged', async () => {
      const { status, body } = await run('sheets_update_values', {
        spreadsheet_id: BUDGET,
        range: "'Q1 Expenses'!F1:G2",
        values: [
          ['=1+1', '007'],
          [null, 'kept'],
        ],
        value_input_option: 'RAW',
        major_dimension: 'COLUMNS',
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.data).toMatchObject({ updatedRange: "'Q1 Expenses'!F1:G2" });
      expect(body.data).not.toHaveProperty('updatedData');
      const ss = spreadsheet(BUDGET)!;
      expect(cell(ss, 'Q1 Expenses', 0, 5)).toEqual({ kind: 'string', value: '=1+1' });
      expect(cell(ss, 'Q1 Expenses', 1, 5)).toEqual({ kind: 'string', value: '007' });
      expect(cell(ss, 'Q1 Expenses', 1, 6)).toEqual({ kind: 'string', value: 'kept' });
      expect(cell(ss, 'Q1 Expenses', 0, 6)).toBeUndefined();
    });

    it('refuses invalid input before calling Google', async () => {
      await expectInvalid('sheets_update_values', { spreadsheet_id: BUDGET, range: 'A1' }, [
        '/tool_input/values',
      ]);
      await expectInvalid('sheets_update_values', { spreadsheet_id: BUDGET, values: [[1]] }, [
        '/tool_input/range',
      ]);
      await expectInvalid('sheets_update_values', { spreadsheet_id: BUDGET, range: 'A1', values: [] }, [
        '/tool_input/values',
      ]);
      await expectInvalid(
        'sheets_update_values',
        { spreadsheet_id: BUDGET, range: 'A1', values: [[], []] },
        ['/tool_input/values'],
        /rule: values must hold at least one cell/,
      );
      await expectInvalid('sheets_update_values', { spreadsheet_id: BUDGET, range: 'A1', values: [1, 2] }, [
        '/tool_input/values/0',
      ]);
      await expectInvalid(
        'sheets_update_values',
        { spreadsheet_id: BUDGET, range: 'Budget!A1:B2', values: [[1, 2, 3]] },
        ['/tool_input/values'],
        /rule: values written to a bounded range must fit inside it/,
      );
      await expectInvalid(
        'sheets_update_values',
        { spreadsheet_id: BUDGET, range: 'Budget!A1:C1', values: [[1, 2]], major_dimension: 'columns' },
        ['/tool_input/values'],
        /rule: values written to a bounded range must fit inside it/,
      );
      await expectInvalid(
        'sheets_update_values',
        {
          spreadsheet_id: BUDGET,
          range: 'A1',
          values: [[1]],
          value_input_option: 'INPUT_VALUE_OPTION_UNSPECIFIED',
        },
        ['/tool_input/value_input_option'],
      );
      await expectInvalid(
        'sheets_update_values',
        { spreadsheet_id: BUDGET, range: 'Budget!ZZZZ1', values: [[1]] },
        ['/tool_input/range'],
      );
    });
  });

  describe('provider errors', () => {
    it('maps a missing spreadsheet to upstream_not_found', async () => {
      for (const [tool, input] of [
        ['sheets_get_values', { spreadsheet_id: MISSING, range: 'A1' }],
        ['sheets_read_spreadsheet', { spreadsheet_id: MISSING }],
        ['sheets_update_values', { spreadsheet_id: MISSING, range: 'A1', values: [[1]] }],
      ] as const) {
        expectUpstreamError(await run(tool, input), notFound('Requested entity was not found.'), tool);
      }
    });

    it('maps a range Google refuses to upstream_validation', async () => {
      const read = await run('sheets_get_values', { spreadsheet_id: BUDGET, range: 'Budget!A1:AB3' });
      expectUpstreamError(read, {
        status: 400,
        code: 'upstream_validation',
        upstreamStatus: 400,
        detail: /exceeds grid limits/,
      });
      const write = await run('sheets_update_values', {
        spreadsheet_id: BUDGET,
        range: 'NoSuchTab!A1',
        values: [[1]],
      });
      expectUpstreamError(write, { status: 400, code: 'upstream_validation' });
    });

    it('maps 429 with Retry-After to upstream_rate_limited', async () => {
      await expectRateLimited(
        control,
        () => run('sheets_create_spreadsheet', { title: 'Throttled' }),
        google429('^/google/v4/spreadsheets', 30, 'Quota exceeded for quota metric'),
        { retryAfterMs: 30_000 },
      );
    });

    it("maps Google's 403 rateLimitExceeded to upstream_rate_limited", async () => {
      await expectRateLimited(
        control,
        () => run('sheets_get_values', { spreadsheet_id: BUDGET, range: 'A1' }),
        google403RateLimit('^/google/v4/spreadsheets/', 'rateLimitExceeded'),
        { detail: 'Rate Limit Exceeded' },
      );
    });

    it('answers account_not_active with an authorization link when the grant was revoked', async () => {
      await expectRevokedAccountNotActive(t, {
        provider: 'google_sheets',
        emulator: 'google',
        identifier: 'sheets_revoked',
        userId: ALAN,
        works: ['sheets_get_values', { spreadsheet_id: budgetOf(ALAN), range: 'Budget!A1' }],
      });
    });
  });
});
