import { camelKeys, snakeKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import type { ProviderKey } from '../types.js';
import { segment } from './connections.js';

type Raw = Record<string, unknown>;

/**
 * What chooses a toolset's tools: any of the names, `*` patterns, providers and connections (none
 * of them: the whole catalog), narrowed to the tools with every one of the tags.
 */
export interface ToolsetSelectors {
  description?: string;
  tools?: string[];
  /** `github_issues_*`: `*` stands for any characters. */
  patterns?: string[];
  providers?: ProviderKey[];
  /** Their provider's tools, or their remote MCP server's own. */
  connections?: string[];
  tags?: string[];
  /** How the toolset's MCP URL offers its tools: the list (`full`, default) or the search and call tools. */
  mcpMode?: 'full' | 'search';
}

export interface ToolsetInput extends ToolsetSelectors {
  /** Lower case, digits, `-` and `_`: the last segment of its MCP URL. */
  name: string;
}

/** A change: the fields given replace the toolset's; `null` clears one. */
export type ToolsetChange = {
  [K in keyof ToolsetSelectors]?: ToolsetSelectors[K] | null;
};

export interface Toolset extends ToolsetInput {
  mcpMode: 'full' | 'search';
  /** Its own MCP server, for the same per-user tokens as `/mcp`. */
  mcpUrl: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * Toolsets: named sets of tools of the environment, which `tools.list`, `tools.search` and
 * `tools.for` take (`{ toolset: 'name' }`), each with an MCP URL of its own.
 */
export class Toolsets {
  constructor(private readonly transport: Transport) {}

  /** `ToolsetExistsError` for a taken name; `InvalidInputError` naming what the catalog lacks. */
  async create(input: ToolsetInput): Promise<Toolset> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'POST', path: '/api/v1/toolsets', json: snakeKeys(input) }),
    );
  }

  list(options: { pageSize?: number } = {}): PageList<Toolset> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/toolsets',
        query: { page_size: options.pageSize, page_token: pageToken },
      });
      return { data: raw.data.map((t) => camelKeys<Toolset>(t)), nextPageToken: raw.next_page_token };
    });
  }

  /** `ToolsetNotFoundError` when there is none. */
  async get(name: string): Promise<Toolset> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/toolsets/${segment(name)}` }),
    );
  }

  async update(name: string, change: ToolsetChange): Promise<Toolset> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'PATCH',
        path: `/api/v1/toolsets/${segment(name)}`,
        json: snakeKeys(change),
      }),
    );
  }

  async delete(name: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: `/api/v1/toolsets/${segment(name)}` });
  }
}
