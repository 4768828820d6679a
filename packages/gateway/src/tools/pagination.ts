/**
 * How list and search tools tell an agent to continue: `next_page` is exactly the input to merge
 * into the next call (e.g. `{ start_cursor: "…" }`), or null on the last page.
 */
export interface Paged {
  has_more: boolean;
  next_page: Record<string, string | number> | null;
}

export function paged(param: string, next: string | number | null | undefined): Paged {
  return next === null || next === undefined || next === ''
    ? { has_more: false, next_page: null }
    : { has_more: true, next_page: { [param]: next } };
}
