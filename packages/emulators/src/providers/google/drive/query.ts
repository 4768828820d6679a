/**
 * Drive's search language (`q` of files.list): comparisons joined with and/or/not and parentheses,
 * string literals in single quotes with `\'` and `\\` escapes.
 */

export interface QueryFile {
  name: string;
  mimeType: string;
  parents: string[];
  trashed: boolean;
  starred: boolean;
  description?: string;
  modifiedTime: string;
  createdTime: string;
  ownerEmails: string[];
  /** Text the fullText operator searches besides name and description. */
  text?: string;
  properties?: Record<string, string>;
  appProperties?: Record<string, string>;
}

export type DrivePredicate = (file: QueryFile) => boolean;

export class DriveQueryError extends Error {}

type Token =
  | { kind: 'string'; value: string }
  | { kind: 'word'; value: string }
  | { kind: 'op'; value: string }
  | { kind: 'punct'; value: '(' | ')' | '{' | '}' };

function tokenize(q: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'" || c === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= q.length) throw new DriveQueryError('unterminated string');
        const d = q[i] as string;
        if (d === '\\') {
          const next = q[i + 1];
          if (next === undefined) throw new DriveQueryError('dangling escape');
          value += next;
          i += 2;
        } else if (d === c) {
          i++;
          break;
        } else {
          value += d;
          i++;
        }
      }
      tokens.push({ kind: 'string', value });
    } else if (c === '(' || c === ')' || c === '{' || c === '}') {
      tokens.push({ kind: 'punct', value: c });
      i++;
    } else if (c === '!' || c === '<' || c === '>' || c === '=') {
      const two = q.slice(i, i + 2);
      const op = two === '!=' || two === '<=' || two === '>=' ? two : c;
      if (op === '!') throw new DriveQueryError('bad operator');
      tokens.push({ kind: 'op', value: op });
      i += op.length;
    } else {
      const m = /^[A-Za-z0-9_.:+-]+/.exec(q.slice(i));
      if (!m) throw new DriveQueryError(`unexpected character ${c}`);
      tokens.push({ kind: 'word', value: m[0] });
      i += m[0].length;
    }
  }
  return tokens;
}

const STRING_FIELDS = new Set(['name', 'mimeType', 'fullText']);
const TIME_FIELDS = new Set(['modifiedTime', 'createdTime', 'viewedByMeTime', 'sharedWithMeTime']);
const BOOL_FIELDS = new Set(['trashed', 'starred', 'sharedWithMe', 'hidden']);
const COLLECTIONS = new Set(['parents', 'owners', 'writers', 'readers']);

/** Drive's `contains` on names matches the start of a word, case-insensitively. */
function namePrefixMatch(name: string, term: string): boolean {
  const n = name.toLowerCase();
  const t = term.toLowerCase();
  if (t === '') return true;
  let at = n.indexOf(t);
  while (at >= 0) {
    if (at === 0 || !/[\p{L}\p{N}]/u.test(n[at - 1] as string)) return true;
    at = n.indexOf(t, at + 1);
  }
  return false;
}

function parseTime(text: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?$/.test(text)
    ? Date.parse(/T/.test(text) && !/([Zz]|[+-]\d{2}:\d{2})$/.test(text) ? `${text}Z` : text)
    : Number.NaN;
  if (Number.isNaN(ms)) throw new DriveQueryError(`bad time ${text}`);
  return ms;
}

function compare(op: string, a: number | string, b: number | string): boolean {
  switch (op) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      return false;
  }
}

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly rootId: string,
  ) {}

  parse(): DrivePredicate {
    const expr = this.or();
    if (this.pos !== this.tokens.length) throw new DriveQueryError('trailing input');
    return expr;
  }

  private peekWord(word: string): boolean {
    const t = this.tokens[this.pos];
    return t?.kind === 'word' && t.value.toLowerCase() === word;
  }

  private next(): Token {
    const t = this.tokens[this.pos++];
    if (!t) throw new DriveQueryError('unexpected end');
    return t;
  }

  private or(): DrivePredicate {
    const parts = [this.and()];
    while (this.peekWord('or')) {
      this.pos++;
      parts.push(this.and());
    }
    return parts.length === 1 ? (parts[0] as DrivePredicate) : (f) => parts.some((p) => p(f));
  }

  private and(): DrivePredicate {
    const parts = [this.unary()];
    while (this.peekWord('and')) {
      this.pos++;
      parts.push(this.unary());
    }
    return parts.length === 1 ? (parts[0] as DrivePredicate) : (f) => parts.every((p) => p(f));
  }

  private unary(): DrivePredicate {
    if (this.peekWord('not')) {
      this.pos++;
      const inner = this.unary();
      return (f) => !inner(f);
    }
    const t = this.tokens[this.pos];
    if (t?.kind === 'punct' && t.value === '(') {
      this.pos++;
      const inner = this.or();
      const close = this.next();
      if (close.kind !== 'punct' || close.value !== ')') throw new DriveQueryError('missing )');
      return inner;
    }
    return this.term();
  }

  private term(): DrivePredicate {
    const first = this.next();
    if (first.kind === 'string') {
      // 'value' in collection
      const inWord = this.next();
      if (inWord.kind !== 'word' || inWord.value.toLowerCase() !== 'in')
        throw new DriveQueryError('expected in');
      const field = this.next();
      if (field.kind !== 'word' || !COLLECTIONS.has(field.value)) throw new DriveQueryError('bad collection');
      const value = first.value === 'root' && field.value === 'parents' ? this.rootId : first.value;
      switch (field.value) {
        case 'parents':
          return (f) => f.parents.some((p) => (p === 'root' ? this.rootId : p) === value);
        case 'owners':
        case 'writers':
        case 'readers':
          // Every emulated file is private to its owner, who is also its only writer and reader.
          return (f) => f.ownerEmails.some((e) => e.toLowerCase() === value.toLowerCase());
      }
      throw new DriveQueryError('bad collection');
    }
    if (first.kind !== 'word') throw new DriveQueryError('expected field');
    const field = first.value;
    if (field === 'properties' || field === 'appProperties') return this.hasProperty(field);
    const opToken = this.next();
    const op =
      opToken.kind === 'op' ? opToken.value : opToken.kind === 'word' ? opToken.value.toLowerCase() : '';
    const valueToken = this.next();

    if (STRING_FIELDS.has(field)) {
      if (valueToken.kind !== 'string') throw new DriveQueryError('expected string');
      const v = valueToken.value;
      if (field === 'fullText') {
        if (op !== 'contains') throw new DriveQueryError('fullText supports contains');
        const needle = v.toLowerCase();
        return (f) =>
          [f.name, f.description ?? '', f.text ?? ''].some((s) => s.toLowerCase().includes(needle));
      }
      const get = (f: QueryFile) => (field === 'name' ? f.name : f.mimeType);
      if (op === 'contains') {
        return field === 'name' ? (f) => namePrefixMatch(f.name, v) : (f) => f.mimeType.includes(v);
      }
      if (op === '=' || op === '!=') return (f) => compare(op, get(f), v);
      throw new DriveQueryError(`bad operator ${op} for ${field}`);
    }
    if (TIME_FIELDS.has(field)) {
      if (valueToken.kind !== 'string') throw new DriveQueryError('expected date');
      const at = parseTime(valueToken.value);
      if (!['=', '!=', '<', '<=', '>', '>='].includes(op)) throw new DriveQueryError('bad time operator');
      const get = (f: QueryFile) =>
        field === 'modifiedTime'
          ? Date.parse(f.modifiedTime)
          : field === 'createdTime'
            ? Date.parse(f.createdTime)
            : 0;
      return (f) => compare(op, get(f), at);
    }
    if (BOOL_FIELDS.has(field)) {
      if (valueToken.kind !== 'word' || !/^(true|false)$/i.test(valueToken.value)) {
        throw new DriveQueryError('expected boolean');
      }
      if (op !== '=' && op !== '!=') throw new DriveQueryError('bad boolean operator');
      const want = valueToken.value.toLowerCase() === 'true';
      const get = (f: QueryFile) =>
        field === 'trashed' ? f.trashed : field === 'starred' ? f.starred : false;
      return (f) => compare(op, get(f) ? 1 : 0, want ? 1 : 0);
    }
    throw new DriveQueryError(`unknown field ${field}`);
  }

  /** properties has { key='k' and value='v' } */
  private hasProperty(field: 'properties' | 'appProperties'): DrivePredicate {
    const has = this.next();
    if (has.kind !== 'word' || has.value.toLowerCase() !== 'has') throw new DriveQueryError('expected has');
    const expect = (kind: Token['kind'], value?: string) => {
      const t = this.next();
      if (t.kind !== kind || (value !== undefined && t.value.toLowerCase() !== value))
        throw new DriveQueryError('bad has');
      return t.value;
    };
    expect('punct', '{');
    expect('word', 'key');
    expect('op', '=');
    const key = expect('string');
    expect('word', 'and');
    expect('word', 'value');
    expect('op', '=');
    const value = expect('string');
    expect('punct', '}');
    return (f) => f[field]?.[key] === value;
  }
}

/** Compiles `q`; throws DriveQueryError when Drive would answer 400 Invalid Value. */
export function compileDriveQuery(q: string, rootId: string): DrivePredicate {
  const tokens = tokenize(q);
  if (tokens.length === 0) return () => true;
  return new Parser(tokens, rootId).parse();
}
