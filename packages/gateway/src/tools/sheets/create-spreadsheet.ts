import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';

/** Sheets holds at most 10 million cells per spreadsheet. */
const MAX_CELLS = 10_000_000;

const cellValue = Type.Union(
  [Type.String({ maxLength: 50_000 }), Type.Number(), Type.Boolean(), Type.Null()],
  {
    description:
      'A cell: a string, number or boolean; a string starting with "=" is a formula; null leaves the cell empty.',
  },
);

const initialSheet = Type.Object(
  {
    title: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The tab name, unique within the spreadsheet (case-insensitive), e.g. "Q1 Expenses".',
    }),
    row_count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'Rows in the grid (default 1000).' }),
    ),
    column_count: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 18_278,
        description: 'Columns in the grid (default 26, i.e. A–Z; at most 18,278, i.e. ZZZ).',
      }),
    ),
    frozen_row_count: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Header rows kept visible when scrolling; must be less than row_count.',
      }),
    ),
    frozen_column_count: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Columns kept visible when scrolling; must be less than column_count.',
      }),
    ),
    values: Type.Optional(
      Type.Array(Type.Array(cellValue, { maxItems: 18_278 }), {
        description:
          'Initial cells from A1, one inner array per row, entered as if typed: numbers stay numbers, "=SUM(B2:B4)" is a formula. Must fit in the grid.',
      }),
    ),
  },
  { additionalProperties: false, description: 'One tab of the new spreadsheet.' },
);

const input = Type.Object(
  {
    title: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'The spreadsheet title (also its file name in Drive). Default: Google\'s "Untitled spreadsheet".',
      }),
    ),
    locale: Type.Optional(
      Type.String({
        pattern: '^[a-z]{2,3}(_[A-Za-z0-9]{2,4}){0,2}$',
        description:
          'Locale for number and date formats: ISO 639 language, optionally "_" and an ISO 3166 country, e.g. "en_US", "de_DE", "fr". Default en_US.',
      }),
    ),
    time_zone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'IANA time zone used by date functions such as NOW(), e.g. "Europe/London", "America/New_York". Default is the account default.',
      }),
    ),
    sheets: Type.Optional(
      Type.Array(initialSheet, {
        minItems: 1,
        maxItems: 200,
        description: 'The tabs to create, in order. Default: one tab "Sheet1" of 1000 rows × 26 columns.',
      }),
    ),
  },
  { additionalProperties: false },
);

type Input = Static<typeof input>;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function check(value: Input): FieldError[] {
  const errors: FieldError[] = [];
  if (value.time_zone !== undefined && !isTimeZone(value.time_zone)) {
    errors.push({
      path: '/time_zone',
      message: `"${value.time_zone}" is not an IANA time zone (rule: time_zone is an IANA name such as "Europe/London").`,
    });
  }
  const seen = new Map<string, number>();
  let cells = 0;
  (value.sheets ?? []).forEach((sheet, i) => {
    const path = `/sheets/${i}`;
    const key = sheet.title.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) {
      errors.push({
        path: `${path}/title`,
        message: `"${sheet.title}" is already the title of sheets[${first}] (rule: sheet titles are unique, ignoring case).`,
      });
    } else seen.set(key, i);
    const rows = sheet.row_count ?? 1000;
    const columns = sheet.column_count ?? 26;
    cells += rows * columns;
    if (sheet.frozen_row_count !== undefined && sheet.frozen_row_count >= rows) {
      errors.push({
        path: `${path}/frozen_row_count`,
        message: `${sheet.frozen_row_count} frozen rows leave none to scroll in ${rows} rows (rule: frozen_row_count must be less than row_count).`,
      });
    }
    if (sheet.frozen_column_count !== undefined && sheet.frozen_column_count >= columns) {
      errors.push({
        path: `${path}/frozen_column_count`,
        message: `${sheet.frozen_column_count} frozen columns leave none to scroll in ${columns} columns (rule: frozen_column_count must be less than column_count).`,
      });
    }
    const values = sheet.values ?? [];
    if (values.length > rows) {
      errors.push({
        path: `${path}/values`,
        message: `${values.length} rows of values do not fit in ${rows} rows (rule: initial values must fit in the grid; raise row_count).`,
      });
    }
    values.forEach((row, r) => {
      if (row.length > columns) {
        errors.push({
          path: `${path}/values/${r}`,
          message: `${row.length} values do not fit in ${columns} columns (rule: initial values must fit in the grid; raise column_count).`,
        });
      }
    });
  });
  if (cells > MAX_CELLS) {
    errors.push({
      path: '/sheets',
      message: `The tabs hold ${cells} cells in all (rule: a spreadsheet holds at most 10,000,000 cells).`,
    });
  }
  return errors;
}

/** A cell of the create request, as Sheets' CellData.userEnteredValue. */
function cellData(value: string | number | boolean | null): Record<string, unknown> {
  if (value === null) return {};
  if (typeof value === 'number') return { userEnteredValue: { numberValue: value } };
  if (typeof value === 'boolean') return { userEnteredValue: { boolValue: value } };
  if (value.startsWith('=')) return { userEnteredValue: { formulaValue: value } };
  return { userEnteredValue: { stringValue: value } };
}

interface SheetProperties {
  sheetId?: number;
  title?: string;
  index?: number;
  gridProperties?: Record<string, number>;
}

interface Spreadsheet {
  spreadsheetId: string;
  spreadsheetUrl?: string;
  properties?: { title?: string; locale?: string; timeZone?: string };
  sheets?: Array<{ properties?: SheetProperties }>;
}

export const sheetsCreateSpreadsheet = defineTool({
  name: 'sheets_create_spreadsheet',
  provider: 'google_sheets',
  description: [
    'Creates a new Google Sheets spreadsheet in the user’s Drive and returns its id and URL.',
    'Use it when the user wants a new spreadsheet; to write into an existing one use sheets_update_values.',
    'Optionally set the title (default "Untitled spreadsheet"), the locale (number/date formats), the IANA time zone and the initial tabs, each with its grid size, frozen header rows and starting values (entered as typed; "=…" is a formula).',
    'Rules: sheet titles are unique (ignoring case); frozen rows/columns must be fewer than the grid’s; initial values must fit in the grid; at most 10 million cells.',
    'Returns spreadsheetId (pass it to the other sheets_ tools), spreadsheetUrl, properties {title, locale, timeZone} and sheets [{sheetId, title, index, gridProperties}].',
    'Example input: {"title": "Team budget", "time_zone": "Europe/London", "sheets": [{"title": "Budget", "frozen_row_count": 1, "values": [["Item", "Cost"], ["Laptops", 4200], ["Total", "=SUM(B2:B2)"]]}]}',
  ].join(' '),
  input,
  annotations: { read_only: false, destructive: false, idempotent: false },
  check,
  async run(value, { client }) {
    // Without a title Google names the spreadsheet itself ("Untitled spreadsheet").
    const properties: Record<string, string> = {};
    if (value.title !== undefined) properties.title = value.title;
    if (value.locale !== undefined) properties.locale = value.locale;
    if (value.time_zone !== undefined) properties.timeZone = value.time_zone;
    const body: Record<string, unknown> = { properties };
    if (value.sheets) {
      body.sheets = value.sheets.map((sheet, index) => {
        const gridProperties: Record<string, number> = {};
        if (sheet.row_count !== undefined) gridProperties.rowCount = sheet.row_count;
        if (sheet.column_count !== undefined) gridProperties.columnCount = sheet.column_count;
        if (sheet.frozen_row_count !== undefined) gridProperties.frozenRowCount = sheet.frozen_row_count;
        if (sheet.frozen_column_count !== undefined)
          gridProperties.frozenColumnCount = sheet.frozen_column_count;
        // The first tab keeps Google's usual id 0 so "gid=0" links work; the rest get Google's ids.
        const out: Record<string, unknown> = {
          properties: {
            title: sheet.title,
            index,
            ...(index === 0 ? { sheetId: 0 } : {}),
            ...(Object.keys(gridProperties).length ? { gridProperties } : {}),
          },
        };
        if (sheet.values?.length) {
          out.data = [
            {
              startRow: 0,
              startColumn: 0,
              rowData: sheet.values.map((row) => ({ values: row.map(cellData) })),
            },
          ];
        }
        return out;
      });
    }
    const { data } = await client.request<Spreadsheet>({
      method: 'POST',
      path: '/v4/spreadsheets',
      json: body,
      query: { fields: 'spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),sheets.properties' },
    });
    return {
      spreadsheetId: data.spreadsheetId,
      spreadsheetUrl: data.spreadsheetUrl,
      properties: data.properties,
      sheets: (data.sheets ?? []).map((s) => s.properties),
    };
  },
});
