import { camelKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import type { Execution, ExecutionDetail } from '../types.js';
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

  /** One execution with its detail: the problem, the masked input, the output's shape, timings. */
  async get(id: string): Promise<ExecutionDetail> {
    const raw = await this.transport.json<Record<string, unknown>>({
      method: 'GET',
      path: `/api/v1/executions/${segment(id)}`,
    });
    const detail = camelKeys<ExecutionDetail>(raw);
    // The input is the caller's own data and keeps its keys; the gateway's nested objects are camelCased.
    const nested = (value: unknown): never =>
      (value && typeof value === 'object'
        ? camelKeys(value as Record<string, unknown>)
        : (value ?? null)) as never;
    if (raw.output_summary !== undefined) detail.outputSummary = nested(raw.output_summary);
    if (raw.timings !== undefined) detail.timings = nested(raw.timings);
    return detail;
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
