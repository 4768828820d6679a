import { createHash } from 'node:crypto';
import type { EmulatedUser } from '../../../core/types.js';
import { type DriveFile, GOOGLE_MIME } from '../shared.js';

const GOOGLE_APPS = 'application/vnd.google-apps.';

export function isNative(f: DriveFile): boolean {
  return f.mimeType.startsWith(GOOGLE_APPS);
}

export function isFolder(f: DriveFile): boolean {
  return f.mimeType === GOOGLE_MIME.folder;
}

/** The shared drive a file is in; undefined for My Drive. */
export function sharedDriveOf(f: DriveFile): string | undefined {
  return typeof f.extra?.driveId === 'string' ? f.extra.driveId : undefined;
}

export function driveUser(user: EmulatedUser) {
  return {
    kind: 'drive#user',
    displayName: user.name,
    photoLink: `https://lh3.googleusercontent.com/a/default-user=s64`,
    me: true,
    permissionId: permissionIdOf(user),
    emailAddress: user.email,
  };
}

export function permissionIdOf(user: EmulatedUser): string {
  return createHash('sha256').update(`perm:${user.id}`).digest().readBigUInt64BE().toString().slice(0, 20);
}

/** Checksums are costly on large uploads, so they are computed once per content version. */
function checksums(f: DriveFile): { md5: string; sha1: string; sha256: string } {
  const cached = f.extra?.checksums as { md5: string; sha1: string; sha256: string; of: Buffer } | undefined;
  if (cached && cached.of === f.content) return cached;
  const content = f.content ?? Buffer.alloc(0);
  const sums = {
    md5: createHash('md5').update(content).digest('hex'),
    sha1: createHash('sha1').update(content).digest('hex'),
    sha256: createHash('sha256').update(content).digest('hex'),
    of: content,
  };
  f.extra = { ...f.extra, checksums: sums };
  return sums;
}

function webViewLink(f: DriveFile): string {
  switch (f.mimeType) {
    case GOOGLE_MIME.folder:
      return `https://drive.google.com/drive/folders/${f.id}`;
    case GOOGLE_MIME.document:
      return `https://docs.google.com/document/d/${f.id}/edit?usp=drivesdk`;
    case GOOGLE_MIME.spreadsheet:
      return `https://docs.google.com/spreadsheets/d/${f.id}/edit?usp=drivesdk`;
    case `${GOOGLE_APPS}presentation`:
      return `https://docs.google.com/presentation/d/${f.id}/edit?usp=drivesdk`;
    default:
      return `https://drive.google.com/file/d/${f.id}/view?usp=drivesdk`;
  }
}

/** Formats each native type exports to (Drive's exportFormats, trimmed to what the emulator renders). */
export const EXPORT_FORMATS: Record<string, string[]> = {
  [GOOGLE_MIME.document]: ['text/plain', 'text/html', 'text/markdown'],
  [GOOGLE_MIME.spreadsheet]: ['text/csv', 'text/tab-separated-values'],
  [`${GOOGLE_APPS}presentation`]: ['text/plain'],
};

export function version(f: DriveFile): number {
  return typeof f.extra?.version === 'number' ? f.extra.version : 1;
}

export function bumpVersion(f: DriveFile, now: number): void {
  f.extra = { ...f.extra, version: version(f) + 1 };
  f.modifiedTime = new Date(now).toISOString();
}

/** The full File resource (what `fields=*` returns); callers narrow it with `fields`. */
export function fileResource(f: DriveFile, owner: EmulatedUser): Record<string, unknown> {
  const me = driveUser(owner);
  const native = isNative(f);
  const out: Record<string, unknown> = {
    kind: 'drive#file',
    id: f.id,
    name: f.name,
    mimeType: f.mimeType,
  };
  if (f.description !== undefined) out.description = f.description;
  Object.assign(out, {
    starred: f.starred,
    trashed: f.trashed,
    explicitlyTrashed: f.trashed && f.extra?.explicitlyTrashed !== false,
    parents: f.parents.length > 0 ? f.parents : undefined,
    properties: f.extra?.properties,
    appProperties: f.extra?.appProperties,
    spaces: ['drive'],
    version: String(version(f)),
    webContentLink: native ? undefined : `https://drive.google.com/uc?id=${f.id}&export=download`,
    webViewLink: webViewLink(f),
    iconLink: `https://drive-thirdparty.googleusercontent.com/16/type/${f.mimeType}`,
    hasThumbnail: f.mimeType.startsWith('image/') || f.mimeType === 'application/pdf',
    thumbnailVersion: '0',
    viewedByMe: true,
    viewedByMeTime: f.modifiedTime,
    createdTime: f.createdTime,
    modifiedTime: f.modifiedTime,
    modifiedByMeTime: f.modifiedTime,
    modifiedByMe: true,
    owners: [me],
    lastModifyingUser: me,
    shared: false,
    ownedByMe: true,
    capabilities: {
      canAddChildren: isFolder(f),
      canComment: true,
      canCopy: !isFolder(f),
      canDelete: true,
      canDownload: !isFolder(f),
      canEdit: true,
      canListChildren: isFolder(f),
      canModifyContent: true,
      canMoveItemWithinDrive: true,
      canReadRevisions: true,
      canRemoveChildren: isFolder(f),
      canRename: true,
      canShare: true,
      canTrash: true,
      canUntrash: true,
    },
    viewersCanCopyContent: true,
    copyRequiresWriterPermission: false,
    writersCanShare: true,
    permissionIds: [me.permissionId],
  });
  if (f.content) {
    const sums = checksums(f);
    const ext = /\.([A-Za-z0-9]+)$/.exec(f.name)?.[1];
    const full = /\.([A-Za-z0-9.]+)$/.exec(f.name)?.[1];
    Object.assign(out, {
      originalFilename: (f.extra?.originalFilename as string | undefined) ?? f.name,
      fullFileExtension: full ?? '',
      fileExtension: ext ?? '',
      md5Checksum: sums.md5,
      sha1Checksum: sums.sha1,
      sha256Checksum: sums.sha256,
      size: String(f.content.length),
      quotaBytesUsed: String(f.content.length),
      headRevisionId: `0B${sums.md5.slice(0, 20)}`,
    });
  } else {
    out.quotaBytesUsed = '0';
  }
  const formats = EXPORT_FORMATS[f.mimeType];
  if (formats) {
    out.exportLinks = Object.fromEntries(
      formats.map((m) => [
        m,
        `https://docs.google.com/feeds/download/export?id=${f.id}&exportFormat=${m.split('/')[1]}`,
      ]),
    );
  }
  const driveId = sharedDriveOf(f);
  if (driveId !== undefined) {
    // The shared drive owns its items: Drive names the drive and no owners.
    Object.assign(out, { driveId, teamDriveId: driveId, owners: undefined, ownedByMe: false });
  }
  out.isAppAuthorized = false;
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/** Every field a File resource can carry, to refuse `fields` selections Drive would refuse. */
export const FILE_FIELDS = new Set([
  'kind',
  'id',
  'name',
  'mimeType',
  'description',
  'starred',
  'trashed',
  'explicitlyTrashed',
  'parents',
  'properties',
  'appProperties',
  'spaces',
  'version',
  'webContentLink',
  'webViewLink',
  'iconLink',
  'hasThumbnail',
  'thumbnailLink',
  'thumbnailVersion',
  'viewedByMe',
  'viewedByMeTime',
  'createdTime',
  'modifiedTime',
  'modifiedByMeTime',
  'modifiedByMe',
  'sharedWithMeTime',
  'sharingUser',
  'owners',
  'teamDriveId',
  'driveId',
  'lastModifyingUser',
  'shared',
  'ownedByMe',
  'capabilities',
  'viewersCanCopyContent',
  'copyRequiresWriterPermission',
  'writersCanShare',
  'permissions',
  'permissionIds',
  'hasAugmentedPermissions',
  'folderColorRgb',
  'originalFilename',
  'fullFileExtension',
  'fileExtension',
  'md5Checksum',
  'sha1Checksum',
  'sha256Checksum',
  'size',
  'quotaBytesUsed',
  'headRevisionId',
  'contentHints',
  'imageMediaMetadata',
  'videoMediaMetadata',
  'isAppAuthorized',
  'exportLinks',
  'shortcutDetails',
  'contentRestrictions',
  'resourceKey',
  'linkShareMetadata',
  'labelInfo',
  'trashedTime',
  'trashingUser',
  'inheritedPermissionsDisabled',
  'downloadRestrictions',
]);
