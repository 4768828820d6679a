import { type Drive, type DriveItem, type Site, siteWebUrl, type TenantData } from './model.js';

/** Names of the folders from the drive root down to (not including) the item. */
export function ancestorNames(drive: Drive, item: DriveItem): string[] {
  const names: string[] = [];
  let parentId = item.parentId;
  while (parentId && parentId !== drive.rootId) {
    const parent = drive.items.get(parentId);
    if (!parent) break;
    names.unshift(parent.name);
    parentId = parent.parentId;
  }
  return names;
}

function encodePath(names: string[]): string {
  return names.map((n) => encodeURIComponent(n).replace(/%2F/g, '/')).join('/');
}

function identity(tenant: TenantData, userId: string): Record<string, unknown> {
  const user = tenant.user.id === userId ? tenant.user : undefined;
  return user
    ? { user: { email: user.email, id: user.id, displayName: user.name } }
    : { user: { displayName: 'System Account' } };
}

export function siteJson(site: Site): Record<string, unknown> {
  const body: Record<string, unknown> = {
    createdDateTime: site.createdDateTime,
    description: site.description,
    id: site.id,
    lastModifiedDateTime: site.lastModifiedDateTime,
    name: site.name,
    webUrl: siteWebUrl(site),
    displayName: site.displayName,
    siteCollection: { hostname: site.hostname },
  };
  if (site.isRoot) body.root = {};
  return body;
}

export function driveJson(tenant: TenantData, site: Site, drive: Drive): Record<string, unknown> {
  let used = 0;
  for (const item of drive.items.values()) used += item.size;
  const total = 27_487_790_694_400;
  return {
    createdDateTime: drive.createdDateTime,
    description: drive.description,
    id: drive.id,
    lastModifiedDateTime: drive.lastModifiedDateTime,
    name: drive.name,
    webUrl: `${siteWebUrl(site)}/${drive.urlName}`,
    driveType: drive.driveType,
    createdBy: { user: { displayName: 'System Account' } },
    owner:
      drive.driveType === 'business'
        ? { user: { email: tenant.user.email, id: tenant.user.id, displayName: tenant.user.name } }
        : { group: { id: site.siteCollectionId, displayName: `${site.displayName} Owners` } },
    quota: { deleted: 0, remaining: total - used, state: 'normal', total, used },
    lastModifiedBy: identity(tenant, tenant.user.id),
  };
}

export function itemPath(drive: Drive, item: DriveItem): string[] {
  return item.parentId === null ? [] : [...ancestorNames(drive, item), item.name];
}

/** A driveItem as Graph serialises it for a SharePoint document library. */
export function itemJson(
  tenant: TenantData,
  site: Site,
  drive: Drive,
  item: DriveItem,
  downloadUrl: string | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (downloadUrl && !item.folder) body['@microsoft.graph.downloadUrl'] = downloadUrl;
  const libraryUrl = `${siteWebUrl(site)}/${drive.urlName}`;
  const path = itemPath(drive, item);
  Object.assign(body, {
    createdDateTime: item.createdDateTime,
    eTag: `"{${item.uniqueId}},${item.version}"`,
    id: item.id,
    lastModifiedDateTime: item.lastModifiedDateTime,
    name: item.name,
    webUrl: path.length === 0 ? libraryUrl : `${libraryUrl}/${encodePath(path)}`,
    cTag: `"c:{${item.uniqueId}},${item.contentVersion}"`,
    size: item.folder ? folderSize(drive, item) : item.size,
    createdBy: identity(tenant, item.createdBy),
    lastModifiedBy: identity(tenant, item.lastModifiedBy),
  });
  if (item.parentId === null) {
    body.parentReference = { driveType: drive.driveType, driveId: drive.id };
  } else {
    const parent = drive.items.get(item.parentId);
    const parentPath = ancestorNames(drive, item);
    body.parentReference = {
      driveType: drive.driveType,
      driveId: drive.id,
      id: item.parentId,
      name: parent?.parentId === null ? drive.name : parent?.name,
      path: `/drives/${drive.id}/root:${parentPath.length ? `/${parentPath.join('/')}` : ''}`,
      siteId: site.siteCollectionId,
    };
  }
  body.fileSystemInfo = {
    createdDateTime: item.createdDateTime,
    lastModifiedDateTime: item.lastModifiedDateTime,
  };
  if (item.folder) {
    let childCount = 0;
    for (const other of drive.items.values()) if (other.parentId === item.id) childCount++;
    body.folder = { childCount };
  } else {
    body.file = { mimeType: item.mimeType, hashes: { quickXorHash: item.quickXorHash } };
  }
  if (item.parentId === null) body.root = {};
  return body;
}

function folderSize(drive: Drive, folder: DriveItem): number {
  let total = 0;
  for (const item of drive.items.values()) {
    if (item.parentId !== folder.id) continue;
    total += item.folder ? folderSize(drive, item) : item.size;
  }
  return total;
}
