import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { type FieldError, Problem } from '../../errors/problem.js';
import { getProvider } from '../../providers/catalog.js';
import { defineTool } from '../types.js';
import { documentId, stringEnum } from './shared.js';

const segmentId = Type.String({
  description: 'Header, footer or footnote id to act in; leave out for the document body.',
});
const tabId = Type.String({ description: 'Tab to act in; leave out for the first tab.' });

const location = Type.Object(
  {
    index: Type.Integer({
      minimum: 0,
      description:
        'UTF-16 index to insert at; body text starts at 1 (read indexes from docs_read_document body.content[].startIndex).',
    }),
    segmentId: Type.Optional(segmentId),
    tabId: Type.Optional(tabId),
  },
  { additionalProperties: false, description: 'A position in the document.' },
);

const range = Type.Object(
  {
    startIndex: Type.Integer({ minimum: 0, description: 'First UTF-16 index of the range (inclusive).' }),
    endIndex: Type.Integer({ minimum: 0, description: 'UTF-16 index just past the range (exclusive).' }),
    segmentId: Type.Optional(segmentId),
    tabId: Type.Optional(tabId),
  },
  { additionalProperties: false, description: 'A span [startIndex, endIndex) of the document.' },
);

const fields = Type.String({
  minLength: 1,
  description:
    'Comma-separated style fields to change, e.g. "bold,italic"; "*" sets every field (fields left out of the style are reset).',
});

const BULLET_PRESETS = [
  'BULLET_DISC_CIRCLE_SQUARE',
  'BULLET_DIAMONDX_ARROW3D_SQUARE',
  'BULLET_CHECKBOX',
  'BULLET_ARROW_DIAMOND_DISC',
  'BULLET_STAR_CIRCLE_SQUARE',
  'BULLET_ARROW3D_CIRCLE_SQUARE',
  'BULLET_LEFTTRIANGLE_DIAMOND_DISC',
  'BULLET_DIAMONDX_HOLLOWDIAMOND_SQUARE',
  'BULLET_DIAMOND_CIRCLE_SQUARE',
  'NUMBERED_DECIMAL_ALPHA_ROMAN',
  'NUMBERED_DECIMAL_ALPHA_ROMAN_PARENS',
  'NUMBERED_DECIMAL_NESTED',
  'NUMBERED_UPPERALPHA_ALPHA_ROMAN',
  'NUMBERED_UPPERROMAN_UPPERALPHA_DECIMAL',
  'NUMBERED_ZERODECIMAL_ALPHA_ROMAN',
] as const;

const looseObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

/** The Docs request kinds spelled out for the model; the others pass through as the API defines them. */
const typedRequests = {
  insertText: Type.Object(
    {
      text: Type.String({ minLength: 1, description: 'Text to insert; "\\n" starts a new paragraph.' }),
      location: Type.Optional(location),
      endOfSegmentLocation: Type.Optional(
        Type.Object(
          { segmentId: Type.Optional(segmentId), tabId: Type.Optional(tabId) },
          {
            additionalProperties: false,
            description: 'Insert at the end of the body (or of the segment): {}.',
          },
        ),
      ),
    },
    {
      additionalProperties: false,
      description: 'Inserts text at location or at endOfSegmentLocation (give exactly one).',
    },
  ),
  deleteContentRange: Type.Object(
    { range },
    {
      additionalProperties: false,
      description: 'Deletes a range of content (not the final newline of the body).',
    },
  ),
  replaceAllText: Type.Object(
    {
      containsText: Type.Object(
        {
          text: Type.String({ minLength: 1, description: 'Text to find.' }),
          matchCase: Type.Optional(Type.Boolean({ description: 'Match case exactly (default false).' })),
        },
        { additionalProperties: false },
      ),
      replaceText: Type.String({ description: 'Replacement text (may be empty to delete matches).' }),
      tabsCriteria: Type.Optional(looseObject('Limit to tabs: {"tabIds": ["t.0"]}.')),
    },
    { additionalProperties: false, description: 'Replaces every occurrence of a text.' },
  ),
  updateTextStyle: Type.Object(
    {
      range,
      textStyle: looseObject(
        'Character style, e.g. {"bold": true}, {"italic": true}, {"link": {"url": "https://…"}}, {"fontSize": {"magnitude": 14, "unit": "PT"}}.',
      ),
      fields,
    },
    { additionalProperties: false, description: 'Changes the character style of a range.' },
  ),
  updateParagraphStyle: Type.Object(
    {
      range,
      paragraphStyle: looseObject(
        'Paragraph style, e.g. {"namedStyleType": "HEADING_1"} (NORMAL_TEXT, TITLE, SUBTITLE, HEADING_1 … HEADING_6) or {"alignment": "CENTER"}.',
      ),
      fields,
    },
    { additionalProperties: false, description: 'Changes the style of the paragraphs a range touches.' },
  ),
  createParagraphBullets: Type.Object(
    {
      range,
      bulletPreset: stringEnum(BULLET_PRESETS, {
        description: 'Bullet glyphs, e.g. BULLET_DISC_CIRCLE_SQUARE or NUMBERED_DECIMAL_ALPHA_ROMAN.',
      }),
    },
    { additionalProperties: false, description: 'Turns the paragraphs a range touches into a list.' },
  ),
  deleteParagraphBullets: Type.Object(
    { range },
    { additionalProperties: false, description: 'Removes bullets from the paragraphs a range touches.' },
  ),
};

/** Other request kinds of documents.batchUpdate, passed through as given. */
const OTHER_REQUESTS = [
  'insertTable',
  'insertTableRow',
  'insertTableColumn',
  'deleteTableRow',
  'deleteTableColumn',
  'updateTableColumnProperties',
  'updateTableCellStyle',
  'updateTableRowStyle',
  'mergeTableCells',
  'unmergeTableCells',
  'pinTableHeaderRows',
  'insertInlineImage',
  'replaceImage',
  'deletePositionedObject',
  'insertPageBreak',
  'insertSectionBreak',
  'updateSectionStyle',
  'updateDocumentStyle',
  'createNamedRange',
  'deleteNamedRange',
  'replaceNamedRangeContent',
  'createHeader',
  'createFooter',
  'deleteHeader',
  'deleteFooter',
  'createFootnote',
  'insertPerson',
  'addDocumentTab',
  'deleteTab',
  'updateDocumentTabProperties',
] as const;

const requestProperties: Record<string, TSchema> = {};
for (const [kind, schema] of Object.entries(typedRequests)) requestProperties[kind] = Type.Optional(schema);
for (const kind of OTHER_REQUESTS) {
  requestProperties[kind] = Type.Optional(
    looseObject(`The ${kind} request, as documented for documents.batchUpdate.`),
  );
}

const request = Type.Object(requestProperties, {
  additionalProperties: false,
  description:
    'One Docs API request holding exactly one operation, e.g. {"insertText": {"location": {"index": 1}, "text": "Hello\\n"}}.',
});

const requiredRevisionId = Type.String({
  minLength: 1,
  description:
    'Apply only if the document is still at this revision (revisionId from docs_read_document); otherwise nothing changes and the tool answers upstream_conflict.',
});
const targetRevisionId = Type.String({
  minLength: 1,
  description: 'Apply on top of this recent revision, letting Google merge with edits made since.',
});

/**
 * write_control's keys: Google's WriteControl names, which the specification's write_control
 * carries like the requests do, then Portico's earlier snake_case names for the same two fields.
 */
const REQUIRED_KEYS = ['requiredRevisionId', 'required_revision_id'] as const;
const TARGET_KEYS = ['targetRevisionId', 'target_revision_id'] as const;
type WriteControlKey = (typeof REQUIRED_KEYS)[number] | (typeof TARGET_KEYS)[number];

const input = Type.Object(
  {
    document_id: documentId,
    requests: Type.Array(request, {
      minItems: 1,
      maxItems: 500,
      description:
        'The operations, applied in order and all or nothing. Indexes are UTF-16 offsets into the document as it is after the previous requests; to keep earlier indexes valid, order edits from the end of the document to the start.',
    }),
    write_control: Type.Optional(
      Type.Object(
        {
          requiredRevisionId: Type.Optional(requiredRevisionId),
          targetRevisionId: Type.Optional(targetRevisionId),
          required_revision_id: Type.Optional(
            Type.String({ minLength: 1, description: 'Earlier name of requiredRevisionId.' }),
          ),
          target_revision_id: Type.Optional(
            Type.String({ minLength: 1, description: 'Earlier name of targetRevisionId.' }),
          ),
        },
        {
          additionalProperties: false,
          description:
            'Revision management, as Google\'s WriteControl: give exactly one of requiredRevisionId or targetRevisionId, e.g. {"requiredRevisionId": "ALBJ4LuN3c…"}.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

type Input = Static<typeof input>;
type WriteControl = NonNullable<Input['write_control']>;
type Req = Record<string, Record<string, unknown> | undefined>;

/** The write_control keys the caller gave, whichever names they used. */
function writeControlKeys(control: WriteControl): WriteControlKey[] {
  return [...REQUIRED_KEYS, ...TARGET_KEYS].filter((key) => control[key] !== undefined);
}

function checkIndex(path: string, index: unknown, where: Record<string, unknown> | undefined): FieldError[] {
  if (typeof index === 'number' && index < 1 && !where?.segmentId) {
    return [
      {
        path,
        message: `Index ${index} is before the body text (rule: in the document body, indexes start at 1; 0 is the section break).`,
      },
    ];
  }
  return [];
}

function checkRangeOf(path: string, r: Record<string, unknown> | undefined): FieldError[] {
  if (!r) return [];
  const start = r.startIndex as number;
  const end = r.endIndex as number;
  const errors = checkIndex(`${path}/startIndex`, start, r);
  if (end <= start) {
    errors.push({
      path: `${path}/endIndex`,
      message: `endIndex ${end} is not after startIndex ${start} (rule: a range is [startIndex, endIndex) with endIndex > startIndex).`,
    });
  }
  return errors;
}

function check(value: Input): FieldError[] {
  const errors: FieldError[] = [];
  (value.requests as Req[]).forEach((req, i) => {
    const path = `/requests/${i}`;
    const kinds = Object.keys(req).filter((k) => req[k] !== undefined);
    if (kinds.length !== 1) {
      errors.push({
        path,
        message: `${kinds.length === 0 ? 'No operation is given' : `Several operations are given (${kinds.join(', ')})`} (rule: each request holds exactly one operation, e.g. {"insertText": {…}}; put each operation in its own request).`,
      });
      return;
    }
    const kind = kinds[0]!;
    const body = req[kind]!;
    const at = `${path}/${kind}`;
    if (kind === 'insertText') {
      const given = ['location', 'endOfSegmentLocation'].filter((k) => body[k] !== undefined);
      if (given.length !== 1) {
        errors.push({
          path: at,
          message: `Provide exactly one of "location" or "endOfSegmentLocation" (rule: text is inserted either at an index or at the end of the body).`,
        });
      }
      const loc = body.location as Record<string, unknown> | undefined;
      if (loc) errors.push(...checkIndex(`${at}/location/index`, loc.index, loc));
    } else if (kind in typedRequests && body.range !== undefined) {
      errors.push(...checkRangeOf(`${at}/range`, body.range as Record<string, unknown>));
    }
  });
  const control = value.write_control;
  if (control && writeControlKeys(control).length !== 1) {
    // The rule names the fields as the caller wrote them.
    const [required, target] = writeControlKeys(control).some((k) => k.includes('_'))
      ? [REQUIRED_KEYS[1], TARGET_KEYS[1]]
      : [REQUIRED_KEYS[0], TARGET_KEYS[0]];
    errors.push({
      path: '/write_control',
      message: `Provide exactly one of "${required}" or "${target}" (rule: a write is either refused on a newer revision or merged onto a recent one).`,
    });
  }
  return errors;
}

interface BatchUpdateResponse {
  documentId?: string;
  replies?: unknown[];
  writeControl?: { requiredRevisionId?: string };
}

/** Google refuses a stale required revision with a 400, which the provider definition recognises. */
function isRevisionMismatch(problem: Problem): boolean {
  const upstream = problem.options.upstream;
  if (problem.code !== 'upstream_validation' || !upstream) return false;
  return getProvider('google_docs').api.describeError(upstream.status, upstream.body).conflict === true;
}

export const docsUpdateDocument = defineTool({
  name: 'docs_update_document',
  provider: 'google_docs',
  description: [
    'Edits a Google Docs document with a batch of Docs API requests (insertText, deleteContentRange, replaceAllText, updateTextStyle, …), applied in order, all or nothing.',
    'Read the document first (docs_read_document) for its UTF-16 indexes and revisionId; replaceAllText needs no indexes.',
    'With write_control {"requiredRevisionId": …} the edit fails with upstream_conflict, writing nothing, if the document changed since: read it again and rebuild the requests.',
    'Rules: each request holds exactly one operation; insertText takes exactly one of location or endOfSegmentLocation; body indexes start at 1; ranges need endIndex > startIndex; write_control takes one of requiredRevisionId or targetRevisionId.',
    'Returns {documentId, revisionId, replies (one per request), writeControl}.',
    'Example: {"document_id": "1Pq7Yh3xKc2eN0dVfWmBzRtL9sAaJgU4oHiE5nX6yC8w", "requests": [{"replaceAllText": {"containsText": {"text": "{{customer}}"}, "replaceText": "Acme Corp"}}], "write_control": {"requiredRevisionId": "ALBJ4LuN3c"}}',
  ].join(' '),
  input,
  annotations: { read_only: false, destructive: true, idempotent: false },
  check,
  async run(value, { client }) {
    // `check` let at most one key through.
    const control = value.write_control;
    const key = control ? writeControlKeys(control)[0] : undefined;
    const revision = key === undefined ? undefined : control?.[key];
    const writeControl =
      key === undefined
        ? undefined
        : (REQUIRED_KEYS as readonly string[]).includes(key)
          ? { requiredRevisionId: revision }
          : { targetRevisionId: revision };
    try {
      const { data } = await client.request<BatchUpdateResponse>({
        method: 'POST',
        path: `/v1/documents/${encodeURIComponent(value.document_id)}:batchUpdate`,
        json: { requests: value.requests, ...(writeControl ? { writeControl } : {}) },
      });
      return {
        documentId: data.documentId ?? value.document_id,
        revisionId: data.writeControl?.requiredRevisionId,
        replies: data.replies ?? [],
        writeControl: data.writeControl,
      };
    } catch (error) {
      if (error instanceof Problem && isRevisionMismatch(error)) {
        throw new Problem(
          'upstream_conflict',
          `The document changed since revision ${revision ?? '(unknown)'}, so nothing was written. Read it again with docs_read_document, rebuild the requests against its current text and indexes, and retry with write_control.${key ?? REQUIRED_KEYS[0]} set to the new revisionId.`,
          {
            errors: [
              {
                path: `/tool_input/write_control/${key ?? REQUIRED_KEYS[0]}`,
                message: 'is not the latest revision',
              },
            ],
            retryable: false,
            ...(error.options.upstream ? { upstream: error.options.upstream } : {}),
          },
        );
      }
      throw error;
    }
  },
});
