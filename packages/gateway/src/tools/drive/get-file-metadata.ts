import { Type } from '@sinclair/typebox';
import { type FieldError, Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { checkFields, fieldsParam, supportsAllDrivesParam } from './shared.js';

const DEFAULT_FIELDS =
  'id,name,mimeType,description,size,md5Checksum,createdTime,modifiedTime,parents,webViewLink,webContentLink,iconLink,owners(displayName,emailAddress),lastModifyingUser(displayName,emailAddress),shared,starred,trashed,version,exportLinks';

export const driveGetFileMetadata = defineTool({
  name: 'drive_get_file_metadata',
  provider: 'google_drive',
  description: [
    'Returns the metadata of one Google Drive file or folder by id: name, MIME type, size, parents, owners, times, links (webViewLink to open it, exportLinks for Google Docs/Sheets/Slides) and more with "fields".',
    'Use it after drive_search_files or drive_search_content to inspect a result, or to resolve an id a user pasted (the part after /d/ in a Drive URL). It does not return the content.',
    'A file in a shared drive is found only with supports_all_drives true.',
    'Example: {"file_id":"1AbCdEfGhIjKlMnOpQrStUvWxYz012345","fields":"id,name,mimeType,size,modifiedTime,owners(emailAddress)","supports_all_drives":true}',
  ].join(' '),
  input: Type.Object(
    {
      file_id: Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'Drive file id, e.g. "1AbCdEfGhIjKlMnOpQrStUvWxYz012345", or "root" for My Drive.',
      }),
      fields: Type.Optional(fieldsParam('File fields to return', DEFAULT_FIELDS)),
      supports_all_drives: Type.Optional(supportsAllDrivesParam),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  check(i) {
    const errors: FieldError[] = [];
    checkFields('/fields', i.fields, errors);
    return errors;
  },
  async run(i, { client }) {
    try {
      const res = await client.request<Record<string, unknown>>({
        method: 'GET',
        path: `/drive/v3/files/${encodeURIComponent(i.file_id)}`,
        query: { fields: i.fields ?? DEFAULT_FIELDS, supportsAllDrives: i.supports_all_drives },
      });
      return res.data;
    } catch (error) {
      // Drive hides shared-drive files from a call without supportsAllDrives: say how to reach one.
      if (error instanceof Problem && error.code === 'upstream_not_found' && i.supports_all_drives !== true) {
        throw new Problem(
          error.code,
          `${error.detail} If the file is in a shared drive, call again with supports_all_drives true.`,
          error.options,
        );
      }
      throw error;
    }
  },
});
