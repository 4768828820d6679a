import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import {
  documentIdFrom,
  fileNativeDocument,
  randomDocumentId,
  setDriveText,
  touchDriveFile,
} from '../native-files.js';
import { lookupNative, query, rpcAuthorizer, sendMasked } from '../native-routes.js';
import { GOOGLE_API_SCOPES } from '../scopes.js';
import { type DriveFile, GOOGLE_MIME, googleErrorBody, sendGoogleError } from '../shared.js';
import type { DocsData, GoogleDataOf, GoogleUserData } from '../user-data.js';
import {
  bodyEnd,
  bodyText,
  type DocBody,
  DocsRequestError,
  type DocumentModel,
  deleteRange,
  insertText,
  type ParagraphProps,
  PLAIN,
  paragraphsIn,
  replaceAll,
  restyle,
  stripControl,
  styleKey,
  type TextStyle,
  updateParagraphProps,
} from './model.js';
import { documentJson } from './render.js';

export type { DocsData } from '../user-data.js';
export type { DocumentModel } from './model.js';

const BODY_LIMIT = 128 * 1024 * 1024;
const NOT_FOUND = 'Requested entity was not found.';

function revisionId(seed?: string): string {
  const bytes = seed ? createHash('sha256').update(seed).digest() : randomBytes(32);
  return `ALBJ4L${bytes.toString('base64url')}`;
}

function headingId(seed?: string): string {
  const bytes = seed ? createHash('sha256').update(seed).digest() : randomBytes(16);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `h.${[...bytes.subarray(0, 12)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

// ---- seed -----------------------------------------------------------------------------------

/** A paragraph of seed text: style type and runs (text, optional bold). */
type SeedParagraph = [string, Array<[string, TextStyle?]>];

function buildBody(paragraphs: SeedParagraph[], idSeed: string): DocBody {
  const body: DocBody = { runs: [], paragraphs: [] };
  paragraphs.forEach(([type, runs], i) => {
    runs.forEach(([text, style], j) => {
      const last = j === runs.length - 1;
      body.runs.push({ text: last ? `${text}\n` : text, style: style ? styleKey(style) : PLAIN });
    });
    const props: ParagraphProps = { style: { namedStyleType: type } };
    if (type !== 'NORMAL_TEXT') props.style.headingId = headingId(`${idSeed}:${i}`);
    body.paragraphs.push(props);
  });
  // Merge equal neighbours the way the model keeps them.
  const merged: DocBody['runs'] = [];
  for (const r of body.runs) {
    const prev = merged[merged.length - 1];
    if (prev && prev.style === r.style) prev.text += r.text;
    else merged.push({ ...r });
  }
  body.runs = merged;
  return body;
}

function seedDocuments(
  user: EmulatedUser,
): Array<{ key: string; title: string; paragraphs: SeedParagraph[] }> {
  const first = user.name.split(' ')[0] ?? user.name;
  return [
    {
      key: 'kickoff-notes',
      title: 'Project kickoff notes',
      paragraphs: [
        ['HEADING_1', [['Project kickoff']]],
        ['NORMAL_TEXT', [['Attendees: Ada Lovelace, Grace Hopper, Alan Turing.']]],
        ['HEADING_2', [['Decisions']]],
        ['NORMAL_TEXT', [['Owner: ', { bold: true }], [`${first} drives the first milestone.`]]],
        ['NORMAL_TEXT', [['Ship the sandbox before the production connectors.']]],
        ['HEADING_2', [['Next steps']]],
        ['NORMAL_TEXT', [['Review the budget in the Quarterly budget spreadsheet.']]],
      ],
    },
    {
      key: 'product-brief',
      title: `${first}'s product brief`,
      paragraphs: [
        ['TITLE', [['Product brief']]],
        ['NORMAL_TEXT', [[`Written by ${user.name}.`]]],
        ['HEADING_1', [['Problem']]],
        [
          'NORMAL_TEXT',
          [['Agents need to act for people inside many tools without holding their passwords.']],
        ],
        ['HEADING_1', [['Proposal']]],
        [
          'NORMAL_TEXT',
          [['A gateway that keeps the tokens and exposes ', {}], ['named tools', { italic: true }], ['.']],
        ],
      ],
    },
  ];
}

export function seedDocs(user: EmulatedUser, drive: Map<string, DriveFile>, ctx: ProviderContext): DocsData {
  const documents = new Map<string, DocumentModel>();
  for (const seed of seedDocuments(user)) {
    const id = documentIdFrom(`docs:${user.id}:${seed.key}`);
    documents.set(id, {
      documentId: id,
      title: seed.title,
      body: buildBody(seed.paragraphs, id),
      lists: {},
      revisionId: revisionId(`${id}:seed`),
      pastRevisions: [],
    });
    fileNativeDocument(drive, {
      id,
      name: seed.title,
      mimeType: GOOGLE_MIME.document,
      ownerId: user.id,
      now: ctx.clock(),
    });
  }
  return { documents };
}

function emptyDocument(id: string, title: string): DocumentModel {
  return {
    documentId: id,
    title,
    body: {
      runs: [{ text: '\n', style: PLAIN }],
      paragraphs: [{ style: { namedStyleType: 'NORMAL_TEXT' } }],
    },
    lists: {},
    revisionId: revisionId(),
    pastRevisions: [],
  };
}

/** The document's text, as Drive's plain-text export gives it. */
export function documentPlainText(doc: DocumentModel): string {
  return bodyText(doc.body);
}

export interface ExportParagraph {
  /** Without the closing newline. */
  text: string;
  namedStyleType: string;
  bulleted: boolean;
  runs: Array<{ text: string; bold: boolean; italic: boolean }>;
}

/** Paragraphs with their style, for Drive's HTML and Markdown exports of a native document. */
export function documentParagraphs(doc: DocumentModel): ExportParagraph[] {
  const out: ExportParagraph[] = [];
  let runs: ExportParagraph['runs'] = [];
  for (const run of doc.body.runs) {
    const style = JSON.parse(run.style) as TextStyle;
    const parts = run.text.split('\n');
    parts.forEach((part, i) => {
      if (part !== '') runs.push({ text: part, bold: style.bold === true, italic: style.italic === true });
      if (i < parts.length - 1) {
        const props = doc.body.paragraphs[out.length];
        out.push({
          text: runs.map((r) => r.text).join(''),
          namedStyleType: String(props?.style.namedStyleType ?? 'NORMAL_TEXT'),
          bulleted: props?.bullet !== undefined,
          runs,
        });
        runs = [];
      }
    });
  }
  return out;
}

// ---- routes ---------------------------------------------------------------------------------

const SERVICE = 'docs.googleapis.com';
const SUGGESTION_MODES = [
  'DEFAULT_FOR_CURRENT_ACCESS',
  'SUGGESTIONS_INLINE',
  'PREVIEW_SUGGESTIONS_ACCEPTED',
  'PREVIEW_WITHOUT_SUGGESTIONS',
];

function sendError(reply: FastifyReply, e: DocsRequestError): FastifyReply {
  const body = googleErrorBody(400, e.message, { style: 'modern' });
  body.error.status = e.status;
  return reply.code(400).type('application/json; charset=UTF-8').send(body);
}

export function registerDocsRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  const authorize = rpcAuthorizer(
    ctx,
    GOOGLE_API_SCOPES.docs,
    SERVICE,
    'google.apps.docs.v1.DocumentsService',
  );

  /** The user's document; one created through Drive starts blank. */
  const lookup = (data: GoogleUserData, id: string): DocumentModel | null =>
    lookupNative(data.drive, data.docs.documents, GOOGLE_MIME.document, id, emptyDocument);

  const send = (req: FastifyRequest, reply: FastifyReply, body: unknown): FastifyReply =>
    sendMasked(req, reply, body, (message) => sendError(reply, new DocsRequestError(message)));

  app.post('/v1/documents', { bodyLimit: BODY_LIMIT }, (req, reply) => {
    const auth = authorize(req, reply, true, 'CreateDocument');
    if (!auth) return reply;
    const data = dataOf(auth.user.id);
    const body = (req.body ?? {}) as Record<string, unknown>;
    // Google ignores everything but the title: a new document is always blank.
    const title = typeof body.title === 'string' && body.title !== '' ? body.title : 'Untitled document';
    const doc = emptyDocument(randomDocumentId(), title);
    data.docs.documents.set(doc.documentId, doc);
    fileNativeDocument(data.drive, {
      id: doc.documentId,
      name: title,
      mimeType: GOOGLE_MIME.document,
      ownerId: auth.user.id,
      now: ctx.clock(),
    });
    setDriveText(data.drive, doc.documentId, bodyText(doc.body));
    return send(req, reply, documentJson(doc));
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/v1/documents/*',
    bodyLimit: BODY_LIMIT,
    handler: (req, reply) => {
      const path = req.url.split('?')[0] as string;
      const tail = path.slice(path.indexOf('/v1/documents/') + '/v1/documents/'.length);
      const [rawId, verb, extra] = tail.split(':');
      const id = decodeURIComponent(rawId ?? '');
      const isGet = req.method === 'GET' && verb === undefined;
      const isUpdate = req.method === 'POST' && verb === 'batchUpdate';
      if (!id || id.includes('/') || extra !== undefined || !(isGet || isUpdate)) {
        return sendGoogleError(reply, 404, `Method not found: ${req.method} ${path}`, { style: 'modern' });
      }
      const auth = authorize(req, reply, isUpdate, isGet ? 'GetDocument' : 'BatchUpdateDocument');
      if (!auth) return reply;
      const data = dataOf(auth.user.id);
      const doc = lookup(data, id);
      if (!doc) return sendGoogleError(reply, 404, NOT_FOUND, { style: 'modern' });
      try {
        if (isGet) {
          const q = query(req);
          const mode = q.get('suggestionsViewMode') ?? 'SUGGESTIONS_INLINE';
          if (!SUGGESTION_MODES.includes(mode)) {
            throw new DocsRequestError(
              `Invalid value at 'suggestions_view_mode' (type.googleapis.com/google.apps.docs.v1.SuggestionsViewMode), "${mode}"`,
            );
          }
          return send(
            req,
            reply,
            documentJson(doc, {
              includeTabsContent: q.get('includeTabsContent') === 'true',
              suggestionsViewMode: mode === 'DEFAULT_FOR_CURRENT_ACCESS' ? 'SUGGESTIONS_INLINE' : mode,
            }),
          );
        }
        const result = batchUpdate(doc, (req.body ?? {}) as Record<string, unknown>);
        touchDriveFile(data.drive, doc.documentId, ctx.clock());
        setDriveText(data.drive, doc.documentId, bodyText(doc.body));
        return send(req, reply, result);
      } catch (e) {
        if (e instanceof DocsRequestError) return sendError(reply, e);
        throw e;
      }
    },
  });
}

// ---- batchUpdate ----------------------------------------------------------------------------

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

function batchUpdate(doc: DocumentModel, body: Record<string, unknown>): Record<string, unknown> {
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

function applyRequest(
  work: { body: DocBody; lists: DocumentModel['lists'] },
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
    case 'insertText': {
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
      return {};
    }
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
    case 'updateTextStyle': {
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
      return {};
    }
    case 'updateParagraphStyle': {
      const [start, end] = checkRange(body, r.range as Record<string, unknown> | undefined, where, true);
      const fields = fieldList(r.fields, where);
      const style = (r.paragraphStyle ?? {}) as Record<string, unknown>;
      for (const p of paragraphsIn(body, start, end)) {
        updateParagraphProps(body.paragraphs[p] as ParagraphProps, style, fields, newHeading);
      }
      return {};
    }
    case 'createParagraphBullets': {
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
      for (const p of paragraphsIn(body, start, end))
        (body.paragraphs[p] as ParagraphProps).bullet = { listId };
      return {};
    }
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
