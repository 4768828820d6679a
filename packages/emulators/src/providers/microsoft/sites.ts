import type { FastifyReply } from 'fastify';
import { type GraphCall, metadata, sendJson } from './call.js';
import { invalidRequest, itemNotFound } from './errors.js';
import type { Drive, Site } from './model.js';
import { siteWebUrl } from './model.js';
import { driveJson, siteJson } from './serialize.js';

export type SiteLookup = { ok: true; site: Site; next: number } | { ok: false; send: () => FastifyReply };

const siteNotFound = (call: GraphCall) => () =>
  itemNotFound(call.req, call.reply, 'Requested site could not be found');

/**
 * Resolves the site addressed from `segments[at]` on: `root`, a composite id
 * (`host,siteCollectionId,webId`), a bare hostname, or `host:/server/relative/path:`.
 */
export function resolveSite(call: GraphCall, segments: string[], at: number): SiteLookup {
  const sites = call.tenant.sites;
  const first = segments[at] ?? '';
  if (first === 'root') return { ok: true, site: sites.find((s) => s.isRoot)!, next: at + 1 };
  if (first.endsWith(':')) {
    const hostname = first.slice(0, -1).toLowerCase();
    const parts: string[] = [];
    let next = at + 1;
    while (next < segments.length) {
      const segment = segments[next++]!;
      if (segment.endsWith(':')) {
        parts.push(segment.slice(0, -1));
        break;
      }
      parts.push(segment);
    }
    const path = `/${parts.filter((p) => p !== '').join('/')}`.toLowerCase();
    const site = sites.find((s) => s.hostname === hostname && s.path.toLowerCase() === path);
    return site ? { ok: true, site, next } : { ok: false, send: siteNotFound(call) };
  }
  if (first.includes(',')) {
    const [host, collection, web] = first.toLowerCase().split(',');
    const site = sites.find(
      (s) =>
        s.hostname === host &&
        s.siteCollectionId === collection &&
        (web === undefined || web === '' || s.webId === web),
    );
    return site ? { ok: true, site, next: at + 1 } : { ok: false, send: siteNotFound(call) };
  }
  if (first.includes('.')) {
    const site = sites.find((s) => s.isRoot && s.hostname === first.toLowerCase());
    return site ? { ok: true, site, next: at + 1 } : { ok: false, send: siteNotFound(call) };
  }
  const bySiteCollection = sites.find(
    (s) => s.isRoot === false && s.siteCollectionId === first.toLowerCase(),
  );
  if (bySiteCollection) return { ok: true, site: bySiteCollection, next: at + 1 };
  return { ok: false, send: () => invalidRequest(call.req, call.reply, 'Invalid hostname for this tenancy') };
}

export function sendSite(call: GraphCall, site: Site): FastifyReply {
  return sendJson(call, 200, { '@odata.context': metadata(call, 'sites/$entity'), ...siteJson(site) });
}

export function sendSiteList(call: GraphCall, sites: Site[]): FastifyReply {
  return sendJson(call, 200, { '@odata.context': metadata(call, 'sites'), value: sites.map(siteJson) });
}

/** `GET /sites?search=` matches names, descriptions and URLs; `*` (or no search) lists every site. */
export function searchSites(call: GraphCall): FastifyReply {
  const search = (call.query.search ?? '*').trim().replace(/^"|"$/g, '').toLowerCase();
  const sites =
    search === '*' || search === ''
      ? call.tenant.sites
      : call.tenant.sites.filter((site) =>
          [site.displayName, site.name, site.description, siteWebUrl(site)].some((field) =>
            field.toLowerCase().includes(search),
          ),
        );
  return sendSiteList(call, sites);
}

export function followedSites(call: GraphCall): FastifyReply {
  const sites = call.tenant.followedSiteIds
    .map((id) => call.tenant.sites.find((s) => s.id === id))
    .filter((s): s is Site => s !== undefined);
  return sendSiteList(call, sites);
}

export function siteOfDrive(call: GraphCall, drive: Drive): Site {
  if (drive.siteId === call.tenant.personalSite.id) return call.tenant.personalSite;
  return call.tenant.sites.find((s) => s.id === drive.siteId) ?? call.tenant.sites[0]!;
}

export function sendDrive(call: GraphCall, drive: Drive): FastifyReply {
  return sendJson(call, 200, {
    '@odata.context': metadata(call, 'drives/$entity'),
    ...driveJson(call.tenant, siteOfDrive(call, drive), drive),
  });
}

export function sendDriveList(call: GraphCall, site: Site): FastifyReply {
  const drives = site.driveIds
    .map((id) => call.tenant.drives.get(id))
    .filter((d): d is Drive => d !== undefined);
  return sendJson(call, 200, {
    '@odata.context': metadata(call, 'drives'),
    value: drives.map((drive) => driveJson(call.tenant, site, drive)),
  });
}
