import { Type } from '@sinclair/typebox';
import { Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { documentUrl } from './shared.js';

const input = Type.Object(
  {
    title: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'The document title (also its file name in Drive). Default: Google\'s "Untitled document".',
      }),
    ),
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1_000_000,
        description:
          'Plain text to put in the new document; "\\n" starts a new paragraph. Default: the document starts empty.',
      }),
    ),
  },
  { additionalProperties: false },
);

interface Created {
  documentId: string;
  title?: string;
  revisionId?: string;
}

export const docsCreateDocument = defineTool({
  name: 'docs_create_document',
  provider: 'google_docs',
  description: [
    'Creates a new Google Docs document in the user’s Drive, optionally with a title (default "Untitled document") and initial plain text, and returns its id.',
    'Use it when the user wants a new document; to change an existing one use docs_update_document.',
    'Google creates documents blank, so the text is inserted right after creation (a second request); paragraphs are separated by "\\n".',
    'Returns {documentId, title, revisionId, url}; revisionId is the latest revision, usable as write_control.requiredRevisionId of docs_update_document.',
    'Example input: {"title": "Meeting notes 2024-05-02", "text": "Attendees: Ada, Grace\\nDecisions: ship the beta"}',
  ].join(' '),
  input,
  annotations: { read_only: false, destructive: false, idempotent: false },
  async run(value, { client }) {
    const { data: created } = await client.request<Created>({
      method: 'POST',
      path: '/v1/documents',
      // Without a title Google names the document itself ("Untitled document").
      json: value.title === undefined ? {} : { title: value.title },
      query: { fields: 'documentId,title,revisionId' },
    });
    const title = created.title ?? value.title;
    let revisionId = created.revisionId;
    if (value.text !== undefined) {
      try {
        const { data } = await client.request<{ writeControl?: { requiredRevisionId?: string } }>({
          method: 'POST',
          path: `/v1/documents/${encodeURIComponent(created.documentId)}:batchUpdate`,
          json: {
            requests: [{ insertText: { location: { index: 1 }, text: value.text } }],
            // Nobody else can have edited a document this new; the check only guards the assumption.
            ...(revisionId ? { writeControl: { requiredRevisionId: revisionId } } : {}),
          },
        });
        revisionId = data.writeControl?.requiredRevisionId ?? revisionId;
      } catch (error) {
        // The document exists by now: say so, or a retrying agent would create a second one.
        if (!(error instanceof Problem)) throw error;
        throw new Problem(
          error.code,
          `${error.detail} The document${title === undefined ? '' : ` "${title}"`} was created (documentId ${created.documentId}) but is still empty: add the text with docs_update_document instead of creating another document.`,
          { ...error.options, extensions: { ...error.options.extensions, document_id: created.documentId } },
        );
      }
    }
    return {
      documentId: created.documentId,
      title,
      revisionId,
      url: documentUrl(created.documentId),
    };
  },
});
