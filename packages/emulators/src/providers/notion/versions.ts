import { NotionApiError } from './errors.js';

/** The Notion API versions the emulator answers, each in its own shape. */
export const LEGACY_VERSION = '2022-06-28';
export const DATA_SOURCE_VERSION = '2025-09-03';

/**
 * Versions Notion has published. Those before 2025-09-03 get the 2022-06-28 shape (databases hold
 * their schema and rows); 2025-09-03 gets databases that contain data sources.
 */
export const KNOWN_VERSIONS: ReadonlySet<string> = new Set([
  '2021-05-13',
  '2021-05-11',
  '2021-08-16',
  '2022-02-22',
  LEGACY_VERSION,
  DATA_SOURCE_VERSION,
]);

/** Whether a version sees databases as containers of data sources (2025-09-03 and later). */
export function usesDataSources(version: string | undefined): boolean {
  return version !== undefined && version >= DATA_SOURCE_VERSION;
}

/**
 * Refuses an endpoint the caller's version does not have (`/v1/databases/{id}/query` from
 * 2025-09-03 on, `/v1/data_sources` before it), as Notion answers an unknown URL.
 */
export function requireDataSources(version: string, wanted: boolean): void {
  if (usesDataSources(version) !== wanted) {
    throw new NotionApiError(400, 'invalid_request_url', 'Invalid request URL.');
  }
}
