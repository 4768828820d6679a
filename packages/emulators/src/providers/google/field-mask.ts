/**
 * Google's `fields` partial-response parameter (`spreadsheetId,sheets(properties/title)`,
 * `sheets.properties.title`, `*`), applied to a JSON body. Sheets and Docs both honour it.
 */

type FieldTree = Map<string, FieldTree | true>;

/** Parses a field mask; null when it is malformed. */
export function parseFieldMask(mask: string): FieldTree | null {
  let pos = 0;
  const src = mask.replace(/\s+/g, '');

  function list(): FieldTree | null {
    const tree: FieldTree = new Map();
    for (;;) {
      if (!path(tree)) return null;
      if (src[pos] === ',') {
        pos++;
        continue;
      }
      return tree;
    }
  }

  function path(into: FieldTree): boolean {
    const m = /^[A-Za-z0-9_*@]+/.exec(src.slice(pos));
    if (!m) return false;
    pos += m[0].length;
    const name = m[0];
    const sep = src[pos];
    if (sep === '/' || sep === '.') {
      pos++;
      const existing = into.get(name);
      const child: FieldTree = existing instanceof Map ? existing : new Map();
      if (existing !== true) into.set(name, child);
      return path(child);
    }
    if (sep === '(') {
      pos++;
      const child = list();
      if (!child || src[pos] !== ')') return false;
      pos++;
      const existing = into.get(name);
      if (existing instanceof Map) for (const [k, v] of child) existing.set(k, v);
      else if (existing !== true) into.set(name, child);
      return true;
    }
    into.set(name, true);
    return true;
  }

  if (src === '') return null;
  const tree = list();
  return tree && pos === src.length ? tree : null;
}

function pick(value: unknown, tree: FieldTree): unknown {
  if (Array.isArray(value)) return value.map((v) => pick(v, tree));
  if (typeof value !== 'object' || value === null) return value;
  if (tree.get('*') === true) return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of tree) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    out[key] = sub === true ? v : pick(v, sub);
  }
  return out;
}

/** Applies a `fields` mask to a response body; the body unchanged when no mask was asked for. */
export function applyFieldMask<T>(body: T, mask: string | undefined): T | Record<string, unknown> | null {
  if (mask === undefined || mask === '') return body;
  const tree = parseFieldMask(mask);
  if (!tree) return null;
  return pick(body, tree) as Record<string, unknown>;
}
