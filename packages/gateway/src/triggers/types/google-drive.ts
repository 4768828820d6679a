import { type Static, type TObject, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { Problem } from '../../errors/problem.js';
import type { Cursor, Observation, PollResult, TriggerType } from '../definition.js';
import { googleWatch } from './google-push.js';
import { changesParam, epochOf } from './shared.js';

interface DriveFile {
  id: string;
  name?: string;
  mimeType?: string;
  parents?: string[];
  createdTime?: string;
  modifiedTime?: string;
  version?: string;
  trashed?: boolean;
  [field: string]: unknown;
}

interface ChangeList {
  changes?: Array<{ fileId: string; removed?: boolean; time?: string; file?: DriveFile }>;
  nextPageToken?: string;
  newStartPageToken?: string;
}

const FILE_FIELDS =
  'id,name,mimeType,parents,createdTime,modifiedTime,version,trashed,size,webViewLink,lastModifyingUser(displayName,emailAddress)';
const CHANGE_FIELDS = `nextPageToken,newStartPageToken,changes(fileId,removed,time,file(${FILE_FIELDS}))`;
/** More pages than this in one poll is a feed too busy to follow at this interval. */
const MAX_PAGES = 20;

const SPREADSHEET = 'application/vnd.google-apps.spreadsheet';
const DOCUMENT = 'application/vnd.google-apps.document';

/** Drive's id for a file or folder. */
const fileId = (what: string) =>
  Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: what });

const FilesConfig = Type.Object(
  {
    folder_id: Type.Optional(
      fileId('Only files directly in this folder (a folder id); the whole of My Drive when left out.'),
    ),
    changes: changesParam(['created', 'updated', 'removed']),
  },
  { additionalProperties: false },
);
type FilesConfig = Static<typeof FilesConfig>;

/**
 * Files created or changed in My Drive, or in one folder, read from Drive's change log
 * (changes.getStartPageToken, then changes.list from the saved page token). A file unseen before
 * is "created" when Drive dates its creation after the subscription started; a trashed file is an
 * update (its `trashed` says so); one deleted for good is "removed".
 */
export const driveFiles: TriggerType<FilesConfig> = {
  name: 'drive_files',
  provider: 'google_drive',
  description:
    'A file was created, changed (content, name, place, trashed) or removed in My Drive or in one folder. The event carries the Drive file resource.',
  config: FilesConfig,
  changes: ['created', 'updated', 'deleted'],
  changeNames: { deleted: 'removed' },
  mechanism: 'Drive change tokens (changes.getStartPageToken, changes.list); a refused token starts a resync',
  async baseline({ client, config }) {
    const token = await startPageToken(client);
    // The folder's files now, so a later removal from it is recognised.
    const observations = config.folder_id ? (await folderFiles(client, config.folder_id)).map(observe) : [];
    return { cursor: { page_token: token, checked_at: Date.now() }, observations };
  },
  async poll({ client, config }, cursor) {
    const inFolder = (f: DriveFile | undefined) =>
      !config.folder_id || (f?.parents ?? []).includes(config.folder_id);
    const read = await readChanges(
      client,
      cursor,
      (change) => change.removed === true || inFolder(change.file),
    );
    if (read) return read;
    // Drive refused the page token: what changed since the last poll, listed instead.
    return resync(client, config.folder_id, cursor);
  },
  push: driveChangesWatch(),
};

const FileConfig = (what: string) =>
  Type.Object(
    {
      [`${what}_id`]: fileId(`The ${what}'s id (the part of its URL after /d/).`),
      changes: changesParam(['updated', 'removed']),
    },
    { additionalProperties: false, required: [`${what}_id`] },
  ) as TObject;

/** One native file (a spreadsheet, a document) changed, read from Drive's change log filtered to it. */
function oneFile(
  name: string,
  kind: 'spreadsheet' | 'document',
  mimeType: string,
): TriggerType<Record<string, string>> {
  const key = `${kind}_id`;
  return {
    name,
    provider: 'google_drive',
    description: `A ${kind} was changed (any edit, through the ${kind === 'spreadsheet' ? 'Sheets' : 'Docs'} API, the editor or Drive) or removed. Runs on a Drive connection, whose scopes read Drive's change log. The event carries the Drive file (name, version, modifiedTime, lastModifyingUser).`,
    config: FileConfig(kind),
    changes: ['updated', 'deleted'],
    changeNames: { deleted: 'removed' },
    mechanism: 'Drive change tokens (changes.list) filtered to the file',
    async baseline({ client, config }) {
      const token = await startPageToken(client);
      const file = await client.request<DriveFile>({
        method: 'GET',
        path: `/drive/v3/files/${encodeURIComponent(config[key]!)}`,
        query: { fields: FILE_FIELDS, supportsAllDrives: true },
      });
      if (file.data.mimeType !== mimeType) {
        throw new Problem(
          'invalid_input',
          `${config[key]} is not a ${kind} (Drive says its type is ${file.data.mimeType}); name a ${kind}'s id.`,
          { errors: [{ path: `/config/${key}`, message: `is not a ${kind}` }] },
        );
      }
      return { cursor: { page_token: token, checked_at: Date.now() }, observations: [observe(file.data)] };
    },
    async poll({ client, config }, cursor) {
      const read = await readChanges(client, cursor, (change) => change.fileId === config[key]);
      if (read) return read;
      const file = await client.request<DriveFile>({
        method: 'GET',
        path: `/drive/v3/files/${encodeURIComponent(config[key]!)}`,
        query: { fields: FILE_FIELDS, supportsAllDrives: true },
      });
      return {
        cursor: { page_token: await startPageToken(client), checked_at: Date.now() },
        observations: [observe(file.data)],
      };
    },
    push: driveChangesWatch(),
  };
}

/** Drive's changes.watch from the subscription's page token: notified of every change in the log. */
function driveChangesWatch<C>() {
  return googleWatch<C>({
    async watch(_config, cursor, client) {
      const token = typeof cursor.page_token === 'string' ? cursor.page_token : await startPageToken(client);
      return { path: '/drive/v3/changes/watch', query: { pageToken: token } };
    },
    stopPath: '/drive/v3/channels/stop',
  });
}

export const sheetsSpreadsheet = oneFile('sheets_spreadsheet', 'spreadsheet', SPREADSHEET);
export const docsDocument = oneFile('docs_document', 'document', DOCUMENT);

function observe(file: DriveFile): Observation {
  const createdAt = epochOf(file.createdTime);
  return {
    id: file.id,
    version: file.version ?? file.modifiedTime ?? '',
    ...(createdAt === undefined ? {} : { createdAt }),
    item: file,
  };
}

async function startPageToken(client: ProviderClient): Promise<string> {
  const res = await client.request<{ startPageToken?: string }>({
    method: 'GET',
    path: '/drive/v3/changes/startPageToken',
    query: { supportsAllDrives: true },
  });
  if (!res.data.startPageToken) {
    throw new Problem('upstream_error', 'Google Drive answered without a start page token.', {
      retryable: true,
    });
  }
  return res.data.startPageToken;
}

/**
 * The changes since the cursor that `keep` selects, up to Drive's new start page token; undefined
 * when Drive refuses the token (400 or 404: too old, or from another account).
 */
async function readChanges(
  client: ProviderClient,
  cursor: Cursor,
  keep: (change: NonNullable<ChangeList['changes']>[number]) => boolean,
): Promise<PollResult | undefined> {
  let token = typeof cursor.page_token === 'string' ? cursor.page_token : undefined;
  if (!token) return undefined;
  const observations: Observation[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    let res: { data: ChangeList };
    try {
      res = await client.request<ChangeList>({
        method: 'GET',
        path: '/drive/v3/changes',
        query: { pageToken: token, pageSize: 1000, fields: CHANGE_FIELDS, includeRemoved: true },
      });
    } catch (error) {
      const status = error instanceof Problem ? error.options.upstream?.status : undefined;
      if (page === 0 && (status === 400 || status === 404 || status === 410)) return undefined;
      throw error;
    }
    for (const change of res.data.changes ?? []) {
      if (!keep(change)) continue;
      observations.push(
        change.removed || !change.file
          ? { id: change.fileId, version: '', deleted: true, item: { id: change.fileId } }
          : observe(change.file),
      );
    }
    if (res.data.newStartPageToken) {
      return { cursor: { page_token: res.data.newStartPageToken, checked_at: Date.now() }, observations };
    }
    if (!res.data.nextPageToken) break;
    token = res.data.nextPageToken;
  }
  // Mid-way through a long feed: the next poll goes on from here.
  return { cursor: { page_token: token, checked_at: Date.now() }, observations };
}

/** A fresh start page token and, meanwhile, the files changed since the last poll (the folder's, whole). */
async function resync(
  client: ProviderClient,
  folderId: string | undefined,
  cursor: Cursor,
): Promise<PollResult> {
  const token = await startPageToken(client);
  if (folderId) {
    return {
      cursor: { page_token: token, checked_at: Date.now() },
      observations: (await folderFiles(client, folderId)).map(observe),
      complete: true,
    };
  }
  const since = typeof cursor.checked_at === 'number' ? cursor.checked_at : Date.now();
  const files = await listFiles(client, `modifiedTime > '${new Date(since - 60_000).toISOString()}'`);
  return { cursor: { page_token: token, checked_at: Date.now() }, observations: files.map(observe) };
}

function folderFiles(client: ProviderClient, folderId: string): Promise<DriveFile[]> {
  return listFiles(client, `'${folderId}' in parents and trashed = false`);
}

async function listFiles(client: ProviderClient, q: string): Promise<DriveFile[]> {
  const files: DriveFile[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.request<{ files?: DriveFile[]; nextPageToken?: string }>({
      method: 'GET',
      path: '/drive/v3/files',
      query: { q, pageSize: 1000, pageToken, fields: `nextPageToken,files(${FILE_FIELDS})` },
    });
    files.push(...(res.data.files ?? []));
    if (!res.data.nextPageToken) return files;
    pageToken = res.data.nextPageToken;
  }
  return files;
}
