import { camelKeys, snakeKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import type { Connection, CreateConnectionInput, ProviderKey, UpdateConnectionInput } from '../types.js';

type Raw = Record<string, unknown>;

export class Connections {
  constructor(private readonly transport: Transport) {}

  async create(input: CreateConnectionInput): Promise<Connection> {
    const raw = await this.transport.json<Raw>({
      method: 'POST',
      path: '/api/v1/connections',
      json: snakeKeys(input),
    });
    return camelKeys(raw);
  }

  list(options: { provider?: ProviderKey; pageSize?: number } = {}): PageList<Connection> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/connections',
        query: { provider: options.provider, page_size: options.pageSize, page_token: pageToken },
      });
      return { data: raw.data.map((c) => camelKeys<Connection>(c)), nextPageToken: raw.next_page_token };
    });
  }

  async get(name: string): Promise<Connection> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/connections/${segment(name)}` }),
    );
  }

  async update(name: string, changes: UpdateConnectionInput): Promise<Connection> {
    const raw = await this.transport.json<Raw>({
      method: 'PATCH',
      path: `/api/v1/connections/${segment(name)}`,
      json: snakeKeys(changes),
    });
    return camelKeys(raw);
  }

  /** Deletes the connection; its accounts are revoked at the provider and deleted. */
  async delete(name: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: `/api/v1/connections/${segment(name)}` });
  }
}

export function segment(value: string): string {
  return encodeURIComponent(value);
}
