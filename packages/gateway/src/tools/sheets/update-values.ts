import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  a1Range,
  checkRange,
  dateTimeRenderOption,
  googleDimension,
  majorDimension,
  rangePath,
  spreadsheetId,
  stringEnum,
  valueRenderOption,
} from './shared.js';

const cell = Type.Union([Type.String({ maxLength: 50_000 }), Type.Number(), Type.Boolean(), Type.Null()], {
  description:
    'A cell value: string (at most 50,000 characters), number or boolean; null leaves that cell unchanged.',
});

const input = Type.Object(
  {
    spreadsheet_id: spreadsheetId,
    range: a1Range(
      'Where to write. A single cell ("Sheet1!B2") or a whole sheet ("Sheet1") anchors the top-left corner and the values extend from it; a rectangle ("Sheet1!A1:C3") bounds the write',
    ),
    values: Type.Array(Type.Array(cell, { maxItems: 18_278 }), {
      minItems: 1,
      description:
        'The cells to write: a 2-D array, one inner array per row (per column with major_dimension "columns"). Rows may differ in length. Example: [["Name", "Score"], ["Ada", 92]].',
    }),
    value_input_option: Type.Optional(
      stringEnum(['USER_ENTERED', 'RAW'], {
        default: 'USER_ENTERED',
        description:
          'USER_ENTERED (default): values are parsed as if typed in the UI: "=SUM(A1:A3)" becomes a formula, "1,234" and "12%" numbers, "2024-01-15" a date. RAW: stored exactly as given (strings stay strings).',
      }),
    ),
    include_values_in_response: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Also return the written cells as they now read (formulas computed) in updatedData. Default false.',
      }),
    ),
    major_dimension: Type.Optional(majorDimension),
    response_value_render_option: Type.Optional(valueRenderOption),
    response_date_time_render_option: Type.Optional(dateTimeRenderOption),
  },
  { additionalProperties: false },
);

type Input = Static<typeof input>;

function check(value: Input): FieldError[] {
  const { errors, range } = checkRange('/range', value.range);
  if (errors.length) return errors;
  const out: FieldError[] = [];
  if (!value.values.some((row) => row.length > 0)) {
    out.push({
      path: '/values',
      message: 'Every row is empty (rule: values must hold at least one cell).',
    });
  }
  // A bounded rectangle must hold the values, as Google refuses a write past its edge.
  const size = range?.singleCell ? undefined : range?.size;
  if (size) {
    const columnsMajor = googleDimension(value.major_dimension) === 'COLUMNS';
    const outer = value.values.length;
    const inner = Math.max(0, ...value.values.map((row) => row.length));
    const [rows, columns] = columnsMajor ? [inner, outer] : [outer, inner];
    if (rows > size.rows || columns > size.columns) {
      out.push({
        path: '/values',
        message: `${rows} rows × ${columns} columns of values do not fit in ${value.range} (${size.rows} × ${size.columns}) (rule: values written to a bounded range must fit inside it; widen the range or give only its top-left cell).`,
      });
    }
  }
  return out;
}

export const sheetsUpdateValues = defineTool({
  name: 'sheets_update_values',
  provider: 'google_sheets',
  description: [
    'Writes a 2-D block of values into a Google Sheets range, replacing what those cells held.',
    'Use it to fill or overwrite cells at a known place; to create a spreadsheet first use sheets_create_spreadsheet.',
    'With value_input_option USER_ENTERED (default) strings are parsed as if typed ("=B2*2" is a formula, "12%" a number); RAW stores them as given.',
    'Rules: range must be A1 notation; values must hold at least one cell; a bounded range (A1:C3) must be large enough for the values; null cells are left unchanged.',
    'Returns {spreadsheetId, updatedRange, updatedRows, updatedColumns, updatedCells} and, with include_values_in_response, updatedData {range, majorDimension, values}.',
    'Example input: {"spreadsheet_id": "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms", "range": "Budget!A6", "values": [["Marketing", 1200, 1500, 900, 2000, "=SUM(B6:E6)"]], "include_values_in_response": true}',
  ].join(' '),
  input,
  annotations: { read_only: false, destructive: true, idempotent: true },
  check,
  async run(value, { client }) {
    const majorDimensionValue = googleDimension(value.major_dimension) ?? 'ROWS';
    const { data } = await client.request<Record<string, unknown>>({
      method: 'PUT',
      path: rangePath(value.spreadsheet_id, value.range),
      query: {
        valueInputOption: value.value_input_option ?? 'USER_ENTERED',
        includeValuesInResponse: value.include_values_in_response ?? false,
        responseValueRenderOption: value.response_value_render_option,
        responseDateTimeRenderOption: value.response_date_time_render_option,
      },
      json: { range: value.range, majorDimension: majorDimensionValue, values: value.values },
    });
    return data;
  },
});
