/**
 * A1 notation as the Sheets API reads and writes it: `Sheet1!A1:C3`, `'My Sheet'!A:B`, `A1:B2`
 * (first sheet), `Sheet1` (whole sheet), open ranges (`A5:B`, `2:4`) and single cells.
 */

/** Zero-based, end-inclusive grid window on one sheet, resolved against its grid size. */
export interface GridRange {
  sheetTitle: string;
  startRow: number;
  startCol: number;
  endRow: number;
  endCol: number;
}

/** A parsed but unresolved A1 range: missing bounds mean "to the edge of the grid". */
export interface A1Range {
  /** Undefined when the text named no sheet (then the first sheet is meant). */
  sheetTitle?: string;
  startRow?: number;
  startCol?: number;
  endRow?: number;
  endCol?: number;
  /** The text named a sheet only (`Sheet1`, `'My Sheet'`). */
  wholeSheet: boolean;
  /** The text named one cell (`B7`): writes extend from it instead of being bounded by it. */
  singleCell?: boolean;
}

/** Sheets allows up to 18,278 columns (ZZZ) and 10 million cells. */
const MAX_COLUMN = 18_278;

export function columnToIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

export function indexToColumn(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

interface CellRef {
  col?: number;
  row?: number;
}

const REF = /^\$?([A-Za-z]{1,3})?\$?([0-9]+)?$/;

function parseRef(text: string): CellRef | null {
  if (text === '') return null;
  const m = REF.exec(text);
  if (!m || (m[1] === undefined && m[2] === undefined)) return null;
  const ref: CellRef = {};
  if (m[1] !== undefined) {
    ref.col = columnToIndex(m[1]);
    if (ref.col >= MAX_COLUMN) return null;
  }
  if (m[2] !== undefined) {
    const row = Number(m[2]);
    if (row < 1) return null;
    ref.row = row - 1;
  }
  return ref;
}

/** Parses the cell part (`A1:C3`, `A:B`, `2:4`, `B7`); null when it is not A1 notation. */
export function parseCells(text: string): Omit<A1Range, 'sheetTitle' | 'wholeSheet'> | null {
  const parts = text.split(':');
  if (parts.length > 2) return null;
  const a = parseRef(parts[0] ?? '');
  if (!a) return null;
  if (parts.length === 1) {
    // A lone reference must name a cell; `A` or `5` alone would be a sheet name instead.
    if (a.col === undefined || a.row === undefined) return null;
    return { startRow: a.row, startCol: a.col, endRow: a.row, endCol: a.col, singleCell: true };
  }
  const b = parseRef(parts[1] ?? '');
  if (!b) return null;
  // `A:5` pairs a column-only with a row-only reference, which names no rectangle.
  const aColOnly = a.row === undefined;
  const aRowOnly = a.col === undefined;
  const bColOnly = b.row === undefined;
  const bRowOnly = b.col === undefined;
  if ((aColOnly && bRowOnly) || (aRowOnly && bColOnly)) return null;
  const out: Omit<A1Range, 'sheetTitle' | 'wholeSheet'> = {};
  const cols = [a.col, b.col].filter((v): v is number => v !== undefined);
  const rows = [a.row, b.row].filter((v): v is number => v !== undefined);
  if (cols.length === 2) {
    out.startCol = Math.min(...cols);
    out.endCol = Math.max(...cols);
  } else if (a.col !== undefined) out.startCol = a.col;
  else if (b.col !== undefined) out.endCol = b.col;
  if (rows.length === 2) {
    out.startRow = Math.min(...rows);
    out.endRow = Math.max(...rows);
  } else if (a.row !== undefined) out.startRow = a.row;
  else if (b.row !== undefined) out.endRow = b.row;
  return out;
}

/**
 * Splits `Sheet!Cells`. A text without `!` is a sheet title when such a sheet exists, else cells
 * of the first sheet, as at Google.
 */
export function parseA1(text: string, sheetTitles: readonly string[]): A1Range | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  let sheetPart: string | undefined;
  let cellPart: string | undefined;
  if (trimmed.startsWith("'")) {
    let i = 1;
    let title = '';
    for (; i < trimmed.length; i++) {
      const ch = trimmed[i];
      if (ch === "'") {
        if (trimmed[i + 1] === "'") {
          title += "'";
          i++;
          continue;
        }
        break;
      }
      title += ch;
    }
    if (i >= trimmed.length) return null;
    sheetPart = title;
    const rest = trimmed.slice(i + 1);
    if (rest === '') cellPart = undefined;
    else if (rest.startsWith('!')) cellPart = rest.slice(1);
    else return null;
  } else {
    const bang = trimmed.lastIndexOf('!');
    if (bang >= 0) {
      sheetPart = trimmed.slice(0, bang);
      cellPart = trimmed.slice(bang + 1);
    } else if (sheetTitles.some((t) => t.toLowerCase() === trimmed.toLowerCase())) {
      sheetPart = trimmed;
    } else {
      cellPart = trimmed;
    }
  }
  if (cellPart === undefined || cellPart === '') {
    if (sheetPart === undefined) return null;
    return { sheetTitle: sheetPart, wholeSheet: true };
  }
  const cells = parseCells(cellPart);
  if (!cells) return null;
  return { ...cells, ...(sheetPart !== undefined ? { sheetTitle: sheetPart } : {}), wholeSheet: false };
}

/** Whether Sheets writes this title quoted in A1 notation. */
export function needsQuotes(title: string): boolean {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(title)) return true;
  // Titles that read as a cell reference (`AB12`, `R1C1`) are quoted to stay unambiguous.
  return /^[A-Za-z]{1,3}[0-9]+$/.test(title) || /^[Rr][0-9]*[Cc][0-9]*$/.test(title);
}

export function quoteSheetTitle(title: string): string {
  return needsQuotes(title) ? `'${title.replaceAll("'", "''")}'` : title;
}

export function cellName(row: number, col: number): string {
  return `${indexToColumn(col)}${row + 1}`;
}

/** `Sheet1!A1:C3`, or `Sheet1!B2` for one cell, as Google echoes ranges back. */
export function formatRange(r: GridRange): string {
  const start = cellName(r.startRow, r.startCol);
  const end = cellName(r.endRow, r.endCol);
  const cells = start === end ? start : `${start}:${end}`;
  return `${quoteSheetTitle(r.sheetTitle)}!${cells}`;
}
