import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { stringEnum } from '../schema.js';
import { type ParsedRange, parseRange } from './a1.js';

export const spreadsheetId = Type.String({
  minLength: 10,
  maxLength: 200,
  pattern: '^[A-Za-z0-9_-]+$',
  description:
    'The spreadsheet id: letters, digits, "-" and "_", as in https://docs.google.com/spreadsheets/d/{spreadsheet_id}/edit (returned by sheets_create_spreadsheet or drive_search_files).',
});

export const a1Range = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 1000,
    description: `${what} in A1 notation: "Sheet1!A1:C10", "'My sheet'!A:B" (quote names with spaces or symbols, double any ' inside), "Budget" (a whole sheet) or "A1:C10" (the first sheet).`,
  });

export const valueRenderOption = stringEnum(['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'], {
  description:
    'How values are rendered: FORMATTED_VALUE (as shown in the UI, e.g. "$1,200.00"; default), UNFORMATTED_VALUE (raw numbers, e.g. 1200), FORMULA (formulas as typed, e.g. "=SUM(A1:A3)").',
});

export const dateTimeRenderOption = stringEnum(['SERIAL_NUMBER', 'FORMATTED_STRING'], {
  description:
    'How dates and times are rendered when values are not FORMATTED_VALUE: SERIAL_NUMBER (days since 1899-12-30; default) or FORMATTED_STRING (as the cell format shows them).',
});

/**
 * The specification writes "rows or columns", Google ROWS or COLUMNS: any case is taken (the reading
 * of sheets_get_values in docs/spec/tools.json) and `googleDimension` gives Google's spelling.
 */
export const majorDimension = Type.String({
  pattern: '^([Rr][Oo][Ww][Ss]|[Cc][Oo][Ll][Uu][Mm][Nn][Ss])$',
  description:
    '"rows" (default): each inner array is a row; "columns": each inner array is a column (any case, so ROWS and COLUMNS too). With rows, A1:B2 reads [["A1","B1"],["A2","B2"]]; with columns, [["A1","A2"],["B1","B2"]].',
});

/** Google's spelling of a `major_dimension` the schema accepted. */
export function googleDimension(value: string | undefined): 'ROWS' | 'COLUMNS' | undefined {
  return value === undefined ? undefined : value.toUpperCase() === 'COLUMNS' ? 'COLUMNS' : 'ROWS';
}

/** The A1 rule for one range field; `path` is relative to tool_input. */
export function checkRange(path: string, value: string): { errors: FieldError[]; range?: ParsedRange } {
  const result = parseRange(value);
  if (result.ok) return { errors: [], range: result.range };
  return {
    errors: [
      {
        path,
        message: `Invalid A1 range "${value}": ${result.reason} (rule: a range is a sheet name, cells in A1 notation, or both joined by "!").`,
      },
    ],
  };
}

/** The path segment for a range: URL-encoded, since a range may hold spaces, quotes, "!" and ":". */
export function rangePath(id: string, range: string): string {
  return `/v4/spreadsheets/${encodeURIComponent(id)}/values/${encodeURIComponent(range)}`;
}

export { stringEnum };
