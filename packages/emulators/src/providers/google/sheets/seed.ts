import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import { documentIdFrom, fileNativeDocument, setDriveText, toCsv } from '../native-files.js';
import { type DriveFile, GOOGLE_MIME } from '../shared.js';
import type { SheetsData } from '../user-data.js';
import {
  newSheet,
  parseInput,
  readValues,
  type SheetModel,
  type SpreadsheetModel,
  setCell,
} from './model.js';

// The spreadsheet every emulated user starts with, and its cells as Drive's export shows them.

interface BudgetSeed {
  lines: Array<[string, number, number, number, number]>;
  expenses: Array<[string, string, number, boolean]>;
}

const BUDGETS: BudgetSeed[] = [
  {
    lines: [
      ['Salaries', 42000, 42000, 45000, 45000],
      ['Cloud hosting', 3200, 3400, 3900, 4100],
      ['Travel', 1800, 950, 2200, 1200],
    ],
    expenses: [
      ['2024-01-15', 'Northwind Airlines', 640.5, true],
      ['2024-02-03', 'Contoso Cloud', 1100, true],
      ['2024-03-21', 'Fabrikam Office Supply', 59.99, false],
    ],
  },
  {
    lines: [
      ['Salaries', 51000, 51000, 52500, 52500],
      ['Compilers', 7000, 7200, 7100, 7600],
      ['Conferences', 2500, 0, 3100, 900],
    ],
    expenses: [
      ['2024-01-09', 'Tailspin Toys', 230, true],
      ['2024-02-14', 'Navy Yard Catering', 412.75, true],
      ['2024-03-02', 'Wide World Importers', 1999, false],
    ],
  },
  {
    lines: [
      ['Salaries', 38000, 38500, 39000, 41000],
      ['Research equipment', 5200, 1400, 800, 6100],
      ['Travel', 700, 1500, 600, 2400],
    ],
    expenses: [
      ['2024-01-22', 'Bletchley Rail', 88.4, true],
      ['2024-02-27', 'Adventure Works', 1325, false],
      ['2024-03-30', 'Margie Travel', 512.1, true],
    ],
  },
];

/** Stable per-user sheet id for the second tab (Google gives added tabs large random ids). */
function seededSheetId(seed: string): number {
  let h = 0;
  for (const ch of seed) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return (h % 2_000_000_000) + 1;
}

function put(sheet: SheetModel, row: number, values: unknown[]): void {
  values.forEach((v, col) => {
    const cell = parseInput(v, 'USER_ENTERED');
    if (cell) setCell(sheet, row, col, cell);
  });
}

export function seedSheets(
  user: EmulatedUser,
  drive: Map<string, DriveFile>,
  ctx: ProviderContext,
): SheetsData {
  const spreadsheets = new Map<string, SpreadsheetModel>();
  const which =
    Math.max(
      0,
      ctx.users.findIndex((u) => u.id === user.id),
    ) % BUDGETS.length;
  const seed = BUDGETS[which] as BudgetSeed;

  const budget = newSheet(0, 'Budget');
  budget.frozenRowCount = 1;
  put(budget, 0, ['Category', 'Q1', 'Q2', 'Q3', 'Q4', 'Total']);
  seed.lines.forEach((line, i) => {
    const row = i + 2;
    put(budget, i + 1, [...line, `=SUM(B${row}:E${row})`]);
  });
  const totalRow = seed.lines.length + 2;
  put(budget, seed.lines.length + 1, [
    'Total',
    ...['B', 'C', 'D', 'E', 'F'].map((c) => `=SUM(${c}2:${c}${totalRow - 1})`),
  ]);

  const expenses = newSheet(seededSheetId(`${user.id}:expenses`), 'Q1 Expenses');
  put(expenses, 0, ['Date', 'Vendor', 'Amount', 'Approved']);
  seed.expenses.forEach((e, i) => {
    put(expenses, i + 1, e);
  });
  put(expenses, seed.expenses.length + 1, ['', 'Total', `=SUM(C2:C${seed.expenses.length + 1})`]);

  const id = documentIdFrom(`sheets:${user.id}:quarterly-budget`);
  spreadsheets.set(id, {
    spreadsheetId: id,
    title: 'Quarterly budget',
    locale: 'en_US',
    timeZone: 'Europe/London',
    sheets: [budget, expenses],
  });
  fileNativeDocument(drive, {
    id,
    name: 'Quarterly budget',
    mimeType: GOOGLE_MIME.spreadsheet,
    ownerId: user.id,
    now: ctx.clock(),
  });
  setDriveText(drive, id, toCsv(sheetFormattedRows(spreadsheets.get(id) as SpreadsheetModel)));
  return { spreadsheets };
}

/**
 * One tab's cells as the Sheets UI shows them (formatted values, trailing empties trimmed), for
 * Drive's CSV/TSV export of a native spreadsheet.
 */
export function sheetFormattedRows(ss: SpreadsheetModel, sheetIndex = 0): string[][] {
  const sheet = ss.sheets[sheetIndex];
  if (!sheet) return [];
  const grid = {
    sheetTitle: sheet.title,
    startRow: 0,
    startCol: 0,
    endRow: sheet.rowCount - 1,
    endCol: sheet.columnCount - 1,
  };
  const { values = [] } = readValues(ss, { sheet, grid }, 'ROWS', {
    valueRenderOption: 'FORMATTED_VALUE',
    dateTimeRenderOption: 'FORMATTED_STRING',
  });
  return values.map((row) => row.map(String));
}
