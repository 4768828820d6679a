import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { a1Range, checkRange, spreadsheetId } from './shared.js';

const input = Type.Object(
  {
    spreadsheet_id: spreadsheetId,
    include_grid_data: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Also return every cell (value, formatted value, number format) of the ranges. Default false: only the spreadsheet and tab properties. Grid data of whole sheets can be large: give ranges with it.',
      }),
    ),
    // The specification's ranges is one A1 range; several, as Google takes them, are a wider type.
    ranges: Type.Optional(
      Type.Union(
        [
          a1Range('The range to include'),
          Type.Array(a1Range('A range to include'), { minItems: 1, maxItems: 100 }),
        ],
        {
          description:
            'Limit the result to the tab this A1 range names (and, with include_grid_data, to its cells), e.g. "Budget!A1:F10"; an array of ranges, e.g. ["Budget!A1:F10", "Notes"], is accepted too. Default: every tab.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

type Input = Static<typeof input>;

/** The ranges as a list, whichever form the caller gave. */
function rangesOf(value: Input): string[] {
  return value.ranges === undefined ? [] : typeof value.ranges === 'string' ? [value.ranges] : value.ranges;
}

function check(value: Input): FieldError[] {
  if (typeof value.ranges === 'string') return checkRange('/ranges', value.ranges).errors;
  return rangesOf(value).flatMap((range, i) => checkRange(`/ranges/${i}`, range).errors);
}

export const sheetsReadSpreadsheet = defineTool({
  name: 'sheets_read_spreadsheet',
  provider: 'google_sheets',
  description: [
    'Reads a Google Sheets spreadsheet: its title, locale, time zone and every tab (sheetId, title, index, grid size, frozen rows), optionally with the cells.',
    'Use it to find out which tabs exist and how big they are before reading or writing values; to read plain values of one range, sheets_get_values is lighter.',
    'Rules: ranges is one A1 range (or an array of them); include_grid_data without ranges returns every cell of every tab.',
    'Returns the provider’s Spreadsheet object: spreadsheetId, spreadsheetUrl, properties, sheets[{properties, data?}] where data[].rowData[].values[] holds userEnteredValue, effectiveValue and formattedValue.',
    'Example input: {"spreadsheet_id": "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms", "include_grid_data": true, "ranges": "Budget!A1:F3"}',
  ].join(' '),
  input,
  annotations: { read_only: true, destructive: false, idempotent: true },
  check,
  async run(value, { client }) {
    const { data } = await client.request<Record<string, unknown>>({
      method: 'GET',
      path: `/v4/spreadsheets/${encodeURIComponent(value.spreadsheet_id)}`,
      query: {
        includeGridData: value.include_grid_data ?? false,
        ranges: rangesOf(value),
      },
    });
    return data;
  },
});
