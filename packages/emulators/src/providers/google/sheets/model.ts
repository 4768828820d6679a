import { type A1Range, formatRange, type GridRange, indexToColumn, parseA1 } from './a1.js';
import { type CellValue, ERROR_TEXT, FormulaEngine, formatGeneralNumber, isError } from './formula.js';

/** A cell's number format, as Sheets infers it from user-entered text (`12%`, `$1,200.00`, `2024-01-15`). */
export interface NumberFormat {
  type: 'NUMBER' | 'PERCENT' | 'CURRENCY' | 'DATE';
  pattern: string;
}

/** What a cell holds: its user-entered value. Formulas are computed on read. */
export type StoredCell =
  | { kind: 'number'; value: number; format?: NumberFormat }
  | { kind: 'string'; value: string }
  | { kind: 'bool'; value: boolean }
  | { kind: 'formula'; value: string };

export interface SheetModel {
  sheetId: number;
  title: string;
  rowCount: number;
  columnCount: number;
  frozenRowCount?: number;
  frozenColumnCount?: number;
  /** Sparse cells: row → column → cell. */
  cells: Map<number, Map<number, StoredCell>>;
}

export interface SpreadsheetModel {
  spreadsheetId: string;
  title: string;
  locale: string;
  timeZone: string;
  /** In tab order; a sheet's `index` is its position here. */
  sheets: SheetModel[];
}

export type ValueRenderOption = 'FORMATTED_VALUE' | 'UNFORMATTED_VALUE' | 'FORMULA';
export type DateTimeRenderOption = 'SERIAL_NUMBER' | 'FORMATTED_STRING';
export type Dimension = 'ROWS' | 'COLUMNS';
export type InputOption = 'RAW' | 'USER_ENTERED';

export interface RenderOptions {
  valueRenderOption: ValueRenderOption;
  dateTimeRenderOption: DateTimeRenderOption;
}

/** A request error: the message Google answers with a 400. */
export class SheetsRequestError extends Error {}

/** Largest value, without spreading (a sheet can hold more rows than a call has arguments). */
export function maxOf(values: Iterable<number>, floor: number): number {
  let m = floor;
  for (const v of values) if (v > m) m = v;
  return m;
}

export function getCell(sheet: SheetModel, row: number, col: number): StoredCell | undefined {
  return sheet.cells.get(row)?.get(col);
}

export function setCell(sheet: SheetModel, row: number, col: number, cell: StoredCell | null): void {
  let r = sheet.cells.get(row);
  if (cell === null) {
    r?.delete(col);
    if (r && r.size === 0) sheet.cells.delete(row);
    return;
  }
  if (!r) {
    r = new Map();
    sheet.cells.set(row, r);
  }
  r.set(col, cell);
}

export function newSheet(sheetId: number, title: string, rowCount = 1000, columnCount = 26): SheetModel {
  return { sheetId, title, rowCount, columnCount, cells: new Map() };
}

export interface ResolvedRange {
  sheet: SheetModel;
  grid: GridRange;
  parsed: A1Range;
}

/** Resolves A1 text against the spreadsheet, answering Google's 400 messages when it cannot. */
export function resolveRange(
  ss: SpreadsheetModel,
  text: string,
  opts: { clampToGrid?: boolean } = {},
): ResolvedRange {
  const parsed = parseA1(
    text,
    ss.sheets.map((s) => s.title),
  );
  if (!parsed) throw new SheetsRequestError(`Unable to parse range: ${text}`);
  const sheet = parsed.sheetTitle === undefined ? ss.sheets[0] : findSheetByTitle(ss, parsed.sheetTitle);
  if (!sheet) throw new SheetsRequestError(`Unable to parse range: ${text}`);
  const grid: GridRange = {
    sheetTitle: sheet.title,
    startRow: parsed.startRow ?? 0,
    startCol: parsed.startCol ?? 0,
    endRow: parsed.endRow ?? sheet.rowCount - 1,
    endCol: parsed.endCol ?? sheet.columnCount - 1,
  };
  if (opts.clampToGrid) {
    grid.endRow = Math.min(grid.endRow, sheet.rowCount - 1);
    grid.endCol = Math.min(grid.endCol, sheet.columnCount - 1);
  }
  if (
    grid.startRow >= sheet.rowCount ||
    grid.startCol >= sheet.columnCount ||
    grid.endRow >= sheet.rowCount ||
    grid.endCol >= sheet.columnCount
  ) {
    throw new SheetsRequestError(gridLimitMessage(sheet, grid));
  }
  return { sheet, grid, parsed };
}

/** Sheet titles in A1 notation match case-insensitively, an exact match first. */
export function findSheetByTitle(ss: SpreadsheetModel, title: string): SheetModel | undefined {
  return (
    ss.sheets.find((s) => s.title === title) ??
    ss.sheets.find((s) => s.title.toLowerCase() === title.toLowerCase())
  );
}

export function gridLimitMessage(sheet: SheetModel, grid: GridRange): string {
  return `Range (${formatRange(grid)}) exceeds grid limits. Max rows: ${sheet.rowCount}, max columns: ${sheet.columnCount}`;
}

/** Computes cells' effective values for one request, memoised, with Sheets' circular-reference error. */
export class Evaluator {
  private readonly memo = new Map<string, CellValue>();
  private readonly visiting = new Set<string>();
  private readonly engines = new Map<number, FormulaEngine>();

  constructor(private readonly ss: SpreadsheetModel) {}

  effective(sheet: SheetModel, row: number, col: number): CellValue {
    const cell = getCell(sheet, row, col);
    if (!cell) return null;
    if (cell.kind !== 'formula') return cell.value;
    const key = `${sheet.sheetId}:${row}:${col}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    if (this.visiting.has(key)) {
      return {
        error: 'REF',
        message: 'Circular dependency detected. To resolve with iterative calculation, see File > Settings.',
      };
    }
    this.visiting.add(key);
    const value = this.engine(sheet).evaluate(cell.value);
    this.visiting.delete(key);
    this.memo.set(key, value);
    return value;
  }

  private engine(sheet: SheetModel): FormulaEngine {
    let engine = this.engines.get(sheet.sheetId);
    if (!engine) {
      const find = (title: string | undefined) =>
        title === undefined
          ? sheet
          : this.ss.sheets.find((s) => s.title.toLowerCase() === title.toLowerCase());
      engine = new FormulaEngine({
        cell: (title, row, col) => {
          const target = find(title);
          return target ? this.effective(target, row, col) : null;
        },
        size: (title) => {
          const target = find(title);
          return target ? { rows: target.rowCount, cols: target.columnCount } : null;
        },
      });
      this.engines.set(sheet.sheetId, engine);
    }
    return engine;
  }
}

// ---- number formats -------------------------------------------------------------------------

const SERIAL_EPOCH = Date.UTC(1899, 11, 30);
const DAY_MS = 86_400_000;

function group(intDigits: string): string {
  return intDigits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function fixed(n: number, decimals: number, grouping: boolean): string {
  const s = Math.abs(n).toFixed(decimals);
  const [i = '0', f] = s.split('.');
  const body = (grouping ? group(i) : i) + (f ? `.${f}` : '');
  return n < 0 ? `-${body}` : body;
}

function decimalsOf(pattern: string): number {
  const m = /\.(0+)/.exec(pattern);
  return m ? (m[1] as string).length : 0;
}

export function formatNumber(value: number, format?: NumberFormat): string {
  if (!format) return formatGeneralNumber(value);
  const d = decimalsOf(format.pattern);
  switch (format.type) {
    case 'PERCENT':
      return `${fixed(value * 100, d, false)}%`;
    case 'CURRENCY': {
      const body = fixed(Math.abs(value), d, true);
      return value < 0 ? `-$${body}` : `$${body}`;
    }
    case 'DATE':
      return formatDate(value, format.pattern);
    default:
      return fixed(value, d, format.pattern.includes(','));
  }
}

function formatDate(serial: number, pattern: string): string {
  const d = new Date(SERIAL_EPOCH + Math.floor(serial) * DAY_MS);
  const y = String(d.getUTCFullYear());
  const m = d.getUTCMonth() + 1;
  const day = d.getUTCDate();
  if (pattern === 'yyyy-mm-dd') return `${y}-${String(m).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  return `${m}/${day}/${y}`;
}

function dateSerial(y: number, m: number, d: number): number | null {
  const ms = Date.UTC(y, m - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d) return null;
  return Math.round((ms - SERIAL_EPOCH) / DAY_MS);
}

/** Parses what a user types into a cell (USER_ENTERED): numbers, percents, currency, dates, booleans, formulas. */
export function parseUserEntered(text: string): StoredCell | null {
  if (text === '') return null;
  if (text.startsWith("'")) return { kind: 'string', value: text.slice(1) };
  if (text.startsWith('=') && text.length > 1) return { kind: 'formula', value: text };
  const t = text.trim();
  const upper = t.toUpperCase();
  if (upper === 'TRUE' || upper === 'FALSE') return { kind: 'bool', value: upper === 'TRUE' };
  const num = /^([+-])?(\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(t);
  if (num && (num[2] !== undefined || num[3] !== undefined)) {
    const value = Number(t.replaceAll(',', ''));
    if (Number.isFinite(value)) {
      if (num[2]?.includes(',')) {
        const d = num[3]?.length ?? 0;
        return {
          kind: 'number',
          value,
          format: { type: 'NUMBER', pattern: `#,##0${d ? `.${'0'.repeat(d)}` : ''}` },
        };
      }
      return { kind: 'number', value };
    }
  }
  const pct = /^([+-]?(?:\d+(?:\.(\d+))?|\.(\d+)))\s*%$/.exec(t);
  if (pct) {
    const d = (pct[2] ?? pct[3])?.length ?? 0;
    return {
      kind: 'number',
      value: Number(pct[1]) / 100,
      format: { type: 'PERCENT', pattern: `0${d ? `.${'0'.repeat(d)}` : ''}%` },
    };
  }
  const cur = /^(-)?\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?$/.exec(t);
  if (cur) {
    const value = Number(`${cur[2]?.replaceAll(',', '')}.${cur[3] ?? '0'}`) * (cur[1] ? -1 : 1);
    return { kind: 'number', value, format: { type: 'CURRENCY', pattern: '"$"#,##0.00' } };
  }
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(t);
  if (iso) {
    const serial = dateSerial(Number(iso[1]), Number(iso[2]), Number(iso[3]));
    if (serial !== null)
      return { kind: 'number', value: serial, format: { type: 'DATE', pattern: 'yyyy-mm-dd' } };
  }
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t);
  if (us) {
    const serial = dateSerial(Number(us[3]), Number(us[1]), Number(us[2]));
    if (serial !== null)
      return { kind: 'number', value: serial, format: { type: 'DATE', pattern: 'M/d/yyyy' } };
  }
  return { kind: 'string', value: text };
}

/**
 * Turns one JSON input value into a cell. undefined = leave the cell unchanged (JSON null),
 * null = clear it (empty string), as the Sheets API documents.
 */
export function parseInput(value: unknown, option: InputOption): StoredCell | null | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'number') return { kind: 'number', value };
  if (typeof value === 'boolean') return { kind: 'bool', value };
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (option === 'RAW') return text === '' ? null : { kind: 'string', value: text };
  return parseUserEntered(text);
}

// ---- rendering ------------------------------------------------------------------------------

export function formattedValue(cell: StoredCell | undefined, effective: CellValue): string | undefined {
  if (!cell) return undefined;
  if (isError(effective)) return ERROR_TEXT[effective.error];
  if (effective === null) return '';
  if (typeof effective === 'boolean') return effective ? 'TRUE' : 'FALSE';
  if (typeof effective === 'number')
    return formatNumber(effective, cell.kind === 'number' ? cell.format : undefined);
  return effective;
}

/** One cell as `values.get` renders it; '' for an empty cell. */
export function renderValue(
  cell: StoredCell | undefined,
  effective: CellValue,
  opts: RenderOptions,
): string | number | boolean {
  if (!cell) return '';
  if (opts.valueRenderOption === 'FORMATTED_VALUE') return formattedValue(cell, effective) ?? '';
  if (opts.valueRenderOption === 'FORMULA' && cell.kind === 'formula') return cell.value;
  if (isError(effective)) return ERROR_TEXT[effective.error];
  if (effective === null) return '';
  if (
    typeof effective === 'number' &&
    cell.kind === 'number' &&
    cell.format?.type === 'DATE' &&
    opts.dateTimeRenderOption === 'FORMATTED_STRING'
  ) {
    return formatNumber(effective, cell.format);
  }
  return effective;
}

function isEmptyRendered(v: string | number | boolean): boolean {
  return v === '';
}

/** Google drops trailing empty cells of each row and trailing empty rows. */
function trim(matrix: Array<Array<string | number | boolean>>): Array<Array<string | number | boolean>> {
  const rows = matrix.map((row) => {
    let end = row.length;
    while (end > 0 && isEmptyRendered(row[end - 1] as string | number | boolean)) end--;
    return row.slice(0, end);
  });
  let last = rows.length;
  while (last > 0 && (rows[last - 1] as unknown[]).length === 0) last--;
  return rows.slice(0, last);
}

export interface ValueRange {
  range: string;
  majorDimension: Dimension;
  values?: Array<Array<string | number | boolean>>;
}

export function readValues(
  ss: SpreadsheetModel,
  resolved: { sheet: SheetModel; grid: GridRange },
  dimension: Dimension,
  opts: RenderOptions,
  evaluator = new Evaluator(ss),
): ValueRange {
  const { sheet, grid } = resolved;
  // Only rows that hold cells matter; a 1000-row open range must not cost 1000 empty scans.
  const lastRow = Math.min(grid.endRow, maxOf(sheet.cells.keys(), -1));
  let lastCol = -1;
  for (const [r, row] of sheet.cells) {
    if (r < grid.startRow || r > grid.endRow) continue;
    for (const c of row.keys()) if (c <= grid.endCol && c > lastCol) lastCol = c;
  }
  const matrix: Array<Array<string | number | boolean>> = [];
  if (dimension === 'ROWS') {
    for (let r = grid.startRow; r <= lastRow; r++) {
      const row: Array<string | number | boolean> = [];
      for (let c = grid.startCol; c <= lastCol; c++) {
        row.push(renderValue(getCell(sheet, r, c), evaluator.effective(sheet, r, c), opts));
      }
      matrix.push(row);
    }
  } else {
    for (let c = grid.startCol; c <= lastCol; c++) {
      const col: Array<string | number | boolean> = [];
      for (let r = grid.startRow; r <= lastRow; r++) {
        col.push(renderValue(getCell(sheet, r, c), evaluator.effective(sheet, r, c), opts));
      }
      matrix.push(col);
    }
  }
  const values = trim(matrix);
  return { range: formatRange(grid), majorDimension: dimension, ...(values.length > 0 ? { values } : {}) };
}

export interface WriteResult {
  updatedRange: string;
  updatedRows: number;
  updatedColumns: number;
  updatedCells: number;
  /** The window written, for echoing values back. */
  written: GridRange;
}

/** Writes a value matrix at a resolved range, enforcing the bounds Google enforces. */
export function writeValues(
  resolved: ResolvedRange,
  values: unknown[][],
  dimension: Dimension,
  option: InputOption,
  opts: { growGrid?: boolean } = {},
): WriteResult {
  const { sheet, grid, parsed } = resolved;
  // Normalise to rows × columns.
  const rows: unknown[][] = [];
  if (dimension === 'ROWS') rows.push(...values.map((r) => (Array.isArray(r) ? r : [r])));
  else {
    values.forEach((col, c) => {
      (Array.isArray(col) ? col : [col]).forEach((v, r) => {
        rows[r] ??= [];
        (rows[r] as unknown[])[c] = v;
      });
    });
  }
  const height = rows.length;
  const width = maxOf(
    rows.map((r) => r.length),
    0,
  );
  // A lone cell or a whole sheet anchors the write; an explicit rectangle bounds it.
  const bounded = !parsed.singleCell && !parsed.wholeSheet;
  if (bounded) {
    if (grid.startRow + height - 1 > grid.endRow) {
      throw new SheetsRequestError(
        `Requested writing within range [${formatRange(grid)}], but tried writing to row [${grid.endRow + 2}]`,
      );
    }
    if (grid.startCol + width - 1 > grid.endCol) {
      throw new SheetsRequestError(
        `Requested writing within range [${formatRange(grid)}], but tried writing to column [${indexToColumn(grid.endCol + 1)}]`,
      );
    }
  }
  const written: GridRange = {
    sheetTitle: sheet.title,
    startRow: grid.startRow,
    startCol: grid.startCol,
    endRow: grid.startRow + Math.max(height, 1) - 1,
    endCol: grid.startCol + Math.max(width, 1) - 1,
  };
  if (written.endRow >= sheet.rowCount || written.endCol >= sheet.columnCount) {
    if (!opts.growGrid) throw new SheetsRequestError(gridLimitMessage(sheet, written));
    sheet.rowCount = Math.max(sheet.rowCount, written.endRow + 1);
    sheet.columnCount = Math.max(sheet.columnCount, written.endCol + 1);
  }
  let cells = 0;
  const touchedRows = new Set<number>();
  const touchedCols = new Set<number>();
  rows.forEach((row, i) => {
    row.forEach((v, j) => {
      const cell = parseInput(v, option);
      if (cell === undefined) return;
      setCell(sheet, grid.startRow + i, grid.startCol + j, cell);
      cells++;
      touchedRows.add(i);
      touchedCols.add(j);
    });
  });
  return {
    updatedRange: formatRange(written),
    updatedRows: touchedRows.size,
    updatedColumns: touchedCols.size,
    updatedCells: cells,
    written,
  };
}

export function clearRange(resolved: { sheet: SheetModel; grid: GridRange }): void {
  const { sheet, grid } = resolved;
  for (const [r, row] of [...sheet.cells]) {
    if (r < grid.startRow || r > grid.endRow) continue;
    for (const c of [...row.keys()]) if (c >= grid.startCol && c <= grid.endCol) setCell(sheet, r, c, null);
  }
}

/** Shifts rows at and below `at` down by `count` (append's INSERT_ROWS). */
export function insertRows(sheet: SheetModel, at: number, count: number): void {
  const moved = new Map<number, Map<number, StoredCell>>();
  for (const [r, row] of sheet.cells) moved.set(r >= at ? r + count : r, row);
  sheet.cells = moved;
  sheet.rowCount += count;
}

/** The data table append finds: the rows holding values within the range's columns, from its first row. */
export function findTable(sheet: SheetModel, grid: GridRange): GridRange | null {
  let firstRow = Number.POSITIVE_INFINITY;
  let lastRow = -1;
  let firstCol = Number.POSITIVE_INFINITY;
  let lastCol = -1;
  for (const [r, row] of sheet.cells) {
    if (r < grid.startRow || r > grid.endRow) continue;
    for (const c of row.keys()) {
      if (c < grid.startCol || c > grid.endCol) continue;
      firstRow = Math.min(firstRow, r);
      lastRow = Math.max(lastRow, r);
      firstCol = Math.min(firstCol, c);
      lastCol = Math.max(lastCol, c);
    }
  }
  if (lastRow < 0) return null;
  return {
    sheetTitle: sheet.title,
    startRow: firstRow,
    startCol: firstCol,
    endRow: lastRow,
    endCol: lastCol,
  };
}

/** ExtendedValue of a computed or entered value. */
export function extendedValue(v: CellValue): Record<string, unknown> | undefined {
  if (v === null) return undefined;
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (isError(v)) return { errorValue: { type: v.error, message: v.message } };
  return { stringValue: v };
}

export function userEnteredValue(cell: StoredCell): Record<string, unknown> {
  switch (cell.kind) {
    case 'number':
      return { numberValue: cell.value };
    case 'bool':
      return { boolValue: cell.value };
    case 'formula':
      return { formulaValue: cell.value };
    default:
      return { stringValue: cell.value };
  }
}

/** GridData for `spreadsheets.get?includeGridData=true`: CellData per cell, trailing empties trimmed. */
export function gridData(sheet: SheetModel, grid: GridRange, evaluator: Evaluator): Record<string, unknown> {
  const rowData: Array<Record<string, unknown>> = [];
  const lastRow = Math.min(grid.endRow, maxOf(sheet.cells.keys(), -1));
  for (let r = grid.startRow; r <= lastRow; r++) {
    const values: Array<Record<string, unknown>> = [];
    const row = sheet.cells.get(r);
    const lastCol = row ? Math.min(grid.endCol, maxOf(row.keys(), -1)) : -1;
    for (let c = grid.startCol; c <= lastCol; c++) {
      const cell = row?.get(c);
      if (!cell) {
        values.push({});
        continue;
      }
      const effective = evaluator.effective(sheet, r, c);
      const data: Record<string, unknown> = { userEnteredValue: userEnteredValue(cell) };
      const eff = extendedValue(effective);
      if (eff) data.effectiveValue = eff;
      data.formattedValue = formattedValue(cell, effective);
      if (cell.kind === 'number' && cell.format)
        data.userEnteredFormat = { numberFormat: { ...cell.format } };
      values.push(data);
    }
    rowData.push(values.length > 0 ? { values } : {});
  }
  while (rowData.length > 0 && !('values' in (rowData[rowData.length - 1] as object))) rowData.pop();
  const out: Record<string, unknown> = {};
  // proto3 JSON omits zero-valued fields, so a grid starting at A1 has no startRow/startColumn.
  if (grid.startRow > 0) out.startRow = grid.startRow;
  if (grid.startCol > 0) out.startColumn = grid.startCol;
  if (rowData.length > 0) out.rowData = rowData;
  out.rowMetadata = Array.from({ length: grid.endRow - grid.startRow + 1 }, () => ({ pixelSize: 21 }));
  out.columnMetadata = Array.from({ length: grid.endCol - grid.startCol + 1 }, () => ({ pixelSize: 100 }));
  return out;
}
