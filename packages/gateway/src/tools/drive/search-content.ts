import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  checkFields,
  DEFAULT_FILE_FIELDS,
  driveString,
  fieldsParam,
  includeTrashedParam,
  listFiles,
  mimeTypeParam,
  pageSizeParam,
  pageTokenParam,
  supportsAllDrivesParam,
} from './shared.js';

export const driveSearchContent = defineTool({
  name: 'drive_search_content',
  provider: 'google_drive',
  description: [
    "Full-text search in Google Drive: finds files whose content, name or description contains the text (Drive's fullText contains), optionally only of one MIME type. Returns matching files with id, name, MIME type, times and links.",
    'Use it when the user remembers what a file says rather than its name; use drive_search_files for searches by name, folder, date or owner. Give the text as is: quotes and backslashes are escaped for you; wrap words in double quotes inside the text to search an exact phrase.',
    'Results come in relevance order (Drive does not sort full-text searches). Paginated by page_size: while has_more, call again with the same input plus next_page ({"page_token": …}). Trashed files are left out unless include_trashed is true; files in shared drives are searched only with supports_all_drives true.',
    '"query" is accepted as another name for search_term.',
    'Example: {"search_term":"quarterly budget","mime_type":"application/vnd.google-apps.spreadsheet","page_size":20}',
  ].join(' '),
  input: Type.Object(
    {
      search_term: Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'Text to find in file contents, names and descriptions, e.g. "Bernoulli numbers" or "it\'s the first". Plain text, not Drive query syntax.',
      }),
      mime_type: Type.Optional(mimeTypeParam),
      fields: Type.Optional(fieldsParam('File fields to return for each file', DEFAULT_FILE_FIELDS)),
      page_size: Type.Optional(pageSizeParam),
      page_token: Type.Optional(pageTokenParam),
      supports_all_drives: Type.Optional(supportsAllDrivesParam),
      include_trashed: Type.Optional(includeTrashedParam),
    },
    { additionalProperties: false },
  ),
  aliases: { query: { to: 'search_term' } },
  annotations: { read_only: true, destructive: false, idempotent: true },
  check(i) {
    const errors: FieldError[] = [];
    if (i.search_term.trim() === '') {
      errors.push({
        path: '/search_term',
        message: 'is blank; give the words to search for (rule: a full-text search needs some text).',
      });
    }
    checkFields('/fields', i.fields, errors);
    return errors;
  },
  async run(i, { client }) {
    const terms = [`fullText contains ${driveString(i.search_term)}`];
    if (i.mime_type !== undefined) terms.push(`mimeType = ${driveString(i.mime_type)}`);
    if (i.include_trashed !== true) terms.push('trashed = false');
    return listFiles(client, {
      q: terms.join(' and '),
      ...(i.page_size !== undefined ? { pageSize: i.page_size } : {}),
      ...(i.page_token !== undefined ? { pageToken: i.page_token } : {}),
      ...(i.fields !== undefined ? { fields: i.fields } : {}),
      supportsAllDrives: i.supports_all_drives,
    });
  },
});
