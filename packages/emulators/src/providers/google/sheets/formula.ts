import { parseCells } from './a1.js';

/**
 * A small spreadsheet formula engine: enough of Sheets' language (arithmetic, comparison, `&`,
 * cell and range references across sheets, common functions) for seeded and test formulas to
 * compute the value Google would show. Unknown functions answer #NAME? as Sheets does.
 */

export type SheetErrorType =
  | 'ERROR'
  | 'NULL_VALUE'
  | 'DIVIDE_BY_ZERO'
  | 'VALUE'
  | 'REF'
  | 'NAME'
  | 'NUM'
  | 'N_A';

export interface SheetError {
  error: SheetErrorType;
  message: string;
}

/** A computed value; null is an empty cell. */
export type CellValue = number | string | boolean | SheetError | null;

export const ERROR_TEXT: Record<SheetErrorType, string> = {
  ERROR: '#ERROR!',
  NULL_VALUE: '#NULL!',
  DIVIDE_BY_ZERO: '#DIV/0!',
  VALUE: '#VALUE!',
  REF: '#REF!',
  NAME: '#NAME?',
  NUM: '#NUM!',
  N_A: '#N/A',
};

export function isError(v: CellValue | CellValue[]): v is SheetError {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && 'error' in v;
}

function err(error: SheetErrorType, message: string): SheetError {
  return { error, message };
}

/** How the engine reads cells: by sheet title (undefined = the formula's own sheet). */
export interface FormulaScope {
  cell(sheet: string | undefined, row: number, col: number): CellValue;
  /** Grid size, to bound open ranges such as `A:A`; null when the sheet does not exist. */
  size(sheet: string | undefined): { rows: number; cols: number } | null;
}

type Node =
  | { t: 'num'; v: number }
  | { t: 'str'; v: string }
  | { t: 'bool'; v: boolean }
  | { t: 'ref'; sheet?: string; row: number; col: number }
  | { t: 'range'; sheet?: string; r1?: number; c1?: number; r2?: number; c2?: number }
  | { t: 'neg'; e: Node }
  | { t: 'pct'; e: Node }
  | { t: 'bin'; op: string; l: Node; r: Node }
  | { t: 'call'; name: string; args: Node[] };

type Token =
  | { k: 'num'; v: number }
  | { k: 'str'; v: string }
  | { k: 'name'; v: string; sheet?: string }
  | { k: 'op'; v: string };

class ParseError extends Error {}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (/[0-9.]/.test(ch)) {
      const m = /^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(src.slice(i));
      if (!m) throw new ParseError('bad number');
      // `1:3` row ranges start with digits; keep them as names so the range parser sees them.
      if (src[i + m[0].length] === ':' && /^[0-9]+$/.test(m[0])) {
        out.push({ k: 'name', v: m[0] });
      } else {
        out.push({ k: 'num', v: Number(m[0]) });
      }
      i += m[0].length;
      continue;
    }
    if (ch === '"') {
      let s = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new ParseError('unterminated string');
        if (src[i] === '"') {
          if (src[i + 1] === '"') {
            s += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        s += src[i];
        i++;
      }
      out.push({ k: 'str', v: s });
      continue;
    }
    if (ch === "'") {
      let title = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new ParseError('unterminated sheet name');
        if (src[i] === "'") {
          if (src[i + 1] === "'") {
            title += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        title += src[i];
        i++;
      }
      if (src[i] !== '!') throw new ParseError('expected !');
      i++;
      const m = /^[A-Za-z0-9_$]+/.exec(src.slice(i));
      if (!m) throw new ParseError('expected reference');
      out.push({ k: 'name', v: m[0], sheet: title });
      i += m[0].length;
      continue;
    }
    if (/[A-Za-z_$]/.test(ch)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$.]*/.exec(src.slice(i)) as RegExpExecArray;
      i += m[0].length;
      if (src[i] === '!') {
        i++;
        const r = /^[A-Za-z0-9_$]+/.exec(src.slice(i));
        if (!r) throw new ParseError('expected reference');
        out.push({ k: 'name', v: r[0], sheet: m[0] });
        i += r[0].length;
      } else {
        out.push({ k: 'name', v: m[0] });
      }
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '<>' || two === '<=' || two === '>=') {
      out.push({ k: 'op', v: two });
      i += 2;
      continue;
    }
    if ('+-*/^&=<>(),:%;'.includes(ch)) {
      out.push({ k: 'op', v: ch === ';' ? ',' : ch });
      i++;
      continue;
    }
    throw new ParseError(`unexpected ${ch}`);
  }
  return out;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.comparison();
    if (this.pos < this.tokens.length) throw new ParseError('trailing input');
    return node;
  }

  private peekOp(): string | undefined {
    const t = this.tokens[this.pos];
    return t?.k === 'op' ? t.v : undefined;
  }

  private comparison(): Node {
    let l = this.concat();
    for (let op = this.peekOp(); op && ['=', '<>', '<', '>', '<=', '>='].includes(op); op = this.peekOp()) {
      this.pos++;
      l = { t: 'bin', op, l, r: this.concat() };
    }
    return l;
  }

  private concat(): Node {
    let l = this.additive();
    while (this.peekOp() === '&') {
      this.pos++;
      l = { t: 'bin', op: '&', l, r: this.additive() };
    }
    return l;
  }

  private additive(): Node {
    let l = this.multiplicative();
    for (let op = this.peekOp(); op === '+' || op === '-'; op = this.peekOp()) {
      this.pos++;
      l = { t: 'bin', op, l, r: this.multiplicative() };
    }
    return l;
  }

  private multiplicative(): Node {
    let l = this.power();
    for (let op = this.peekOp(); op === '*' || op === '/'; op = this.peekOp()) {
      this.pos++;
      l = { t: 'bin', op, l, r: this.power() };
    }
    return l;
  }

  private power(): Node {
    let l = this.unary();
    while (this.peekOp() === '^') {
      this.pos++;
      l = { t: 'bin', op: '^', l, r: this.unary() };
    }
    return l;
  }

  private unary(): Node {
    const op = this.peekOp();
    if (op === '-') {
      this.pos++;
      return { t: 'neg', e: this.unary() };
    }
    if (op === '+') {
      this.pos++;
      return this.unary();
    }
    let e = this.primary();
    while (this.peekOp() === '%') {
      this.pos++;
      e = { t: 'pct', e };
    }
    return e;
  }

  private primary(): Node {
    const t = this.tokens[this.pos++];
    if (!t) throw new ParseError('unexpected end');
    if (t.k === 'num') return { t: 'num', v: t.v };
    if (t.k === 'str') return { t: 'str', v: t.v };
    if (t.k === 'op') {
      if (t.v !== '(') throw new ParseError(`unexpected ${t.v}`);
      const inner = this.comparison();
      const close = this.tokens[this.pos++];
      if (!(close?.k === 'op' && close.v === ')')) throw new ParseError('expected )');
      return inner;
    }
    if (this.peekOp() === '(' && t.sheet === undefined) {
      this.pos++;
      const args: Node[] = [];
      if (this.peekOp() === ')') this.pos++;
      else {
        for (;;) {
          args.push(this.comparison());
          const sep = this.tokens[this.pos++];
          if (sep?.k === 'op' && sep.v === ')') break;
          if (!(sep?.k === 'op' && sep.v === ',')) throw new ParseError('expected , or )');
        }
      }
      return { t: 'call', name: t.v.toUpperCase(), args };
    }
    if (this.peekOp() === ':') {
      this.pos++;
      const end = this.tokens[this.pos++];
      if (end?.k !== 'name') throw new ParseError('bad range');
      const cells = parseCells(`${t.v}:${end.v}`);
      if (!cells) throw new ParseError('bad range');
      return { t: 'range', ...(t.sheet !== undefined ? { sheet: t.sheet } : {}), ...rangeBounds(cells) };
    }
    const upper = t.v.toUpperCase();
    if (t.sheet === undefined && (upper === 'TRUE' || upper === 'FALSE'))
      return { t: 'bool', v: upper === 'TRUE' };
    const cells = parseCells(t.v);
    if (!cells || cells.startRow === undefined || cells.startCol === undefined) {
      return { t: 'call', name: '#NAMEREF', args: [{ t: 'str', v: t.v }] };
    }
    return {
      t: 'ref',
      ...(t.sheet !== undefined ? { sheet: t.sheet } : {}),
      row: cells.startRow,
      col: cells.startCol,
    };
  }
}

function rangeBounds(c: { startRow?: number; startCol?: number; endRow?: number; endCol?: number }) {
  const out: { r1?: number; c1?: number; r2?: number; c2?: number } = {};
  if (c.startRow !== undefined) out.r1 = c.startRow;
  if (c.startCol !== undefined) out.c1 = c.startCol;
  if (c.endRow !== undefined) out.r2 = c.endRow;
  if (c.endCol !== undefined) out.c2 = c.endCol;
  return out;
}

type Value = CellValue | CellValue[];

function toNumber(v: CellValue): number | SheetError {
  if (v === null) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isError(v)) return v;
  const trimmed = v.trim();
  if (trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed);
  return err(
    'VALUE',
    `Function expects number values. But '${v}' is a text and cannot be coerced to a number.`,
  );
}

function toText(v: CellValue): string | SheetError {
  if (v === null) return '';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'number') return formatGeneralNumber(v);
  if (isError(v)) return v;
  return v;
}

function toBool(v: CellValue): boolean | SheetError {
  if (v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (isError(v)) return v;
  const u = v.toUpperCase();
  if (u === 'TRUE' || u === 'FALSE') return u === 'TRUE';
  return err(
    'VALUE',
    `Function expects boolean values. But '${v}' is a text and cannot be coerced to a boolean.`,
  );
}

/** Sheets' "automatic" rendering of a number: up to 15 significant digits, no grouping. */
export function formatGeneralNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e15) return String(n);
  const s = Number(n.toPrecision(15)).toString();
  return s.replace('e+', 'E+').replace('e-', 'E-');
}

export class FormulaEngine {
  constructor(private readonly scope: FormulaScope) {}

  evaluate(formula: string): CellValue {
    let ast: Node;
    try {
      ast = new Parser(tokenize(formula.replace(/^=/, ''))).parse();
    } catch {
      return err('ERROR', 'Formula parse error.');
    }
    const v = this.eval(ast);
    if (Array.isArray(v)) return v.length === 1 ? (v[0] ?? null) : (v[0] ?? null);
    return v;
  }

  private eval(n: Node): Value {
    switch (n.t) {
      case 'num':
        return n.v;
      case 'str':
        return n.v;
      case 'bool':
        return n.v;
      case 'ref': {
        if (!this.scope.size(n.sheet)) return err('REF', `Unresolved sheet name '${n.sheet}'.`);
        return this.scope.cell(n.sheet, n.row, n.col);
      }
      case 'range': {
        const size = this.scope.size(n.sheet);
        if (!size) return err('REF', `Unresolved sheet name '${n.sheet}'.`);
        const values: CellValue[] = [];
        const r2 = Math.min(n.r2 ?? size.rows - 1, size.rows - 1);
        const c2 = Math.min(n.c2 ?? size.cols - 1, size.cols - 1);
        for (let r = n.r1 ?? 0; r <= r2; r++) {
          for (let c = n.c1 ?? 0; c <= c2; c++) values.push(this.scope.cell(n.sheet, r, c));
        }
        return values;
      }
      case 'neg': {
        const v = toNumber(this.scalar(n.e));
        return isError(v) ? v : -v;
      }
      case 'pct': {
        const v = toNumber(this.scalar(n.e));
        return isError(v) ? v : v / 100;
      }
      case 'bin':
        return this.binary(n.op, this.scalar(n.l), this.scalar(n.r));
      case 'call':
        return this.call(n.name, n.args);
    }
  }

  private scalar(n: Node): CellValue {
    const v = this.eval(n);
    if (!Array.isArray(v)) return v;
    if (v.length === 1) return v[0] ?? null;
    return err('VALUE', 'An array value could not be found.');
  }

  private binary(op: string, l: CellValue, r: CellValue): CellValue {
    if (isError(l)) return l;
    if (isError(r)) return r;
    if (op === '&') {
      const a = toText(l);
      const b = toText(r);
      if (isError(a)) return a;
      if (isError(b)) return b;
      return a + b;
    }
    if (['=', '<>', '<', '>', '<=', '>='].includes(op)) return compare(op, l, r);
    const a = toNumber(l);
    const b = toNumber(r);
    if (isError(a)) return a;
    if (isError(b)) return b;
    switch (op) {
      case '+':
        return a + b;
      case '-':
        return a - b;
      case '*':
        return a * b;
      case '/':
        return b === 0 ? err('DIVIDE_BY_ZERO', 'Function DIVIDE parameter 2 cannot be zero.') : a / b;
      case '^':
        return a ** b;
    }
    return err('ERROR', 'Formula parse error.');
  }

  /** Numbers of the arguments as aggregate functions see them: text and booleans in ranges are skipped. */
  private numbers(args: Node[]): number[] | SheetError {
    const out: number[] = [];
    for (const a of args) {
      const v = this.eval(a);
      if (Array.isArray(v)) {
        for (const x of v) {
          if (isError(x)) return x;
          if (typeof x === 'number') out.push(x);
        }
      } else {
        const num = toNumber(v);
        if (isError(num)) return num;
        out.push(num);
      }
    }
    return out;
  }

  private flat(args: Node[]): CellValue[] {
    return args.flatMap((a) => {
      const v = this.eval(a);
      return Array.isArray(v) ? v : [v];
    });
  }

  private call(name: string, args: Node[]): Value {
    const nums = () => this.numbers(args);
    switch (name) {
      case '#NAMEREF':
        return err('NAME', `Unknown range name: '${(args[0] as { v: string }).v}'.`);
      case 'SUM': {
        const v = nums();
        return isError(v) ? v : v.reduce((s, x) => s + x, 0);
      }
      case 'PRODUCT': {
        const v = nums();
        return isError(v) ? v : v.reduce((s, x) => s * x, 1);
      }
      case 'AVERAGE': {
        const v = nums();
        if (isError(v)) return v;
        if (v.length === 0)
          return err('DIVIDE_BY_ZERO', 'Evaluation of function AVERAGE caused a divide by zero error.');
        return v.reduce((s, x) => s + x, 0) / v.length;
      }
      case 'MIN':
      case 'MAX': {
        const v = nums();
        if (isError(v)) return v;
        if (v.length === 0) return 0;
        return v.reduce((m, x) => (name === 'MIN' ? Math.min(m, x) : Math.max(m, x)));
      }
      case 'COUNT':
        return this.flat(args).filter((x) => typeof x === 'number').length;
      case 'COUNTA':
        return this.flat(args).filter((x) => x !== null && x !== '').length;
      case 'ABS': {
        const v = toNumber(this.arg(args, 0));
        return isError(v) ? v : Math.abs(v);
      }
      case 'ROUND': {
        const v = toNumber(this.arg(args, 0));
        const d = args.length > 1 ? toNumber(this.arg(args, 1)) : 0;
        if (isError(v)) return v;
        if (isError(d)) return d;
        const f = 10 ** Math.trunc(d);
        return Math.round(v * f) / f;
      }
      case 'IF': {
        const c = toBool(this.arg(args, 0));
        if (isError(c)) return c;
        if (c) return args.length > 1 ? this.arg(args, 1) : true;
        return args.length > 2 ? this.arg(args, 2) : false;
      }
      case 'AND':
      case 'OR': {
        const bs: boolean[] = [];
        for (const x of this.flat(args)) {
          if (x === null) continue;
          const b = toBool(x);
          if (isError(b)) return b;
          bs.push(b);
        }
        return name === 'AND' ? bs.every(Boolean) : bs.some(Boolean);
      }
      case 'NOT': {
        const b = toBool(this.arg(args, 0));
        return isError(b) ? b : !b;
      }
      case 'CONCATENATE':
      case 'CONCAT': {
        let s = '';
        for (const x of this.flat(args)) {
          const t = toText(x);
          if (isError(t)) return t;
          s += t;
        }
        return s;
      }
      case 'LEN':
      case 'UPPER':
      case 'LOWER':
      case 'TRIM': {
        const t = toText(this.arg(args, 0));
        if (isError(t)) return t;
        if (name === 'LEN') return t.length;
        if (name === 'UPPER') return t.toUpperCase();
        if (name === 'LOWER') return t.toLowerCase();
        return t.trim().replace(/\s+/g, ' ');
      }
      default:
        return err('NAME', `Unknown function: '${name.toLowerCase()}'.`);
    }
  }

  private arg(args: Node[], i: number): CellValue {
    const a = args[i];
    return a ? this.scalar(a) : null;
  }
}

function compare(op: string, l: CellValue, r: CellValue): boolean {
  const rank = (v: CellValue) => (typeof v === 'number' || v === null ? 0 : typeof v === 'string' ? 1 : 2);
  let c: number;
  const lr = rank(l);
  const rr = rank(r);
  if (lr !== rr) c = lr - rr;
  else if (typeof l === 'string' && typeof r === 'string') c = l.toLowerCase().localeCompare(r.toLowerCase());
  else c = Number(l ?? 0) - Number(r ?? 0);
  switch (op) {
    case '=':
      return c === 0;
    case '<>':
      return c !== 0;
    case '<':
      return c < 0;
    case '>':
      return c > 0;
    case '<=':
      return c <= 0;
    default:
      return c >= 0;
  }
}
