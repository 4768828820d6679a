import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  checkFields,
  DEFAULT_FILE_FIELDS,
  fieldsParam,
  includeTrashedParam,
  listFiles,
  pageSizeParam,
  pageTokenParam,
  supportsAllDrivesParam,
} from './shared.js';

/** Sort keys files.list accepts (each optionally followed by "desc"). */
const ORDER_KEYS = [
  'createdTime',
  'folder',
  'modifiedByMeTime',
  'modifiedTime',
  'name',
  'name_natural',
  'quotaBytesUsed',
  'recency',
  'sharedWithMeTime',
  'starred',
  'viewedByMeTime',
];

/** Problems of a Drive query a scan can see: unterminated strings, unbalanced parentheses. */
function queryProblem(q: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < q.length; i++) {
    const c = q[i];
    if (c === "'" || c === '"') {
      const start = i;
      for (i++; i < q.length && q[i] !== c; i++) if (q[i] === '\\') i++;
      if (i >= q.length) {
        return `the string starting at character ${start + 1} is not closed; escape a quote inside a value as \\' (e.g. 'it\\'s') and a backslash as \\\\`;
      }
    } else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return `a ")" at character ${i + 1} closes nothing`;
  }
  return depth === 0 ? undefined : 'a "(" is never closed';
}

/** The part of a query outside string literals (to look for operators and field names). */
function outsideStrings(q: string): string {
  return q.replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"/g, "''");
}

export const driveSearchFiles = defineTool({
  name: 'drive_search_files',
  provider: 'google_drive',
  description: [
    "Searches Google Drive files with Drive's query language and returns them (id, name, MIME type, size, times, parents, links), sorted as asked.",
    `query examples: "name contains 'report'", "mimeType = 'application/pdf' and modifiedTime > '2025-01-01T00:00:00'", "'FOLDER_ID' in parents", "starred = true", "'someone@example.com' in owners". Operators: contains, =, !=, <, >, in, has, and, or, not. Inside values escape ' as \\' and \\ as \\\\. Omit query to list recent files.`,
    'order_by: comma-separated sort keys (listed on the parameter), each optionally with " desc" (default "modifiedTime desc"); not allowed with fullText queries (use drive_search_content).',
    'Trashed files are left out unless include_trashed is true or the query mentions trashed; shared-drive files need supports_all_drives true. Paginated by page_size: while has_more, call again with the same input plus next_page ({"page_token": …}).',
    `Example: {"query":"name contains 'budget'","order_by":"modifiedTime desc","page_size":25,"supports_all_drives":true}`,
  ].join(' '),
  input: Type.Object(
    {
      query: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 4000,
          description:
            'Drive search query (files.list q), e.g. "name contains \'budget\' and trashed = false". Omit to list all files.',
        }),
      ),
      order_by: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 300,
          description: `Sort order: comma-separated keys (${ORDER_KEYS.join(', ')}), each optionally followed by " desc". Example: "folder,modifiedTime desc,name".`,
        }),
      ),
      fields: Type.Optional(fieldsParam('File fields to return for each file', DEFAULT_FILE_FIELDS)),
      page_size: Type.Optional(pageSizeParam),
      page_token: Type.Optional(pageTokenParam),
      supports_all_drives: Type.Optional(supportsAllDrivesParam),
      include_trashed: Type.Optional(includeTrashedParam),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  check(i) {
    const errors: FieldError[] = [];
    if (i.query !== undefined) {
      const problem = queryProblem(i.query);
      if (problem) {
        errors.push({
          path: '/query',
          message: `${problem} (rule: Drive query values are quoted strings with \\' and \\\\ escapes, and parentheses balance).`,
        });
      }
    }
    if (i.order_by !== undefined) {
      for (const part of i.order_by.split(',')) {
        const [key, direction, extra] = part.trim().split(/\s+/);
        if (!key || !ORDER_KEYS.includes(key) || (direction !== undefined && direction !== 'desc') || extra) {
          errors.push({
            path: '/order_by',
            message: `"${part.trim()}" is not a sort key (rule: order_by lists keys from ${ORDER_KEYS.join(', ')}, each optionally followed by " desc").`,
          });
          break;
        }
      }
      if (i.query !== undefined && /\bfullText\b/.test(outsideStrings(i.query))) {
        errors.push({
          path: '/order_by',
          message:
            'cannot be used with a fullText query (rule: Drive returns full-text results in relevance order and refuses sorting them); remove order_by.',
        });
      }
    }
    checkFields('/fields', i.fields, errors);
    return errors;
  },
  async run(i, { client }) {
    let q = i.query;
    const mentionsTrashed = q !== undefined && /\btrashed\b/.test(outsideStrings(q));
    if (i.include_trashed !== true && !mentionsTrashed) {
      q = q === undefined ? 'trashed = false' : `(${q}) and trashed = false`;
    }
    return listFiles(client, {
      q,
      ...(i.order_by !== undefined ? { orderBy: i.order_by } : {}),
      ...(i.page_size !== undefined ? { pageSize: i.page_size } : {}),
      ...(i.page_token !== undefined ? { pageToken: i.page_token } : {}),
      ...(i.fields !== undefined ? { fields: i.fields } : {}),
      supportsAllDrives: i.supports_all_drives,
    });
  },
});
