import type { QuickXorHash } from './quick-xor-hash.js';
import type { MicrosoftUser } from './users.js';

/** A SharePoint site (a site collection's root web, or a subsite). */
export interface Site {
  /** `{hostname},{siteCollectionId},{webId}`, Graph's composite site id. */
  id: string;
  siteCollectionId: string;
  webId: string;
  hostname: string;
  /** Server-relative path: "/" for the root site, "/sites/marketing" otherwise. */
  path: string;
  name: string;
  displayName: string;
  description: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
  isRoot: boolean;
  driveIds: string[];
}

/** A document library. */
export interface Drive {
  id: string;
  siteId: string;
  name: string;
  description: string;
  /** `documentLibrary` for a site's library, `business` for a user's OneDrive. */
  driveType: 'documentLibrary' | 'business';
  /** URL path segment of the library, e.g. "Shared%20Documents". */
  urlName: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
  rootId: string;
  items: Map<string, DriveItem>;
}

export interface DriveItem {
  id: string;
  driveId: string;
  /** null for the drive's root folder. */
  parentId: string | null;
  name: string;
  folder: boolean;
  /** The file's bytes as uploaded, kept as received (no concatenation of large uploads). */
  chunks: Buffer[];
  size: number;
  mimeType: string;
  quickXorHash: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
  createdBy: string;
  lastModifiedBy: string;
  /** GUID that eTag and cTag carry; SharePoint's list item unique id. */
  uniqueId: string;
  /** Bumped on every change (eTag) and content change (cTag). */
  version: number;
  contentVersion: number;
}

/** One emulated user's organisation: their SharePoint sites and libraries. */
export interface TenantData {
  user: MicrosoftUser;
  sites: Site[];
  followedSiteIds: string[];
  /** The user's OneDrive lives in a personal site that search and listings do not show. */
  personalSite: Site;
  personalDriveId: string;
  drives: Map<string, Drive>;
}

export interface MicrosoftState {
  /** Lifetime of `@microsoft.graph.downloadUrl` links; tests may lower it. */
  downloadUrlTtlSeconds: number;
  /** Key that signs download links; new on every reset, so old links die with the state. */
  signingKey: Buffer;
  tenants: Map<string, TenantData>;
  /** Resumable uploads in progress (`createUploadSession`), by session id. */
  uploadSessions: Map<string, UploadSession>;
  /** Change-notification subscriptions (subscriptions.ts), by id. */
  subscriptions: Map<string, import('./subscriptions.js').GraphSubscription>;
}

/** A large-file upload: fragments arrive in order at the session's pre-authenticated URL. */
export interface UploadSession {
  id: string;
  userId: string;
  driveId: string;
  /** Item the upload was addressed from, and the path below it (undefined: replace that item). */
  baseId: string;
  path: string[] | undefined;
  conflictBehavior: unknown;
  chunks: Buffer[];
  hash: QuickXorHash;
  received: number;
  total?: number;
  expiresAt: number;
}

export function siteWebUrl(site: Site): string {
  return `https://${site.hostname}${site.path === '/' ? '' : site.path}`;
}

/** SharePoint timestamps are whole seconds: `2024-03-04T09:15:00Z`. */
export function graphDate(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
