import { Type } from '@sinclair/typebox';
import { defineTool } from '../types.js';
import { bodyContentOf, documentId, documentUrl, plainText, stringEnum } from './shared.js';

const input = Type.Object(
  {
    document_id: documentId,
    suggestions_view_mode: Type.Optional(
      stringEnum(
        [
          'DEFAULT_FOR_CURRENT_ACCESS',
          'SUGGESTIONS_INLINE',
          'PREVIEW_SUGGESTIONS_ACCEPTED',
          'PREVIEW_WITHOUT_SUGGESTIONS',
        ],
        {
          description:
            'How pending suggestions appear: DEFAULT_FOR_CURRENT_ACCESS (default), SUGGESTIONS_INLINE, PREVIEW_SUGGESTIONS_ACCEPTED or PREVIEW_WITHOUT_SUGGESTIONS.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const docsReadDocument = defineTool({
  name: 'docs_read_document',
  provider: 'google_docs',
  description: [
    'Reads a Google Docs document: its plain text and its full structure.',
    'Use it to read what a document says (use text), and before docs_update_document to learn the UTF-16 indexes of paragraphs (body.content[].startIndex/endIndex) and the current revisionId for write_control.',
    'Returns documentId, title, revisionId, url, text (the whole body as plain text, one line per paragraph) and the provider’s Document structure: body.content[] (paragraphs with elements[].textRun {content, textStyle} and paragraphStyle.namedStyleType such as HEADING_1), documentStyle, namedStyles, lists.',
    'Example input: {"document_id": "1Pq7Yh3xKc2eN0dVfWmBzRtL9sAaJgU4oHiE5nX6yC8w"}',
  ].join(' '),
  input,
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(value, { client }) {
    const { data } = await client.request<Record<string, unknown>>({
      method: 'GET',
      path: `/v1/documents/${encodeURIComponent(value.document_id)}`,
      query: { suggestionsViewMode: value.suggestions_view_mode },
    });
    const { documentId: id, title, revisionId, ...structure } = data;
    return {
      documentId: id,
      title,
      revisionId,
      url: documentUrl(String(id ?? value.document_id)),
      text: plainText(bodyContentOf(data)),
      ...structure,
    };
  },
});
