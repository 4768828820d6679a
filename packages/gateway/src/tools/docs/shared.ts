import { Type } from '@sinclair/typebox';
import { stringEnum } from '../schema.js';

export const documentId = Type.String({
  minLength: 10,
  maxLength: 200,
  pattern: '^[A-Za-z0-9_-]+$',
  description:
    'The document id: letters, digits, "-" and "_", as in https://docs.google.com/document/d/{document_id}/edit (returned by docs_create_document or drive_search_files).',
});

export function documentUrl(id: string): string {
  return `https://docs.google.com/document/d/${encodeURIComponent(id)}/edit`;
}

type Element = Record<string, unknown>;

/**
 * The text of a Docs body (`body.content[]`) as a reader sees it: paragraph runs in order, table
 * cells and tables of contents included, one "\n" per paragraph as the document stores them.
 */
export function plainText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const element of content as Element[]) {
    const paragraph = element.paragraph as { elements?: Element[] } | undefined;
    if (paragraph) {
      for (const part of paragraph.elements ?? []) {
        const run = part.textRun as { content?: unknown } | undefined;
        if (typeof run?.content === 'string') out += run.content;
        const auto = part.autoText as { content?: unknown } | undefined;
        if (typeof auto?.content === 'string') out += auto.content;
      }
      continue;
    }
    const table = element.table as
      | { tableRows?: Array<{ tableCells?: Array<{ content?: unknown }> }> }
      | undefined;
    if (table) {
      for (const row of table.tableRows ?? []) {
        for (const cell of row.tableCells ?? []) out += plainText(cell.content);
      }
      continue;
    }
    const toc = element.tableOfContents as { content?: unknown } | undefined;
    if (toc) out += plainText(toc.content);
  }
  return out;
}

/** The body content of a document, whether it came back flat or with tabs (the first tab). */
export function bodyContentOf(document: Record<string, unknown>): unknown {
  const body = document.body as { content?: unknown } | undefined;
  if (body) return body.content;
  const tabs = document.tabs as Array<{ documentTab?: { body?: { content?: unknown } } }> | undefined;
  return tabs?.[0]?.documentTab?.body?.content;
}

export { stringEnum };
