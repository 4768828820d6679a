import { randomBytes } from 'node:crypto';
import {
  bodyEnd,
  type DocBody,
  DocsRequestError,
  type DocumentModel,
  deleteRange,
  headingId,
  insertText,
  type ParagraphProps,
  paragraphsIn,
  replaceAll,
  restyle,
  revisionId,
  stripControl,
  type TextStyle,
  updateParagraphProps,
} from './model.js';

// documents.batchUpdate: the write control, then each request in turn, all or nothing.

const TEXT_STYLE_FIELDS = new Set([
  'bold',
  'italic',
  'underline',
  'strikethrough',
  'smallCaps',
  'backgroundColor',
  'foregroundColor',
  'fontSize',
  'weightedFontFamily',
  'baselineOffset',
  'link',
]);

const BULLET_GLYPHS: Record<string, string[]> = {
  BULLET_DISC_CIRCLE_SQUARE: ['●', '○', '■'],
  BULLET_DIAMONDX_ARROW3D_SQUARE: ['❖', '➢', '■'],
  BULLET_CHECKBOX: ['☐'],
  BULLET_ARROW_DIAMOND_DISC: ['➔', '◆', '●'],
  BULLET_STAR_CIRCLE_SQUARE: ['★', '○', '■'],
  BULLET_ARROW3D_CIRCLE_SQUARE: ['➢', '○', '■'],
  BULLET_LEFTTRIANGLE_DIAMOND_DISC: ['◀', '◆', '●'],
  BULLET_DIAMONDX_HOLLOWDIAMOND_SQUARE: ['❖', '◇', '■'],
  BULLET_DIAMOND_CIRCLE_SQUARE: ['◆', '○', '■'],
  NUMBERED_DECIMAL_ALPHA_ROMAN: ['%0.', '%1.', '%2.'],
  NUMBERED_DECIMAL_ALPHA_ROMAN_PARENS: ['%0)', '%1)', '%2)'],
  NUMBERED_DECIMAL_NESTED: ['%0.', '%0.%1.', '%0.%1.%2.'],
  NUMBERED_UPPERALPHA_ALPHA_ROMAN: ['%0.', '%1.', '%2.'],
  NUMBERED_UPPERROMAN_UPPERALPHA_DECIMAL: ['%0.', '%1.', '%2.'],
  NUMBERED_ZERODECIMAL_ALPHA_ROMAN: ['%0.', '%1.', '%2.'],
};

/** Requests Google knows that this emulator does not model; refused rather than silently ignored. */
const UNSUPPORTED = new Set([
  'insertTable',
  'insertTableRow',
  'insertTableColumn',
  'deleteTableRow',
  'deleteTableColumn',
  'insertInlineImage',
  'replaceImage',
  'createNamedRange',
  'deleteNamedRange',
  'replaceNamedRangeContent',
  'insertPageBreak',
  'insertSectionBreak',
  'createHeader',
  'createFooter',
  'deleteHeader',
  'deleteFooter',
  'createFootnote',
  'deletePositionedObject',
  'updateTableColumnProperties',
  'updateTableCellStyle',
  'updateTableRowStyle',
  'mergeTableCells',
  'unmergeTableCells',
  'pinTableHeaderRows',
  'updateDocumentStyle',
  'updateSectionStyle',
  'insertPerson',
  'insertDate',
  'addDocumentTab',
  'deleteTab',
  'updateDocumentTabProperties',
]);

function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v)
    ? v
    : typeof v === 'string' && /^-?\d+$/.test(v)
      ? Number(v)
      : undefined;
}

function fieldList(v: unknown, where: string): string[] {
  const fields =
    typeof v === 'string'
      ? v
          .split(',')
          .map((f) => f.trim())
          .filter(Boolean)
      : [];
  if (fields.length === 0) {
    throw new DocsRequestError(
      `Invalid ${where}: At least one field must be listed in 'fields'. To update all fields use '*'.`,
    );
  }
  return fields;
}

function checkSegment(target: Record<string, unknown> | undefined, where: string): void {
  const segment = target?.segmentId;
  if (typeof segment === 'string' && segment !== '') {
    throw new DocsRequestError(`Invalid ${where}: The segment ID ${segment} is not valid.`);
  }
  const tab = target?.tabId;
  if (typeof tab === 'string' && tab !== '' && tab !== 't.0') {
    throw new DocsRequestError(`Invalid ${where}: The tab ID ${tab} is not valid.`);
  }
}

/** Checks a [start, end) range inside the body; `allowFinalNewline` for styling requests. */
function checkRange(
  body: DocBody,
  range: Record<string, unknown> | undefined,
  where: string,
  allowFinalNewline: boolean,
): [number, number] {
  checkSegment(range, where);
  const start = int(range?.startIndex) ?? 0;
  const end = int(range?.endIndex) ?? 0;
  const segEnd = bodyEnd(body);
  if (start < 1)
    throw new DocsRequestError(`Invalid ${where}: Index ${start} must be greater than or equal to 1.`);
  if (end > segEnd) {
    throw new DocsRequestError(
      `Invalid ${where}: Index ${end} must be less than the end index of the referenced segment, ${segEnd}.`,
    );
  }
  if (start === end) throw new DocsRequestError(`Invalid ${where}: The range should not be empty.`);
  if (start > end) {
    throw new DocsRequestError(
      `Invalid ${where}: The start index of the range (${start}) must not be greater than the end index (${end}).`,
    );
  }
  if (!allowFinalNewline && end === segEnd) {
    throw new DocsRequestError(
      `Invalid ${where}: The range cannot include the newline character at the end of the segment.`,
    );
  }
  return [start, end];
}

export function batchUpdate(doc: DocumentModel, body: Record<string, unknown>): Record<string, unknown> {
  const control = (body.writeControl ?? {}) as Record<string, unknown>;
  if (typeof control.requiredRevisionId === 'string' && typeof control.targetRevisionId === 'string') {
    throw new DocsRequestError(
      "Invalid value at 'write_control': only one of requiredRevisionId and targetRevisionId may be set.",
    );
  }
  if (typeof control.requiredRevisionId === 'string' && control.requiredRevisionId !== doc.revisionId) {
    throw new DocsRequestError(
      `The required revision ID ${control.requiredRevisionId} does not match the latest revision of the document.`,
      'FAILED_PRECONDITION',
    );
  }
  if (
    typeof control.targetRevisionId === 'string' &&
    control.targetRevisionId !== doc.revisionId &&
    !doc.pastRevisions.includes(control.targetRevisionId)
  ) {
    throw new DocsRequestError(
      `The target revision ID ${control.targetRevisionId} is not valid for this document.`,
    );
  }
  const requests = Array.isArray(body.requests) ? (body.requests as Array<Record<string, unknown>>) : [];
  if (requests.length === 0) throw new DocsRequestError('Must specify at least one request.');
  // All or nothing: work on a copy and keep it only when every request applied.
  const work = { body: structuredClone(doc.body), lists: structuredClone(doc.lists) };
  const replies = requests.map((r, i) => applyRequest(work, r, i, doc.documentId));
  doc.body = work.body;
  doc.lists = work.lists;
  doc.pastRevisions = [...doc.pastRevisions.slice(-19), doc.revisionId];
  doc.revisionId = revisionId();
  return { replies, writeControl: { requiredRevisionId: doc.revisionId }, documentId: doc.documentId };
}

/** The document copy a batch works on. */
interface Work {
  body: DocBody;
  lists: DocumentModel['lists'];
}

function applyRequest(
  work: Work,
  request: Record<string, unknown>,
  i: number,
  documentId: string,
): Record<string, unknown> {
  const kinds = Object.keys(request).filter((k) => request[k] !== undefined && request[k] !== null);
  if (kinds.length === 0) throw new DocsRequestError(`Invalid requests[${i}]: No request set.`);
  if (kinds.length > 1) {
    throw new DocsRequestError(
      `Invalid JSON payload received. Oneof field 'request' is already set. Cannot set '${kinds[1]}'`,
    );
  }
  const kind = kinds[0] as string;
  const r = request[kind] as Record<string, unknown>;
  const where = `requests[${i}].${kind}`;
  const body = work.body;
  const newHeading = () => headingId(`${documentId}:${randomBytes(8).toString('hex')}`);
  switch (kind) {
    case 'insertText':
      insertTextRequest(body, r, where, newHeading);
      return {};
    case 'deleteContentRange': {
      const [start, end] = checkRange(body, r.range as Record<string, unknown> | undefined, where, false);
      deleteRange(body, start, end);
      return {};
    }
    case 'replaceAllText': {
      const contains = (r.containsText ?? {}) as Record<string, unknown>;
      const find = typeof contains.text === 'string' ? contains.text : '';
      if (find === '') throw new DocsRequestError(`Invalid ${where}: The search text must not be empty.`);
      const replacement = stripControl(typeof r.replaceText === 'string' ? r.replaceText : '');
      const n = replaceAll(body, find, replacement, contains.matchCase === true, newHeading);
      // proto3 JSON leaves out a zero count.
      return { replaceAllText: n > 0 ? { occurrencesChanged: n } : {} };
    }
    case 'updateTextStyle':
      updateTextStyle(body, r, where);
      return {};
    case 'updateParagraphStyle': {
      const [start, end] = checkRange(body, r.range as Record<string, unknown> | undefined, where, true);
      const fields = fieldList(r.fields, where);
      const style = (r.paragraphStyle ?? {}) as Record<string, unknown>;
      for (const p of paragraphsIn(body, start, end)) {
        updateParagraphProps(body.paragraphs[p] as ParagraphProps, style, fields, newHeading);
      }
      return {};
    }
    case 'createParagraphBullets':
      createParagraphBullets(work, r, where, i);
      return {};
    case 'deleteParagraphBullets': {
      const [start, end] = checkRange(body, r.range as Record<string, unknown> | undefined, where, true);
      for (const p of paragraphsIn(body, start, end)) delete (body.paragraphs[p] as ParagraphProps).bullet;
      return {};
    }
    default:
      if (UNSUPPORTED.has(kind)) {
        throw new DocsRequestError(
          `Invalid ${where}: This request is not supported by the Portico emulator.`,
        );
      }
      throw new DocsRequestError(
        `Invalid JSON payload received. Unknown name "${kind}" at 'requests[${i}]': Cannot find field.`,
      );
  }
}

/** Inserts at a location inside a paragraph, or at the end of the body. */
function insertTextRequest(
  body: DocBody,
  r: Record<string, unknown>,
  where: string,
  newHeading: () => string,
): void {
  const location = r.location as Record<string, unknown> | undefined;
  const eos = r.endOfSegmentLocation as Record<string, unknown> | undefined;
  if (!location && !eos) {
    throw new DocsRequestError(
      `Invalid ${where}: Must specify either a location or end of segment location.`,
    );
  }
  checkSegment(location ?? eos, where);
  const segEnd = bodyEnd(body);
  const index = location ? (int(location.index) ?? 0) : segEnd - 1;
  if (index >= segEnd) {
    throw new DocsRequestError(
      `Invalid ${where}: Index ${index} must be less than the end index of the referenced segment, ${segEnd}.`,
    );
  }
  if (index < 1) {
    throw new DocsRequestError(
      `Invalid ${where}: The insertion index must be inside the bounds of an existing paragraph. You can still create new paragraphs by inserting newlines.`,
    );
  }
  const text = stripControl(typeof r.text === 'string' ? r.text : '');
  if (text !== '') insertText(body, index, text, newHeading);
}

/** Sets the `fields` of the text style over a range; a field the request leaves out is cleared. */
function updateTextStyle(body: DocBody, r: Record<string, unknown>, where: string): void {
  const [start, end] = checkRange(body, r.range as Record<string, unknown> | undefined, where, true);
  const fields = fieldList(r.fields, where);
  const given = (r.textStyle ?? {}) as TextStyle;
  for (const f of fields) {
    if (f !== '*' && !TEXT_STYLE_FIELDS.has(f.split('.')[0] as string)) {
      throw new DocsRequestError(`Invalid ${where}: Invalid field: ${f}`);
    }
  }
  restyle(body, start, end, (old) => {
    if (fields.includes('*')) return structuredClone(given);
    const next = { ...old };
    for (const f of fields) {
      const top = f.split('.')[0] as string;
      if (given[top] === undefined) delete next[top];
      else next[top] = structuredClone(given[top]);
    }
    return next;
  });
}

/** Makes a new list with the preset's glyphs (nine nesting levels) and puts the range's paragraphs in it. */
function createParagraphBullets(work: Work, r: Record<string, unknown>, where: string, i: number): void {
  const body = work.body;
  const [start, end] = checkRange(body, r.range as Record<string, unknown> | undefined, where, true);
  const preset = typeof r.bulletPreset === 'string' ? r.bulletPreset : '';
  const glyphs = BULLET_GLYPHS[preset];
  if (!glyphs) {
    throw new DocsRequestError(
      `Invalid value at 'requests[${i}].create_paragraph_bullets.bullet_preset' (type.googleapis.com/google.apps.docs.v1.CreateParagraphBulletsRequest.BulletGlyphPreset), "${preset}"`,
    );
  }
  const listId = `kix.${randomBytes(6).toString('hex')}`;
  work.lists[listId] = {
    glyphs: Array.from({ length: 9 }, (_, level) => glyphs[level % glyphs.length] as string),
  };
  for (const p of paragraphsIn(body, start, end)) (body.paragraphs[p] as ParagraphProps).bullet = { listId };
}
