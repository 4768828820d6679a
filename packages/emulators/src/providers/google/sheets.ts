import { randomInt } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../core/types.js';
import { lookupNative, query, rpcAuthorizer, sendMasked } from './native-routes.js';
import { GOOGLE_API_SCOPES } from './scopes.js';
import { type DriveFile, GOOGLE_MIME, sendGoogleError } from './shared.js';
import { formatRange, type GridRange } from './sheets-a1.js';
import {
  documentIdFrom,
  fileNativeDocument,
  randomDocumentId,
  setDriveText,
  toCsv,
  touchDriveFile,
} from './sheets-drive.js';
import {
  clearRange,
  type DateTimeRenderOption,
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
  type ValueRenderOption,
  writeValues,
} from './sheets-model.js';
import type { GoogleDataOf, GoogleUserData, SheetsData } from './user-data.js';

export type { SpreadsheetModel } from './sheets-model.js';

export type { SheetsData } from './user-data.js';

const BODY_LIMIT = 128 * 1024 * 1024;
const NOT_FOUND = 'Requested entity was not found.';

// ---- seed -----------------------------------------------------------------------------------

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

// ---- JSON shapes ----------------------------------------------------------------------------

function sheetProperties(sheet: SheetModel, index: number): Record<string, unknown> {
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

function spreadsheetJson(
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

// ---- request plumbing -----------------------------------------------------------------------

type Reply = FastifyReply;

function badRequest(reply: Reply, message: string): Reply {
  return sendGoogleError(reply, 400, message, { style: 'modern' });
}

function enumParam<T extends string>(
  q: URLSearchParams | Record<string, unknown>,
  name: string,
  protoName: string,
  typeName: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = q instanceof URLSearchParams ? q.get(name) : q[name];
  if (raw === null || raw === undefined || raw === '') return fallback;
  if (typeof raw === 'string' && (allowed as readonly string[]).includes(raw)) return raw as T;
  throw new SheetsRequestError(
    `Invalid value at '${protoName}' (type.googleapis.com/google.apps.sheets.v4.${typeName}), "${String(raw)}"`,
  );
}

const DIMENSIONS = ['ROWS', 'COLUMNS'] as const;
const VALUE_RENDER = ['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'] as const;
const DATE_RENDER = ['SERIAL_NUMBER', 'FORMATTED_STRING'] as const;

function renderOptions(q: URLSearchParams | Record<string, unknown>, prefix = ''): RenderOptions {
  const v = prefix ? 'responseValueRenderOption' : 'valueRenderOption';
  const d = prefix ? 'responseDateTimeRenderOption' : 'dateTimeRenderOption';
  return {
    valueRenderOption: enumParam<ValueRenderOption>(
      q,
      v,
      prefix ? 'response_value_render_option' : 'value_render_option',
      'ValueRenderOption',
      VALUE_RENDER,
      'FORMATTED_VALUE',
    ),
    dateTimeRenderOption: enumParam<DateTimeRenderOption>(
      q,
      d,
      prefix ? 'response_date_time_render_option' : 'date_time_render_option',
      'DateTimeRenderOption',
      DATE_RENDER,
      'SERIAL_NUMBER',
    ),
  };
}

function inputOption(q: URLSearchParams | Record<string, unknown>): InputOption {
  const raw = q instanceof URLSearchParams ? q.get('valueInputOption') : q.valueInputOption;
  if (raw === 'RAW' || raw === 'USER_ENTERED') return raw;
  if (raw === null || raw === undefined || raw === '' || raw === 'INPUT_VALUE_OPTION_UNSPECIFIED') {
    throw new SheetsRequestError('Invalid valueInputOption: INPUT_VALUE_OPTION_UNSPECIFIED');
  }
  throw new SheetsRequestError(
    `Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), "${String(raw)}"`,
  );
}

function bool(raw: string | null | unknown): boolean {
  return raw === true || raw === 'true';
}

function objectBody(req: FastifyRequest): Record<string, unknown> {
  const b = req.body;
  return typeof b === 'object' && b !== null && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

function valuesOf(body: Record<string, unknown>): unknown[][] {
  const v = body.values;
  if (v === undefined) return [];
  if (!Array.isArray(v))
    throw new SheetsRequestError(
      "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue)",
    );
  return v.map((row) => (Array.isArray(row) ? row : [row]));
}

/** What the path after `/v4/spreadsheets/` asks for. */
type Target =
  | { kind: 'spreadsheet'; id: string; verb?: string }
  | { kind: 'values'; id: string; range: string; verb?: string }
  | { kind: 'valuesBatch'; id: string; verb: string };

function parseTarget(url: string): Target | null {
  const path = url.split('?')[0] as string;
  const at = path.indexOf('/v4/spreadsheets/');
  if (at < 0) return null;
  const rest = path.slice(at + '/v4/spreadsheets/'.length);
  const slash = rest.indexOf('/');
  const head = slash >= 0 ? rest.slice(0, slash) : rest;
  const [id, verb] = head.split(':', 2) as [string, string | undefined];
  if (!id) return null;
  if (slash < 0) {
    if (verb !== undefined && head.indexOf(':') !== head.lastIndexOf(':')) return null;
    return verb === undefined ? { kind: 'spreadsheet', id } : { kind: 'spreadsheet', id, verb };
  }
  if (verb !== undefined) return null;
  const tail = rest.slice(slash + 1);
  if (tail.startsWith('values:')) return { kind: 'valuesBatch', id, verb: tail.slice('values:'.length) };
  if (!tail.startsWith('values/')) return null;
  let rangePart = tail.slice('values/'.length);
  let rangeVerb: string | undefined;
  // The range is URL-encoded by clients, but a literal `:` is legal in a path: only a known
  // custom-method suffix counts as a verb.
  const m = /:(append|clear)$/.exec(rangePart);
  if (m) {
    rangeVerb = m[1];
    rangePart = rangePart.slice(0, -m[0].length);
  }
  let range: string;
  try {
    range = decodeURIComponent(rangePart);
  } catch {
    return null;
  }
  return rangeVerb ? { kind: 'values', id, range, verb: rangeVerb } : { kind: 'values', id, range };
}

// ---- routes ---------------------------------------------------------------------------------

const SERVICE = 'sheets.googleapis.com';

export function registerSheetsRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  const authorize = rpcAuthorizer(
    ctx,
    GOOGLE_API_SCOPES.sheets,
    SERVICE,
    'google.apps.sheets.v4.SpreadsheetsService',
  );

  /** The user's spreadsheet; one created through Drive starts empty. */
  const lookup = (data: GoogleUserData, id: string): SpreadsheetModel | null =>
    lookupNative(
      data.drive,
      data.sheets.spreadsheets,
      GOOGLE_MIME.spreadsheet,
      id,
      (spreadsheetId, title) => ({
        spreadsheetId,
        title,
        locale: 'en_US',
        timeZone: 'Etc/GMT',
        sheets: [newSheet(0, 'Sheet1')],
      }),
    );

  const send = (req: FastifyRequest, reply: Reply, body: unknown): Reply =>
    sendMasked(req, reply, body, (message) => badRequest(reply, message));

  app.post('/v4/spreadsheets', { bodyLimit: BODY_LIMIT }, (req, reply) => {
    const auth = authorize(req, reply, true, 'CreateSpreadsheet');
    if (!auth) return reply;
    const data = dataOf(auth.user.id);
    try {
      const ss = createSpreadsheet(objectBody(req));
      data.sheets.spreadsheets.set(ss.spreadsheetId, ss);
      fileNativeDocument(data.drive, {
        id: ss.spreadsheetId,
        name: ss.title,
        mimeType: GOOGLE_MIME.spreadsheet,
        ownerId: auth.user.id,
        now: ctx.clock(),
      });
      setDriveText(data.drive, ss.spreadsheetId, toCsv(sheetFormattedRows(ss)));
      return send(req, reply, spreadsheetJson(ss));
    } catch (e) {
      if (e instanceof SheetsRequestError) return badRequest(reply, e.message);
      throw e;
    }
  });

  app.route({
    method: ['GET', 'POST', 'PUT'],
    url: '/v4/spreadsheets/*',
    bodyLimit: BODY_LIMIT,
    handler: (req, reply) => {
      const target = parseTarget(req.url);
      const notFoundRoute = () =>
        sendGoogleError(reply, 404, `Method not found: ${req.method} ${req.url.split('?')[0]}`, {
          style: 'modern',
        });
      if (!target) return notFoundRoute();
      const route = routeOf(req.method, target);
      if (!route) return notFoundRoute();
      const auth = authorize(req, reply, route.write, route.method);
      if (!auth) return reply;
      const data = dataOf(auth.user.id);
      const ss = lookup(data, target.id);
      if (!ss) return sendGoogleError(reply, 404, NOT_FOUND, { style: 'modern' });
      try {
        const body = route.handle(ss, req, target);
        if (route.write) {
          touchDriveFile(data.drive, ss.spreadsheetId, ctx.clock());
          const file = data.drive.get(ss.spreadsheetId);
          if (file) file.name = ss.title;
          setDriveText(data.drive, ss.spreadsheetId, toCsv(sheetFormattedRows(ss)));
        }
        return send(req, reply, body);
      } catch (e) {
        if (e instanceof SheetsRequestError) return badRequest(reply, e.message);
        throw e;
      }
    },
  });
}

interface Route {
  write: boolean;
  method: string;
  handle(ss: SpreadsheetModel, req: FastifyRequest, target: Target): unknown;
}

/** Which RPC serves a method and custom verb on each kind of target (no verb: `undefined`). */
const ROUTES: Record<Target['kind'], Array<[httpMethod: string, verb: string | undefined, route: Route]>> = {
  spreadsheet: [
    ['GET', undefined, { write: false, method: 'GetSpreadsheet', handle: getSpreadsheet }],
    [
      'POST',
      'batchUpdate',
      { write: true, method: 'BatchUpdateSpreadsheet', handle: batchUpdateSpreadsheet },
    ],
  ],
  values: [
    ['GET', undefined, { write: false, method: 'GetValues', handle: getValues }],
    ['PUT', undefined, { write: true, method: 'UpdateValues', handle: updateValues }],
    ['POST', 'append', { write: true, method: 'AppendValues', handle: appendValues }],
    ['POST', 'clear', { write: true, method: 'ClearValues', handle: clearValues }],
  ],
  valuesBatch: [
    ['GET', 'batchGet', { write: false, method: 'BatchGetValues', handle: batchGetValues }],
    ['POST', 'batchUpdate', { write: true, method: 'BatchUpdateValues', handle: batchUpdateValues }],
    ['POST', 'batchClear', { write: true, method: 'BatchClearValues', handle: batchClearValues }],
  ],
};

function routeOf(method: string, t: Target): Route | null {
  return ROUTES[t.kind].find(([m, verb]) => m === method && verb === t.verb)?.[2] ?? null;
}

// ---- handlers -------------------------------------------------------------------------------

function createSpreadsheet(body: Record<string, unknown>): SpreadsheetModel {
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

function getSpreadsheet(ss: SpreadsheetModel, req: FastifyRequest): unknown {
  const q = query(req);
  const ranges = q.getAll('ranges');
  const resolved = ranges.length > 0 ? ranges.map((r) => resolveRange(ss, r)) : undefined;
  return spreadsheetJson(ss, {
    ...(resolved ? { ranges: resolved } : {}),
    includeGridData: bool(q.get('includeGridData')),
  });
}

function getValues(ss: SpreadsheetModel, req: FastifyRequest, t: Target): unknown {
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

function batchGetValues(ss: SpreadsheetModel, req: FastifyRequest): unknown {
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

function updateValues(ss: SpreadsheetModel, req: FastifyRequest, t: Target): unknown {
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

function batchUpdateValues(ss: SpreadsheetModel, req: FastifyRequest): unknown {
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

function cloneCells(sheet: SheetModel): SheetModel['cells'] {
  return new Map([...sheet.cells].map(([r, row]) => [r, new Map(row)]));
}

function appendValues(ss: SpreadsheetModel, req: FastifyRequest, t: Target): unknown {
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

function clearValues(ss: SpreadsheetModel, _req: FastifyRequest, t: Target): unknown {
  const resolved = resolveRange(ss, (t as { range: string }).range);
  clearRange(resolved);
  return { spreadsheetId: ss.spreadsheetId, clearedRange: formatRange(resolved.grid) };
}

function batchClearValues(ss: SpreadsheetModel, req: FastifyRequest): unknown {
  const body = objectBody(req);
  const ranges = Array.isArray(body.ranges) ? body.ranges.map(String) : [];
  const resolved = ranges.map((r) => resolveRange(ss, r));
  for (const r of resolved) clearRange(r);
  return {
    spreadsheetId: ss.spreadsheetId,
    ...(resolved.length > 0 ? { clearedRanges: resolved.map((r) => formatRange(r.grid)) } : {}),
  };
}

// ---- spreadsheets.batchUpdate (structure) ----------------------------------------------------

function batchUpdateSpreadsheet(ss: SpreadsheetModel, req: FastifyRequest): unknown {
  const body = objectBody(req);
  const requests = Array.isArray(body.requests) ? (body.requests as Array<Record<string, unknown>>) : [];
  if (requests.length === 0) throw new SheetsRequestError('Must specify at least one request.');
  const backup = { title: ss.title, sheets: ss.sheets.map((s) => ({ ...s, cells: cloneCells(s) })) };
  const replies: unknown[] = [];
  try {
    requests.forEach((r, i) => {
      replies.push(applyStructureRequest(ss, r, i));
    });
  } catch (e) {
    ss.title = backup.title;
    ss.sheets = backup.sheets;
    throw e;
  }
  const out: Record<string, unknown> = { spreadsheetId: ss.spreadsheetId, replies };
  if (bool(body.includeSpreadsheetInResponse)) out.updatedSpreadsheet = spreadsheetJson(ss);
  return out;
}

function findSheet(ss: SpreadsheetModel, sheetId: unknown, where: string): SheetModel {
  const sheet = ss.sheets.find((s) => s.sheetId === Number(sheetId ?? 0));
  if (!sheet) throw new SheetsRequestError(`Invalid ${where}: No grid with id: ${String(sheetId ?? 0)}`);
  return sheet;
}

function applyStructureRequest(ss: SpreadsheetModel, request: Record<string, unknown>, i: number): unknown {
  const kinds = Object.keys(request);
  if (kinds.length !== 1) throw new SheetsRequestError(`Invalid requests[${i}]: No request set.`);
  const kind = kinds[0] as string;
  const r = (request[kind] ?? {}) as Record<string, unknown>;
  const where = `requests[${i}].${kind}`;
  switch (kind) {
    case 'addSheet': {
      const p = (r.properties ?? {}) as Record<string, unknown>;
      const grid = (p.gridProperties ?? {}) as Record<string, unknown>;
      let title = typeof p.title === 'string' && p.title !== '' ? p.title : '';
      if (!title) {
        let n = ss.sheets.length + 1;
        while (ss.sheets.some((s) => s.title === `Sheet${n}`)) n++;
        title = `Sheet${n}`;
      }
      if (ss.sheets.some((s) => s.title.toLowerCase() === title.toLowerCase())) {
        throw new SheetsRequestError(
          `Invalid ${where}: A sheet with the name "${title}" already exists. Please enter another name.`,
        );
      }
      const sheetId = typeof p.sheetId === 'number' ? p.sheetId : randomInt(1, 2_000_000_000);
      if (ss.sheets.some((s) => s.sheetId === sheetId)) {
        throw new SheetsRequestError(`Invalid ${where}: Sheet with id ${sheetId} already exists.`);
      }
      const sheet = newSheet(
        sheetId,
        title,
        typeof grid.rowCount === 'number' ? grid.rowCount : 1000,
        typeof grid.columnCount === 'number' ? grid.columnCount : 26,
      );
      const index =
        typeof p.index === 'number' ? Math.min(Math.max(0, p.index), ss.sheets.length) : ss.sheets.length;
      ss.sheets.splice(index, 0, sheet);
      return { addSheet: { properties: sheetProperties(sheet, index) } };
    }
    case 'deleteSheet': {
      const sheet = findSheet(ss, r.sheetId, where);
      if (ss.sheets.length === 1) {
        throw new SheetsRequestError(`Invalid ${where}: You can't remove all the sheets in a document.`);
      }
      ss.sheets = ss.sheets.filter((s) => s !== sheet);
      return {};
    }
    case 'updateSheetProperties': {
      const p = (r.properties ?? {}) as Record<string, unknown>;
      const sheet = findSheet(ss, p.sheetId, where);
      const fields = String(r.fields ?? '');
      const has = (f: string) =>
        fields === '*' || fields.split(',').some((x) => x.trim() === f || x.trim().startsWith(`${f}.`));
      if (has('title') && typeof p.title === 'string') sheet.title = p.title;
      const grid = (p.gridProperties ?? {}) as Record<string, unknown>;
      if (has('gridProperties')) {
        if (typeof grid.rowCount === 'number') sheet.rowCount = grid.rowCount;
        if (typeof grid.columnCount === 'number') sheet.columnCount = grid.columnCount;
        if (typeof grid.frozenRowCount === 'number') sheet.frozenRowCount = grid.frozenRowCount;
        if (typeof grid.frozenColumnCount === 'number') sheet.frozenColumnCount = grid.frozenColumnCount;
      }
      if (has('index') && typeof p.index === 'number') {
        ss.sheets = ss.sheets.filter((s) => s !== sheet);
        ss.sheets.splice(Math.min(Math.max(0, p.index), ss.sheets.length), 0, sheet);
      }
      return {};
    }
    case 'updateSpreadsheetProperties': {
      const p = (r.properties ?? {}) as Record<string, unknown>;
      const fields = String(r.fields ?? '');
      const has = (f: string) => fields === '*' || fields.split(',').some((x) => x.trim() === f);
      if (has('title') && typeof p.title === 'string') ss.title = p.title;
      if (has('locale') && typeof p.locale === 'string') ss.locale = p.locale;
      if (has('timeZone') && typeof p.timeZone === 'string') ss.timeZone = p.timeZone;
      return {};
    }
    case 'appendDimension': {
      const sheet = findSheet(ss, r.sheetId, where);
      const length = Number(r.length ?? 0);
      if (!(length > 0)) throw new SheetsRequestError(`Invalid ${where}: length must be > 0`);
      if (r.dimension === 'COLUMNS') sheet.columnCount += length;
      else sheet.rowCount += length;
      return {};
    }
    default:
      throw new SheetsRequestError(
        `Invalid JSON payload received. Unknown name "${kind}" at 'requests[${i}]': Cannot find field.`,
      );
  }
}
