import { camelKeys, snakeKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import { segment } from './connections.js';

type Raw = Record<string, unknown>;

export interface McpToken {
  id: string;
  identifier: string;
  /** null: every connection. */
  connectionNames: string[] | null;
  /** null: every tool. */
  tools: string[] | null;
  /** The MCP endpoint the token is for. */
  url: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

export interface MintMcpTokenInput {
  identifier: string;
  connectionNames?: string[];
  tools?: string[];
  /** Seconds (60 s to a year); the gateway's default is 30 days. */
  expiresIn?: number;
}

/** Per-user MCP tokens: what an end user's own MCP client (a desktop agent) authenticates with. */
export class McpTokens {
  constructor(private readonly transport: Transport) {}

  /** The token value is in the answer only: store it or hand it to the user's MCP client now. */
  async create(input: MintMcpTokenInput): Promise<McpToken & { token: string }> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'POST', path: '/api/v1/mcp/tokens', json: snakeKeys(input) }),
    );
  }

  list(options: { identifier?: string; pageSize?: number } = {}): PageList<McpToken> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/mcp/tokens',
        query: { identifier: options.identifier, page_size: options.pageSize, page_token: pageToken },
      });
      return { data: raw.data.map((t) => camelKeys<McpToken>(t)), nextPageToken: raw.next_page_token };
    });
  }

  async revoke(id: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: `/api/v1/mcp/tokens/${segment(id)}` });
  }
}
