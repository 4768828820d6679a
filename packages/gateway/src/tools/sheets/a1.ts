/**
 * Just enough of Sheets' A1 notation to refuse a malformed range before it reaches Google, and to
 * know the size of a bounded range (`Sheet1!A1:C3`) so a write that cannot fit is refused too.
 * A text without `!` may be a sheet title (`Budget`), which only the spreadsheet can tell, so it is
 * accepted as is.
 */

/** Sheets allows columns up to ZZZ (18,278). */
const MAX_COLUMNS = 18_278;

export interface ParsedRange {
  /** The sheet the text names, unquoted; undefined when it names none (the first sheet). */
  sheet?: string;
  /** Rows × columns when both corners name a row and a column (`A1:C3`, `B7`); else undefined. */
  size?: { rows: number; columns: number };
  /** A single cell (`B7`): a write extends from it instead of being bounded by it. */
  singleCell: boolean;
}

export type RangeCheck = { ok: true; range: ParsedRange } | { ok: false; reason: string };

function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

interface Ref {
  col?: number;
  row?: number;
}

function parseRef(text: string): Ref | null {
  const m = /^\$?([A-Za-z]{1,3})?\$?([0-9]+)?$/.exec(text);
  if (!m || (m[1] === undefined && m[2] === undefined)) return null;
  const ref: Ref = {};
  if (m[1] !== undefined) {
    ref.col = columnIndex(m[1]);
    if (ref.col > MAX_COLUMNS) return null;
  }
  if (m[2] !== undefined) {
    ref.row = Number(m[2]);
    if (ref.row < 1) return null;
  }
  return ref;
}

const R1C1 = /^R[0-9]*C[0-9]*(:R[0-9]*C[0-9]*)?$/i;

/** The cell part after `!`: `A1`, `A1:C3`, `A:B`, `2:4`, `A5:B`, or R1C1 (`R1C1:R2C3`). */
function parseCells(text: string): Omit<ParsedRange, 'sheet'> | null {
  if (R1C1.test(text)) return { singleCell: false };
  const parts = text.split(':');
  if (parts.length > 2) return null;
  const a = parseRef(parts[0] ?? '');
  if (!a) return null;
  if (parts.length === 1) {
    if (a.col === undefined || a.row === undefined) return null;
    return { singleCell: true, size: { rows: 1, columns: 1 } };
  }
  const b = parseRef(parts[1] ?? '');
  if (!b) return null;
  // `A:5` pairs a column with a row and names no rectangle.
  if ((a.row === undefined && b.col === undefined) || (a.col === undefined && b.row === undefined))
    return null;
  if (a.row !== undefined && a.col !== undefined && b.row !== undefined && b.col !== undefined) {
    return {
      singleCell: false,
      size: { rows: Math.abs(b.row - a.row) + 1, columns: Math.abs(b.col - a.col) + 1 },
    };
  }
  return { singleCell: false };
}

export function parseRange(text: string): RangeCheck {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, reason: 'the range is empty' };
  let sheet: string | undefined;
  let cells: string | undefined;
  if (trimmed.startsWith("'")) {
    let i = 1;
    let title = '';
    for (; i < trimmed.length; i++) {
      if (trimmed[i] === "'") {
        if (trimmed[i + 1] === "'") {
          title += "'";
          i++;
          continue;
        }
        break;
      }
      title += trimmed[i];
    }
    if (i >= trimmed.length) {
      return {
        ok: false,
        reason: `the quoted sheet name has no closing quote (write it as 'My sheet'!A1:B2)`,
      };
    }
    const rest = trimmed.slice(i + 1);
    if (rest !== '' && !rest.startsWith('!')) {
      return {
        ok: false,
        reason: `a quoted sheet name must be followed by "!" and cells, e.g. 'My sheet'!A1:B2`,
      };
    }
    sheet = title;
    cells = rest === '' ? undefined : rest.slice(1);
  } else {
    const bang = trimmed.lastIndexOf('!');
    if (bang < 0) return { ok: true, range: { singleCell: false } };
    sheet = trimmed.slice(0, bang);
    cells = trimmed.slice(bang + 1);
    if (sheet === '') return { ok: false, reason: 'the sheet name before "!" is empty' };
  }
  if (sheet === '') return { ok: false, reason: 'the sheet name is empty' };
  if (cells === undefined || cells === '') return { ok: true, range: { sheet, singleCell: false } };
  const parsed = parseCells(cells);
  if (!parsed) {
    return {
      ok: false,
      reason: `"${cells}" is not A1 notation (a cell like B7, a rectangle like A1:C3, columns like A:B or rows like 2:4; columns go up to ZZZ)`,
    };
  }
  return { ok: true, range: { sheet, ...parsed } };
}
