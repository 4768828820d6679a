import { randomInt } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { randomDocumentId } from '../native-files.js';
import { query } from '../native-routes.js';
import { formatRange, type GridRange } from './a1.js';
import {
  clearRange,
  type Dimension,
  Evaluator,
  findTable,
  gridData,
  type InputOption,
  insertRows,
  maxOf,
  newSheet,
  parseInput,
  type RenderOptions,
  readValues,
  resolveRange,
  type SheetModel,
  SheetsRequestError,
  type SpreadsheetModel,
  setCell,
  writeValues,
} from './model.js';

import {
  bool,
  DIMENSIONS,
  enumParam,
  inputOption,
  objectBody,
  renderOptions,
  type Target,
  valuesOf,
} from './requests.js';

// The spreadsheet and values RPCs, and the spreadsheet's JSON shape.

export function sheetProperties(sheet: SheetModel, index: number): Record<string, unknown> {
  const gridProperties: Record<string, unknown> = {
    rowCount: sheet.rowCount,
    columnCount: sheet.columnCount,
  };
  if (sheet.frozenRowCount) gridProperties.frozenRowCount = sheet.frozenRowCount;
  if (sheet.frozenColumnCount) gridProperties.frozenColumnCount = sheet.frozenColumnCount;
  return { sheetId: sheet.sheetId, title: sheet.title, index, sheetType: 'GRID', gridProperties };
}

function spreadsheetProperties(ss: SpreadsheetModel): Record<string, unknown> {
  return {
    title: ss.title,
    locale: ss.locale,
    autoRecalc: 'ON_CHANGE',
    timeZone: ss.timeZone,
    defaultFormat: {
      backgroundColor: { red: 1, green: 1, blue: 1 },
      padding: { top: 2, right: 3, bottom: 2, left: 3 },
      verticalAlignment: 'BOTTOM',
      wrapStrategy: 'OVERFLOW_CELL',
      textFormat: {
        foregroundColor: {},
        fontFamily: 'arial,sans,sans-serif',
        fontSize: 10,
        bold: false,
        italic: false,
        strikethrough: false,
        underline: false,
      },
    },
  };
}

export function spreadsheetJson(
  ss: SpreadsheetModel,
  opts: { ranges?: Array<{ sheet: SheetModel; grid: GridRange }>; includeGridData?: boolean } = {},
): Record<string, unknown> {
  const evaluator = new Evaluator(ss);
  const sheets = ss.sheets
    .map((sheet, index) => ({ sheet, index }))
    .filter(({ sheet }) => !opts.ranges || opts.ranges.some((r) => r.sheet === sheet))
    .map(({ sheet, index }) => {
      const out: Record<string, unknown> = { properties: sheetProperties(sheet, index) };
      if (opts.includeGridData) {
        const grids = opts.ranges
          ? opts.ranges.filter((r) => r.sheet === sheet).map((r) => r.grid)
          : [
              {
                sheetTitle: sheet.title,
                startRow: 0,
                startCol: 0,
                endRow: sheet.rowCount - 1,
                endCol: sheet.columnCount - 1,
              },
            ];
        out.data = grids.map((g) => gridData(sheet, g, evaluator));
      }
      return out;
    });
  return {
    spreadsheetId: ss.spreadsheetId,
    properties: spreadsheetProperties(ss),
    sheets,
    spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${ss.spreadsheetId}/edit`,
  };
}

export function createSpreadsheet(body: Record<string, unknown>): SpreadsheetModel {
  const props = (body.properties ?? {}) as Record<string, unknown>;
  const title = typeof props.title === 'string' && props.title !== '' ? props.title : 'Untitled spreadsheet';
  const ss: SpreadsheetModel = {
    spreadsheetId: randomDocumentId(),
    title,
    locale: typeof props.locale === 'string' ? props.locale : 'en_US',
    timeZone: typeof props.timeZone === 'string' ? props.timeZone : 'Etc/GMT',
    sheets: [],
  };
  const requested = Array.isArray(body.sheets) ? (body.sheets as Array<Record<string, unknown>>) : [];
  requested.forEach((s, i) => {
    const p = (s.properties ?? {}) as Record<string, unknown>;
    const grid = (p.gridProperties ?? {}) as Record<string, unknown>;
    const sheetTitle = typeof p.title === 'string' && p.title !== '' ? p.title : `Sheet${i + 1}`;
    if (ss.sheets.some((x) => x.title === sheetTitle)) {
      throw new SheetsRequestError(
        `Invalid requests[${i}].addSheet: A sheet with the name "${sheetTitle}" already exists. Please enter another name.`,
      );
    }
    const sheetId = typeof p.sheetId === 'number' ? p.sheetId : i === 0 ? 0 : randomInt(1, 2_000_000_000);
    const sheet = newSheet(
      sheetId,
      sheetTitle,
      typeof grid.rowCount === 'number' ? grid.rowCount : 1000,
      typeof grid.columnCount === 'number' ? grid.columnCount : 26,
    );
    if (typeof grid.frozenRowCount === 'number') sheet.frozenRowCount = grid.frozenRowCount;
    if (typeof grid.frozenColumnCount === 'number') sheet.frozenColumnCount = grid.frozenColumnCount;
    seedGridData(sheet, s.data);
    ss.sheets.push(sheet);
  });
  if (ss.sheets.length === 0) ss.sheets.push(newSheet(0, 'Sheet1'));
  return ss;
}

/** Initial `sheets[].data[]` of a create request: user-entered values only. */
function seedGridData(sheet: SheetModel, data: unknown): void {
  if (!Array.isArray(data)) return;
  for (const g of data as Array<Record<string, unknown>>) {
    const startRow = typeof g.startRow === 'number' ? g.startRow : 0;
    const startCol = typeof g.startColumn === 'number' ? g.startColumn : 0;
    const rows = Array.isArray(g.rowData) ? (g.rowData as Array<Record<string, unknown>>) : [];
    rows.forEach((row, r) => {
      const values = Array.isArray(row.values) ? (row.values as Array<Record<string, unknown>>) : [];
      values.forEach((cell, c) => {
        const v = (cell.userEnteredValue ?? {}) as Record<string, unknown>;
        const raw = v.formulaValue ?? v.numberValue ?? v.boolValue ?? v.stringValue;
        const parsed = v.stringValue !== undefined ? parseInput(raw, 'RAW') : parseInput(raw, 'USER_ENTERED');
        if (parsed && startRow + r < sheet.rowCount && startCol + c < sheet.columnCount) {
          setCell(sheet, startRow + r, startCol + c, parsed);
        }
      });
    });
  }
}

export function getSpreadsheet(ss: SpreadsheetModel, req: FastifyRequest): unknown {
  const q = query(req);
  const ranges = q.getAll('ranges');
  const resolved = ranges.length > 0 ? ranges.map((r) => resolveRange(ss, r)) : undefined;
  return spreadsheetJson(ss, {
    ...(resolved ? { ranges: resolved } : {}),
    includeGridData: bool(q.get('includeGridData')),
  });
}

export function getValues(ss: SpreadsheetModel, req: FastifyRequest, t: Target): unknown {
  const q = query(req);
  const dimension = enumParam<Dimension>(
    q,
    'majorDimension',
    'major_dimension',
    'Dimension',
    DIMENSIONS,
    'ROWS',
  );
  const opts = renderOptions(q);
  return readValues(ss, resolveRange(ss, (t as { range: string }).range), dimension, opts);
}

export function batchGetValues(ss: SpreadsheetModel, req: FastifyRequest): unknown {
  const q = query(req);
  const dimension = enumParam<Dimension>(
    q,
    'majorDimension',
    'major_dimension',
    'Dimension',
    DIMENSIONS,
    'ROWS',
  );
  const opts = renderOptions(q);
  const ranges = q.getAll('ranges');
  const evaluator = new Evaluator(ss);
  const valueRanges = ranges.map((r) => readValues(ss, resolveRange(ss, r), dimension, opts, evaluator));
  return { spreadsheetId: ss.spreadsheetId, ...(valueRanges.length > 0 ? { valueRanges } : {}) };
}

interface UpdateOptions {
  input: InputOption;
  includeValues: boolean;
  render: RenderOptions;
}

function updateOne(
  ss: SpreadsheetModel,
  rangeText: string,
  body: Record<string, unknown>,
  o: UpdateOptions,
): Record<string, unknown> {
  const resolved = resolveRange(ss, rangeText);
  const dimension = enumParam<Dimension>(
    body,
    'majorDimension',
    'major_dimension',
    'Dimension',
    DIMENSIONS,
    'ROWS',
  );
  const result = writeValues(resolved, valuesOf(body), dimension, o.input);
  const out: Record<string, unknown> = {
    spreadsheetId: ss.spreadsheetId,
    updatedRange: result.updatedRange,
    updatedRows: result.updatedRows,
    updatedColumns: result.updatedColumns,
    updatedCells: result.updatedCells,
  };
  if (o.includeValues) {
    // Google echoes the whole requested window when it is larger than what was written.
    const bounded = !resolved.parsed.singleCell && !resolved.parsed.wholeSheet;
    const window = bounded ? resolved.grid : result.written;
    out.updatedData = readValues(ss, { sheet: resolved.sheet, grid: window }, 'ROWS', o.render);
  }
  return out;
}

export function updateValues(ss: SpreadsheetModel, req: FastifyRequest, t: Target): unknown {
  const q = query(req);
  const opts: UpdateOptions = {
    input: inputOption(q),
    includeValues: bool(q.get('includeValuesInResponse')),
    render: renderOptions(q, 'response'),
  };
  const body = objectBody(req);
  const range = (t as { range: string }).range;
  if (typeof body.range === 'string' && body.range !== range) {
    const a = formatRange(resolveRange(ss, body.range).grid);
    const b = formatRange(resolveRange(ss, range).grid);
    if (a !== b) {
      throw new SheetsRequestError(`Requested range [${range}] and body range [${body.range}] do not match`);
    }
  }
  return updateOne(ss, range, body, opts);
}

export function batchUpdateValues(ss: SpreadsheetModel, req: FastifyRequest): unknown {
  const body = objectBody(req);
  const opts: UpdateOptions = {
    input: inputOption(body),
    includeValues: bool(body.includeValuesInResponse),
    render: renderOptions(body, 'response'),
  };
  const data = Array.isArray(body.data) ? (body.data as Array<Record<string, unknown>>) : [];
  // Validate every range first: a batch applies all or nothing.
  data.forEach((d, i) => {
    if (typeof d.range !== 'string')
      throw new SheetsRequestError(`Invalid data[${i}]: Unable to parse range: ${String(d.range)}`);
    try {
      resolveRange(ss, d.range);
    } catch (e) {
      if (e instanceof SheetsRequestError) throw new SheetsRequestError(`Invalid data[${i}]: ${e.message}`);
      throw e;
    }
  });
  const snapshot = ss.sheets.map((s) => ({ s, cells: cloneCells(s) }));
  const responses: Array<Record<string, unknown>> = [];
  try {
    data.forEach((d, i) => {
      try {
        responses.push(updateOne(ss, d.range as string, d, opts));
      } catch (e) {
        if (e instanceof SheetsRequestError) throw new SheetsRequestError(`Invalid data[${i}]: ${e.message}`);
        throw e;
      }
    });
  } catch (e) {
    for (const { s, cells } of snapshot) s.cells = cells;
    throw e;
  }
  const sum = (k: string) => responses.reduce((n, r) => n + ((r[k] as number | undefined) ?? 0), 0);
  const sheetsTouched = new Set(responses.map((r) => String(r.updatedRange).replace(/![^!]*$/, '')));
  const out: Record<string, unknown> = { spreadsheetId: ss.spreadsheetId };
  if (responses.length > 0) {
    out.totalUpdatedRows = sum('updatedRows');
    out.totalUpdatedColumns = sum('updatedColumns');
    out.totalUpdatedCells = sum('updatedCells');
    out.totalUpdatedSheets = sheetsTouched.size;
    out.responses = responses;
  }
  return out;
}

export function cloneCells(sheet: SheetModel): SheetModel['cells'] {
  return new Map([...sheet.cells].map(([r, row]) => [r, new Map(row)]));
}

export function appendValues(ss: SpreadsheetModel, req: FastifyRequest, t: Target): unknown {
  const q = query(req);
  const input = inputOption(q);
  const insertOption = enumParam(
    q,
    'insertDataOption',
    'insert_data_option',
    'InsertDataOption',
    ['OVERWRITE', 'INSERT_ROWS'] as const,
    'OVERWRITE',
  );
  const render = renderOptions(q, 'response');
  const body = objectBody(req);
  const resolved = resolveRange(ss, (t as { range: string }).range);
  const { sheet, grid } = resolved;
  // A lone cell or whole sheet searches every column to its right for the table.
  const searchArea: GridRange =
    resolved.parsed.singleCell || resolved.parsed.wholeSheet
      ? { ...grid, endRow: sheet.rowCount - 1, endCol: sheet.columnCount - 1 }
      : { ...grid, endRow: sheet.rowCount - 1 };
  const table = findTable(sheet, searchArea);
  const startRow = table ? table.endRow + 1 : grid.startRow;
  const startCol = table ? table.startCol : grid.startCol;
  const values = valuesOf(body);
  const dimension = enumParam<Dimension>(
    body,
    'majorDimension',
    'major_dimension',
    'Dimension',
    DIMENSIONS,
    'ROWS',
  );
  const height =
    dimension === 'ROWS'
      ? values.length
      : maxOf(
          values.map((c) => c.length),
          0,
        );
  if (insertOption === 'INSERT_ROWS' && height > 0 && startRow < sheet.rowCount)
    insertRows(sheet, startRow, height);
  const anchor = {
    sheet,
    grid: { sheetTitle: sheet.title, startRow, startCol, endRow: startRow, endCol: startCol },
    parsed: { wholeSheet: false, singleCell: true },
  };
  const result = writeValues(anchor, values, dimension, input, { growGrid: true });
  const updates: Record<string, unknown> = {
    spreadsheetId: ss.spreadsheetId,
    updatedRange: result.updatedRange,
    updatedRows: result.updatedRows,
    updatedColumns: result.updatedColumns,
    updatedCells: result.updatedCells,
  };
  if (bool(q.get('includeValuesInResponse'))) {
    updates.updatedData = readValues(ss, { sheet, grid: result.written }, 'ROWS', render);
  }
  return { spreadsheetId: ss.spreadsheetId, ...(table ? { tableRange: formatRange(table) } : {}), updates };
}

export function clearValues(ss: SpreadsheetModel, _req: FastifyRequest, t: Target): unknown {
  const resolved = resolveRange(ss, (t as { range: string }).range);
  clearRange(resolved);
  return { spreadsheetId: ss.spreadsheetId, clearedRange: formatRange(resolved.grid) };
}

export function batchClearValues(ss: SpreadsheetModel, req: FastifyRequest): unknown {
  const body = objectBody(req);
  const ranges = Array.isArray(body.ranges) ? body.ranges.map(String) : [];
  const resolved = ranges.map((r) => resolveRange(ss, r));
  for (const r of resolved) clearRange(r);
  return {
    spreadsheetId: ss.spreadsheetId,
    ...(resolved.length > 0 ? { clearedRanges: resolved.map((r) => formatRange(r.grid)) } : {}),
  };
}
