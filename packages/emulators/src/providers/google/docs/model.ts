/**
 * A Google Doc's body as the Docs API indexes it: one UTF-16 string after the section break
 * (index 0), every paragraph ending in "\n". Text is kept as styled runs; paragraph properties
 * belong to the paragraph's closing newline, in order, so the k-th newline carries paragraph k.
 */

import { createHash, randomBytes } from 'node:crypto';

export type TextStyle = Record<string, unknown>;
export type ParagraphStyle = Record<string, unknown>;

export interface Run {
  text: string;
  /** Canonical JSON of the style, so equal styles compare equal and runs merge. */
  style: string;
}

export interface ParagraphProps {
  style: ParagraphStyle;
  bullet?: { listId: string; nestingLevel?: number };
}

export interface DocBody {
  runs: Run[];
  /** One per "\n" in the body, in order. */
  paragraphs: ParagraphProps[];
}

export interface DocumentModel {
  documentId: string;
  title: string;
  body: DocBody;
  lists: Record<string, { glyphs: string[] }>;
  revisionId: string;
  /** Earlier revisions still accepted as `targetRevisionId`. */
  pastRevisions: string[];
}

/** Revision ids look like Google's; a seed makes one that never changes. */
export function revisionId(seed?: string): string {
  const bytes = seed ? createHash('sha256').update(seed).digest() : randomBytes(32);
  return `ALBJ4L${bytes.toString('base64url')}`;
}

/** A heading paragraph's id, as Docs gives every heading one; a seed makes one that never changes. */
export function headingId(seed?: string): string {
  const bytes = seed ? createHash('sha256').update(seed).digest() : randomBytes(16);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `h.${[...bytes.subarray(0, 12)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

/** A batchUpdate request Google refuses; the message is sent as is with a 400. */
export class DocsRequestError extends Error {
  constructor(
    message: string,
    readonly status: 'INVALID_ARGUMENT' | 'FAILED_PRECONDITION' = 'INVALID_ARGUMENT',
  ) {
    super(message);
  }
}

export function styleKey(style: TextStyle): string {
  const sorted = Object.keys(style)
    .sort()
    .reduce<Record<string, unknown>>((o, k) => {
      if (style[k] !== undefined) o[k] = style[k];
      return o;
    }, {});
  return JSON.stringify(sorted);
}

export const PLAIN = styleKey({});

export function bodyText(body: DocBody): string {
  return body.runs.map((r) => r.text).join('');
}

/** End index of the body segment: one past its final newline. */
export function bodyEnd(body: DocBody): number {
  return 1 + body.runs.reduce((n, r) => n + r.text.length, 0);
}

function normalize(body: DocBody): void {
  const out: Run[] = [];
  for (const r of body.runs) {
    if (r.text === '') continue;
    const last = out[out.length - 1];
    if (last && last.style === r.style) last.text += r.text;
    else out.push({ ...r });
  }
  body.runs = out;
}

/** Ensures a run boundary at body offset `at` (0-based into the text) and returns the run position. */
function splitAt(body: DocBody, at: number): number {
  let pos = 0;
  for (let i = 0; i < body.runs.length; i++) {
    const run = body.runs[i] as Run;
    if (at === pos) return i;
    if (at < pos + run.text.length) {
      const cut = at - pos;
      body.runs.splice(
        i,
        1,
        { text: run.text.slice(0, cut), style: run.style },
        { text: run.text.slice(cut), style: run.style },
      );
      return i + 1;
    }
    pos += run.text.length;
  }
  return body.runs.length;
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Index of the paragraph holding body offset `at` (the number of newlines before it). */
export function paragraphIndexAt(body: DocBody, at: number): number {
  return countNewlines(bodyText(body).slice(0, at));
}

/** The style a character inserted at `at` takes: that of the character before it in its paragraph, else after. */
function inheritedStyle(body: DocBody, at: number): string {
  const text = bodyText(body);
  const lookAt = at > 0 && text[at - 1] !== '\n' ? at - 1 : at;
  let pos = 0;
  for (const r of body.runs) {
    if (lookAt < pos + r.text.length) return r.style;
    pos += r.text.length;
  }
  return body.runs[body.runs.length - 1]?.style ?? PLAIN;
}

const HEADING_TYPES = new Set([
  'TITLE',
  'SUBTITLE',
  'HEADING_1',
  'HEADING_2',
  'HEADING_3',
  'HEADING_4',
  'HEADING_5',
  'HEADING_6',
]);

/** Inserts text at a document index; newlines split the paragraph, each part keeping its style. */
export function insertText(body: DocBody, index: number, text: string, newHeadingId: () => string): void {
  const at = index - 1;
  const style = inheritedStyle(body, at);
  const para = paragraphIndexAt(body, at);
  const pos = splitAt(body, at);
  body.runs.splice(pos, 0, { text, style });
  const added = countNewlines(text);
  if (added > 0) {
    const base = body.paragraphs[para] as ParagraphProps;
    const copies = Array.from({ length: added }, () => cloneProps(base));
    // The paragraph keeps its heading id on its first part; later parts are new headings.
    body.paragraphs.splice(para, 0, ...copies);
    for (let i = para + 1; i <= para + added; i++) {
      const p = body.paragraphs[i] as ParagraphProps;
      if (p.style.headingId !== undefined) p.style.headingId = newHeadingId();
    }
  }
  normalize(body);
}

function cloneProps(p: ParagraphProps): ParagraphProps {
  return structuredClone(p);
}

/** Deletes [startIndex, endIndex). Paragraphs whose newline goes are merged into the next. */
export function deleteRange(body: DocBody, startIndex: number, endIndex: number): void {
  const s = startIndex - 1;
  const e = endIndex - 1;
  const text = bodyText(body);
  const removed = countNewlines(text.slice(s, e));
  if (removed > 0) {
    const first = paragraphIndexAt(body, s);
    const startsParagraph = s === 0 || text[s - 1] === '\n';
    const survivor = body.paragraphs[first + removed] as ParagraphProps;
    // Joining the tail of one paragraph onto another keeps the first one's style, as the editor
    // does; deleting whole paragraphs leaves the following paragraph as it was.
    const props = startsParagraph ? survivor : (body.paragraphs[first] as ParagraphProps);
    body.paragraphs.splice(first, removed + 1, props);
  }
  const a = splitAt(body, s);
  const b = splitAt(body, e);
  body.runs.splice(a, b - a);
  normalize(body);
}

/** Applies `fields` of `style` to the text in [startIndex, endIndex). */
export function restyle(
  body: DocBody,
  startIndex: number,
  endIndex: number,
  update: (s: TextStyle) => TextStyle,
): void {
  const a = splitAt(body, startIndex - 1);
  const b = splitAt(body, endIndex - 1);
  for (let i = a; i < b; i++) {
    const run = body.runs[i] as Run;
    run.style = styleKey(update(JSON.parse(run.style) as TextStyle));
  }
  normalize(body);
}

/** Paragraph indexes overlapping [startIndex, endIndex). */
export function paragraphsIn(body: DocBody, startIndex: number, endIndex: number): number[] {
  const first = paragraphIndexAt(body, startIndex - 1);
  const last = paragraphIndexAt(body, Math.max(startIndex, endIndex - 1) - 1);
  const out: number[] = [];
  for (let i = first; i <= last && i < body.paragraphs.length; i++) out.push(i);
  return out;
}

export function updateParagraphProps(
  p: ParagraphProps,
  style: ParagraphStyle,
  fields: string[],
  newHeadingId: () => string,
): void {
  const all = fields.includes('*');
  const names = all ? Object.keys(style) : fields;
  if (all) {
    for (const k of Object.keys(p.style))
      if (k !== 'headingId' && k !== 'direction' && k !== 'namedStyleType') delete p.style[k];
  }
  for (const f of names) {
    const top = f.split('.')[0] as string;
    if (top === 'headingId') continue;
    if (style[top] === undefined) {
      if (top === 'namedStyleType') p.style.namedStyleType = 'NORMAL_TEXT';
      else delete p.style[top];
    } else {
      p.style[top] = structuredClone(style[top]);
    }
  }
  const type = String(p.style.namedStyleType ?? 'NORMAL_TEXT');
  if (HEADING_TYPES.has(type)) p.style.headingId ??= newHeadingId();
  else delete p.style.headingId;
}

/**
 * Replaces every occurrence of `find` in each paragraph (matches never span paragraphs).
 * The replacement takes the style of the match's first character.
 */
export function replaceAll(
  body: DocBody,
  find: string,
  replacement: string,
  matchCase: boolean,
  newHeadingId: () => string,
): number {
  const text = bodyText(body);
  // A regex keeps match offsets in the original string's UTF-16 units, whatever case folding does.
  const pattern = new RegExp(find.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), matchCase ? 'gu' : 'giu');
  const hits: Array<{ at: number; length: number }> = [];
  for (const m of text.matchAll(pattern)) {
    if (!m[0].includes('\n') && m[0].length > 0) hits.push({ at: m.index, length: m[0].length });
  }
  if (hits.length === 0) return 0;
  if (replacement.includes('\n')) {
    // New paragraphs: take the general path, from the end so earlier offsets stay valid.
    for (const { at, length } of [...hits].reverse()) {
      const style = styleOfChar(body, at);
      deleteRange(body, at + 1, at + 1 + length);
      insertText(body, at + 1, replacement, newHeadingId);
      restyle(body, at + 1, at + 1 + replacement.length, () => JSON.parse(style) as TextStyle);
    }
    return hits.length;
  }
  // One pass over the runs: paragraphs are untouched because matches never hold a newline.
  const out: Run[] = [];
  let runIndex = 0;
  let runStart = 0;
  const copy = (from: number, to: number) => {
    while (from < to) {
      let run = body.runs[runIndex] as Run;
      while (from >= runStart + run.text.length) {
        runStart += run.text.length;
        runIndex++;
        run = body.runs[runIndex] as Run;
      }
      const end = Math.min(to, runStart + run.text.length);
      out.push({ text: run.text.slice(from - runStart, end - runStart), style: run.style });
      from = end;
    }
  };
  let pos = 0;
  for (const { at, length } of hits) {
    copy(pos, at);
    out.push({ text: replacement, style: styleOfChar(body, at) });
    pos = at + length;
  }
  copy(pos, text.length);
  body.runs = out;
  normalize(body);
  return hits.length;
}

function styleOfChar(body: DocBody, at: number): string {
  let pos = 0;
  for (const r of body.runs) {
    if (at < pos + r.text.length) return r.style;
    pos += r.text.length;
  }
  return PLAIN;
}

/** Characters the Docs API strips from inserted text: C0 controls other than tab and newline, and the BMP private use area. */
export function stripControl(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    const stripped =
      (c <= 0x08 || (c >= 0x0c && c <= 0x1f) || (c >= 0xe000 && c <= 0xf8ff)) && ch.length === 1;
    if (!stripped) out += ch;
  }
  return out;
}
