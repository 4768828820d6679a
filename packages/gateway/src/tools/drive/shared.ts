import { Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import type { FieldError } from '../../errors/problem.js';
import { paged } from '../pagination.js';

/** What the `drive_` tools share: Drive v3 query text, `fields` selectors, listing and paging. */

/** A string literal of Drive's query language: backslashes and single quotes escaped, in quotes. */
export function driveString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** File fields returned per file by the search tools unless `fields` says otherwise. */
export const DEFAULT_FILE_FIELDS =
  'id,name,mimeType,description,size,createdTime,modifiedTime,parents,webViewLink,owners(displayName,emailAddress),starred,trashed';

export const fieldsParam = (what: string, defaultFields: string) =>
  Type.String({
    minLength: 1,
    maxLength: 2000,
    pattern: '^[A-Za-z0-9_*,()/ .@$-]+$',
    description: `${what} in Drive's partial-response syntax: comma-separated File fields, sub-fields in parentheses or with "/", "*" for all. Default "${defaultFields}". Example: "id,name,mimeType,size,owners(emailAddress)".`,
  });

/** Checks a `fields` selector's parentheses, so a typo is refused before Drive sees it. */
export function checkFields(path: string, fields: string | undefined, errors: FieldError[]): void {
  if (fields === undefined) return;
  let depth = 0;
  for (const c of fields) {
    if (c === '(') depth++;
    else if (c === ')' && --depth < 0) break;
  }
  if (depth !== 0) {
    errors.push({
      path,
      message: `"${fields}" has unbalanced parentheses (rule: every "(" that opens a list of sub-fields is closed by ")", e.g. "files(id,name)").`,
    });
  }
}

export const mimeTypeParam = Type.String({
  minLength: 3,
  maxLength: 255,
  pattern: '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$',
  description:
    'Only files of this MIME type, e.g. "application/pdf", "text/plain", "application/vnd.google-apps.document" (Google Docs), "application/vnd.google-apps.spreadsheet" (Sheets), "application/vnd.google-apps.folder" (folders).',
});

export const pageSizeParam = Type.Integer({
  minimum: 1,
  maximum: 1000,
  description: 'Files per page (1–1000, default 100). Drive may return fewer even when more exist.',
});

export const pageTokenParam = Type.String({
  minLength: 1,
  description: 'Cursor from next_page of the previous call (keep the other parameters the same).',
});

export const supportsAllDrivesParam = Type.Boolean({
  default: false,
  description:
    "Include files in shared drives (Drive's supportsAllDrives; the searches also send includeItemsFromAllDrives). Default false: as at Google, a file in a shared drive is then not found.",
});

export const includeTrashedParam = Type.Boolean({
  default: false,
  description: 'Include files in the trash (default false).',
});

interface FileList {
  files?: Record<string, unknown>[];
  nextPageToken?: string;
  incompleteSearch?: boolean;
}

/** files.list with the given `q`, returning the page and how to get the next one. */
export async function listFiles(
  client: ProviderClient,
  params: {
    q: string | undefined;
    orderBy?: string;
    pageSize?: number;
    pageToken?: string;
    fields?: string;
    supportsAllDrives?: boolean;
  },
): Promise<Record<string, unknown>> {
  const res = await client.request<FileList>({
    method: 'GET',
    path: '/drive/v3/files',
    query: {
      q: params.q,
      orderBy: params.orderBy,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
      fields: `nextPageToken,incompleteSearch,files(${params.fields ?? DEFAULT_FILE_FIELDS})`,
      // Google lists shared-drive items only when the app both supports them and asks for them.
      supportsAllDrives: params.supportsAllDrives,
      includeItemsFromAllDrives: params.supportsAllDrives,
    },
  });
  return {
    results: res.data.files ?? [],
    ...paged('page_token', res.data.nextPageToken),
    incomplete_search: res.data.incompleteSearch ?? false,
    drive_query: params.q ?? null,
  };
}
