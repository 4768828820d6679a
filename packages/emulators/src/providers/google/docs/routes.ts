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
import { batchUpdate } from './batch-update.js';
import {
  bodyText,
  type DocBody,
  DocsRequestError,
  type DocumentModel,
  headingId,
  type ParagraphProps,
  PLAIN,
  revisionId,
  styleKey,
  type TextStyle,
} from './model.js';
import { documentJson } from './render.js';

export type { DocsData } from '../user-data.js';
export type { DocumentModel } from './model.js';

const BODY_LIMIT = 128 * 1024 * 1024;
const NOT_FOUND = 'Requested entity was not found.';

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
