import { type Static, Type } from '@sinclair/typebox';
import { defineTool } from '../types.js';
import {
  a1Range,
  checkRange,
  dateTimeRenderOption,
  googleDimension,
  majorDimension,
  rangePath,
  spreadsheetId,
  valueRenderOption,
} from './shared.js';

const input = Type.Object(
  {
    spreadsheet_id: spreadsheetId,
    range: a1Range('The cells to read'),
    major_dimension: Type.Optional(majorDimension),
    value_render_option: Type.Optional(valueRenderOption),
    date_time_render_option: Type.Optional(dateTimeRenderOption),
  },
  { additionalProperties: false },
);

interface ValueRange {
  range: string;
  majorDimension: string;
  values?: unknown[][];
}

export const sheetsGetValues = defineTool({
  name: 'sheets_get_values',
  provider: 'google_sheets',
  description: [
    'Reads the cell values of one A1 range of a Google Sheets spreadsheet as a 2-D array.',
    'Use it to read data you know the location of; to discover the tabs and their sizes first, use sheets_read_spreadsheet.',
    'Rules: range must be A1 notation (a sheet name, cells like A1:C10, or both joined by "!"; quote sheet names with spaces: \'Q1 Expenses\'!A1:D20).',
    'Returns {range (the range actually read, sheet-qualified), majorDimension, values}; trailing empty rows and cells are left out, so values may be shorter than the range, and values is [] when the range is empty.',
    'major_dimension "columns" returns one inner array per column instead of per row.',
    'Example input: {"spreadsheet_id": "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms", "range": "Budget!A1:F5", "major_dimension": "rows", "value_render_option": "UNFORMATTED_VALUE"}',
  ].join(' '),
  input,
  annotations: { read_only: true, destructive: false, idempotent: true },
  check: (value: Static<typeof input>) => checkRange('/range', value.range).errors,
  async run(value, { client }) {
    const { data } = await client.request<ValueRange>({
      method: 'GET',
      path: rangePath(value.spreadsheet_id, value.range),
      query: {
        majorDimension: googleDimension(value.major_dimension),
        valueRenderOption: value.value_render_option,
        dateTimeRenderOption: value.date_time_render_option,
      },
    });
    return { range: data.range, majorDimension: data.majorDimension, values: data.values ?? [] };
  },
});
