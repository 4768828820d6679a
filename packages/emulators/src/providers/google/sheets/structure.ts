import { randomInt } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { cloneCells, sheetProperties, spreadsheetJson } from './handlers.js';
import { newSheet, type SheetModel, SheetsRequestError, type SpreadsheetModel } from './model.js';
import { bool, objectBody } from './requests.js';

/** spreadsheets.batchUpdate: the structural requests (sheets, titles, dimensions), all or nothing. */
export function batchUpdateSpreadsheet(ss: SpreadsheetModel, req: FastifyRequest): unknown {
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
