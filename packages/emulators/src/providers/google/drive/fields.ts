/**
 * Google's partial-response `fields` selector: `nextPageToken, files(id, name, owners/emailAddress)`.
 * A tree of selected names; `true` keeps a whole value.
 */
export type FieldTree = Map<string, FieldTree | true>;

export class FieldsError extends Error {}

export function parseFields(text: string): FieldTree | '*' {
  const src = text.replace(/\s+/g, '');
  if (src === '*') return '*';
  let i = 0;
  const list = (): FieldTree => {
    const tree: FieldTree = new Map();
    for (;;) {
      const m = /^(\*|[A-Za-z_$@][\w$@.-]*)/.exec(src.slice(i));
      if (!m) throw new FieldsError(`Invalid field selection ${src.slice(i) || text}`);
      i += m[0].length;
      const path = [m[0]];
      while (src[i] === '/') {
        i++;
        const n = /^(\*|[A-Za-z_$@][\w$@.-]*)/.exec(src.slice(i));
        if (!n) throw new FieldsError(`Invalid field selection ${text}`);
        path.push(n[0]);
        i += n[0].length;
      }
      let leaf: FieldTree | true = true;
      if (src[i] === '(') {
        i++;
        leaf = list();
        if (src[i] !== ')') throw new FieldsError(`Invalid field selection ${text}`);
        i++;
      }
      for (let k = path.length - 1; k > 0; k--) leaf = new Map([[path[k] as string, leaf]]);
      merge(tree, path[0] as string, leaf);
      if (src[i] !== ',') break;
      i++;
    }
    return tree;
  };
  const tree = list();
  if (i !== src.length) throw new FieldsError(`Invalid field selection ${text}`);
  return tree;
}

function merge(tree: FieldTree, key: string, leaf: FieldTree | true): void {
  const existing = tree.get(key);
  if (existing === true || leaf === true || existing === undefined) {
    tree.set(key, existing === true || leaf === true ? true : leaf);
    return;
  }
  for (const [k, v] of leaf) merge(existing, k, v);
}

/** Keeps only the selected fields; arrays are filtered element by element. */
export function applyFields(value: unknown, tree: FieldTree | '*' | true): unknown {
  if (tree === true || tree === '*') return value;
  if (Array.isArray(value)) return value.map((v) => applyFields(v, tree));
  if (!value || typeof value !== 'object') return value;
  if (tree.get('*') === true) return value;
  const out: Record<string, unknown> = {};
  for (const [k, sub] of tree) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = applyFields(v, sub);
  }
  return out;
}
