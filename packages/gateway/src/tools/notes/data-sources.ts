import type { ProviderClient } from '../../accounts/provider-client.js';
import { Problem } from '../../errors/problem.js';
import { type Column, columnsOf } from './properties.js';

// Notion-Version 2025-09-03 (upstream_version): a database is a container of data sources, and the
// schema and rows live in its data source. The tools learn which shape Notion answers from the
// answers themselves, as the version is the caller's choice and only Notion knows what it means.

/** A database's schema and, from 2025-09-03 on, the data source that holds it. */
export interface DatabaseSchema {
  /** The database as Notion returned it (from 2025-09-03 without `properties`). */
  database: Record<string, unknown>;
  /** The data source holding the schema and rows, or null under versions before 2025-09-03. */
  dataSourceId: string | null;
  /** The data source as Notion returned it, when there is one. */
  dataSource: Record<string, unknown> | null;
  columns: Column[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first data source a 2025-09-03 database lists; null for a database in the older shape. */
export function firstDataSourceId(database: unknown): string | null {
  if (!isRecord(database) || isRecord(database.properties)) return null;
  const sources = database.data_sources;
  if (!Array.isArray(sources)) return null;
  const first: unknown = sources[0];
  return isRecord(first) && typeof first.id === 'string' ? first.id : null;
}

/** GET the database and, when it holds a data source (2025-09-03), the data source with the schema. */
export async function databaseSchema(client: ProviderClient, databaseId: string): Promise<DatabaseSchema> {
  const res = await client.request<Record<string, unknown>>({
    method: 'GET',
    path: `/v1/databases/${encodeURIComponent(databaseId)}`,
  });
  const database = res.data;
  const dataSourceId = firstDataSourceId(database);
  if (!dataSourceId)
    return { database, dataSourceId, dataSource: null, columns: columnsOf(database.properties) };
  const source = await client.request<Record<string, unknown>>({
    method: 'GET',
    path: `/v1/data_sources/${encodeURIComponent(dataSourceId)}`,
  });
  return { database, dataSourceId, dataSource: source.data, columns: columnsOf(source.data.properties) };
}

/** The data source a database holds (2025-09-03), or null under older versions. */
export async function dataSourceIdOf(client: ProviderClient, databaseId: string): Promise<string | null> {
  const res = await client.request({
    method: 'GET',
    path: `/v1/databases/${encodeURIComponent(databaseId)}`,
  });
  return firstDataSourceId(res.data);
}

/**
 * Whether Notion refused a request for being in the other version's shape: an endpoint the version
 * does not have (`invalid_request_url`), or a validation error whose message matches `hint`.
 */
export function isVersionMismatch(error: unknown, hint?: RegExp): boolean {
  if (!(error instanceof Problem) || error.code !== 'upstream_validation') return false;
  const body = error.options.upstream?.body;
  if (!isRecord(body)) return false;
  if (body.code === 'invalid_request_url') return true;
  return hint !== undefined && body.code === 'validation_error' && hint.test(String(body.message ?? ''));
}

/**
 * Queries a database's rows: `POST /v1/databases/{id}/query`, or from 2025-09-03 on its data
 * source's `POST /v1/data_sources/{id}/query` (given, or found when Notion refuses the first).
 */
export async function queryDatabaseRows(
  client: ProviderClient,
  databaseId: string,
  body: Record<string, unknown>,
  options: { dataSourceId?: string | null; filterProperties?: string[] } = {},
): Promise<unknown> {
  const query = { filter_properties: options.filterProperties };
  const queryPath = (dataSourceId: string | null) =>
    dataSourceId
      ? `/v1/data_sources/${encodeURIComponent(dataSourceId)}/query`
      : `/v1/databases/${encodeURIComponent(databaseId)}/query`;
  if (options.dataSourceId !== undefined) {
    return (
      await client.request({ method: 'POST', path: queryPath(options.dataSourceId), query, json: body })
    ).data;
  }
  try {
    return (await client.request({ method: 'POST', path: queryPath(null), query, json: body })).data;
  } catch (error) {
    if (!isVersionMismatch(error)) throw error;
    const dataSourceId = await dataSourceIdOf(client, databaseId);
    if (!dataSourceId) throw error;
    return (await client.request({ method: 'POST', path: queryPath(dataSourceId), query, json: body })).data;
  }
}

/** The parent of a new row: the database's data source from 2025-09-03 on, else the database. */
export function rowParent(databaseId: string, dataSourceId: string | null): Record<string, unknown> {
  return dataSourceId
    ? { type: 'data_source_id', data_source_id: dataSourceId }
    : { type: 'database_id', database_id: databaseId };
}
