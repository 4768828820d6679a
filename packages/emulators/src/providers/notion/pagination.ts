import { shapeError, validationError } from './errors.js';

export const MAX_PAGE_SIZE = 100;

/** Reads `page_size` from a query string (strings) or a JSON body (numbers), as Notion validates both. */
export function parsePageSize(raw: unknown, where: 'body' | 'query'): number {
  if (raw === undefined || raw === null) return MAX_PAGE_SIZE;
  const value = where === 'query' && typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw shapeError(where, 'page_size', 'an integer', raw);
  if (value < 1) throw shapeError(where, 'page_size', '≥ `1`', value);
  if (value > MAX_PAGE_SIZE) throw shapeError(where, 'page_size', `≤ \`${MAX_PAGE_SIZE}\``, value);
  return value;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Notion cursors name the first item of the next page (for most lists, that item's id), so a
 * cursor stays valid while earlier items change.
 */
export function paginate<T>(
  all: T[],
  keyOf: (item: T) => string,
  startCursor: unknown,
  pageSize: number,
): Page<T> {
  let start = 0;
  if (startCursor !== undefined && startCursor !== null) {
    if (typeof startCursor !== 'string') throw shapeError('body', 'start_cursor', 'a string', startCursor);
    start = all.findIndex((item) => keyOf(item) === startCursor);
    if (start < 0) throw validationError(`The start_cursor provided is invalid: ${startCursor}`);
  }
  const items = all.slice(start, start + pageSize);
  const next = all[start + pageSize];
  return { items, nextCursor: next === undefined ? null : keyOf(next) };
}

export type ListType =
  | 'block'
  | 'page_or_database'
  | 'page_or_data_source'
  | 'user'
  | 'comment'
  | 'property_item'
  | 'file_upload';

export function listBody<T>(
  page: Page<T>,
  type: ListType,
  typeValue: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    object: 'list',
    results: page.items,
    next_cursor: page.nextCursor,
    has_more: page.nextCursor !== null,
    type,
    [type]: typeValue,
  };
}
