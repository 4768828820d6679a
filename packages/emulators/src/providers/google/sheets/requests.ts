import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendGoogleError } from '../shared.js';
import {
  type DateTimeRenderOption,
  type InputOption,
  type RenderOptions,
  SheetsRequestError,
  type ValueRenderOption,
} from './model.js';

// Reading a Sheets request: the target in the path, query enums, the JSON body.

export type Reply = FastifyReply;

export function badRequest(reply: Reply, message: string): Reply {
  return sendGoogleError(reply, 400, message, { style: 'modern' });
}

export function enumParam<T extends string>(
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

export const DIMENSIONS = ['ROWS', 'COLUMNS'] as const;
const VALUE_RENDER = ['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'] as const;
const DATE_RENDER = ['SERIAL_NUMBER', 'FORMATTED_STRING'] as const;

export function renderOptions(q: URLSearchParams | Record<string, unknown>, prefix = ''): RenderOptions {
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

export function inputOption(q: URLSearchParams | Record<string, unknown>): InputOption {
  const raw = q instanceof URLSearchParams ? q.get('valueInputOption') : q.valueInputOption;
  if (raw === 'RAW' || raw === 'USER_ENTERED') return raw;
  if (raw === null || raw === undefined || raw === '' || raw === 'INPUT_VALUE_OPTION_UNSPECIFIED') {
    throw new SheetsRequestError('Invalid valueInputOption: INPUT_VALUE_OPTION_UNSPECIFIED');
  }
  throw new SheetsRequestError(
    `Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), "${String(raw)}"`,
  );
}

export function bool(raw: string | null | unknown): boolean {
  return raw === true || raw === 'true';
}

export function objectBody(req: FastifyRequest): Record<string, unknown> {
  const b = req.body;
  return typeof b === 'object' && b !== null && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

export function valuesOf(body: Record<string, unknown>): unknown[][] {
  const v = body.values;
  if (v === undefined) return [];
  if (!Array.isArray(v))
    throw new SheetsRequestError(
      "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue)",
    );
  return v.map((row) => (Array.isArray(row) ? row : [row]));
}

/** What the path after `/v4/spreadsheets/` asks for. */
export type Target =
  | { kind: 'spreadsheet'; id: string; verb?: string }
  | { kind: 'values'; id: string; range: string; verb?: string }
  | { kind: 'valuesBatch'; id: string; verb: string };

export function parseTarget(url: string): Target | null {
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
