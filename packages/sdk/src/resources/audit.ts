import { camelKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';

/** One action in the gateway's audit log (append-only). */
export interface AuditEntry {
  id: string;
  /** RFC 3339 date-time. */
  at: string;
  actorType: 'client' | 'admin' | 'cli' | 'link' | 'system';
  /** A gateway client's id, a dashboard admin's username, the OS user of a CLI command. */
  actorId: string;
  /** What authenticated the actor (a client id, "session", "password", "shell"); never a secret. */
  credential: string | null;
  /** e.g. `connection.created`, `client.revoked`, `admin.signed_in`, `keys.rotated`. */
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  statusCode: number | null;
  details: Record<string, unknown>;
}

export interface AuditFilters {
  actorId?: string;
  actorType?: AuditEntry['actorType'];
  /** An action, or a prefix ending with "." (`connection.`). */
  action?: string;
  resourceType?: string;
  resourceId?: string;
  /** RFC 3339 date-times. */
  since?: string;
  until?: string;
}

export interface ListAuditOptions extends AuditFilters {
  pageSize?: number;
}

const query = (filters: AuditFilters) => ({
  actor_id: filters.actorId,
  actor_type: filters.actorType,
  action: filters.action,
  resource_type: filters.resourceType,
  resource_id: filters.resourceId,
  since: filters.since,
  until: filters.until,
});

/** The audit log (needs the `audit:read` scope). */
export class Audit {
  constructor(private readonly transport: Transport) {}

  /** Newest first; `await` it for a page, `for await` it for every entry. */
  list(options: ListAuditOptions = {}): PageList<AuditEntry> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{
        data: Record<string, unknown>[];
        next_page_token: string | null;
      }>({
        method: 'GET',
        path: '/api/v1/audit',
        query: { ...query(options), page_size: options.pageSize, page_token: pageToken },
      });
      return { data: raw.data.map((e) => camelKeys<AuditEntry>(e)), nextPageToken: raw.next_page_token };
    });
  }

  /** Every entry the filters select, newest first, streamed from the JSON-lines export. */
  async *export(filters: AuditFilters = {}): AsyncGenerator<AuditEntry> {
    const res = await this.transport.send({
      method: 'GET',
      path: '/api/v1/audit/export',
      query: query(filters),
      headers: { accept: 'application/x-ndjson' },
    });
    if (!res.body) return;
    const decoder = new TextDecoder();
    let rest = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      rest += decoder.decode(chunk, { stream: true });
      let newline = rest.indexOf('\n');
      while (newline !== -1) {
        const line = rest.slice(0, newline);
        rest = rest.slice(newline + 1);
        if (line.trim()) yield camelKeys<AuditEntry>(JSON.parse(line) as Record<string, unknown>);
        newline = rest.indexOf('\n');
      }
    }
    rest += decoder.decode();
    if (rest.trim()) yield camelKeys<AuditEntry>(JSON.parse(rest) as Record<string, unknown>);
  }
}
