import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from './jsonrpc.js';

/** Most items one list page carries unless the operator says otherwise (PORTICO_MCP_PAGE_SIZE). */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * One page of an MCP list (tools/list, and later any list a toolset URL serves) and the cursor of
 * the next. The cursor is opaque to clients, as the specification requires (the offset into the
 * list, encoded); one past the end of a list that has since shrunk starts over.
 */
export function page<T>(
  items: readonly T[],
  cursor: string | undefined,
  pageSize: number,
): { items: T[]; nextCursor?: string } {
  const offset = cursor === undefined ? 0 : decode(cursor);
  const start = offset > items.length ? 0 : offset;
  const end = start + pageSize;
  return {
    items: items.slice(start, end),
    ...(end < items.length ? { nextCursor: encode(end) } : {}),
  };
}

function encode(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function decode(cursor: string): number {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) {
    // The specification's answer to a cursor the server did not issue: invalid params.
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      'Invalid cursor: pass the nextCursor of the previous page unchanged, or no cursor for the first page.',
    );
  }
  return Number(match[1]);
}
