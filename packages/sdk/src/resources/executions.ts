import { camelKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import type { Execution } from '../types.js';
import { segment } from './connections.js';

export interface ListExecutionsOptions {
  toolName?: string;
  identifier?: string;
  status?: 'success' | 'error';
  /** RFC 3339 date-times. */
  since?: string;
  until?: string;
  pageSize?: number;
}

export class Executions {
  constructor(private readonly transport: Transport) {}

  async get(id: string): Promise<Execution> {
    return camelKeys(
      await this.transport.json<Record<string, unknown>>({
        method: 'GET',
        path: `/api/v1/executions/${segment(id)}`,
      }),
    );
  }

  /** Newest first. */
  list(options: ListExecutionsOptions = {}): PageList<Execution> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{
        data: Record<string, unknown>[];
        next_page_token: string | null;
      }>({
        method: 'GET',
        path: '/api/v1/executions',
        query: {
          tool_name: options.toolName,
          identifier: options.identifier,
          status: options.status,
          since: options.since,
          until: options.until,
          page_size: options.pageSize,
          page_token: pageToken,
        },
      });
      return { data: raw.data.map((e) => camelKeys<Execution>(e)), nextPageToken: raw.next_page_token };
    });
  }
}
