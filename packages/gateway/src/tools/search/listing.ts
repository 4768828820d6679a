import { createHash } from 'node:crypto';
import { Problem } from '../../errors/problem.js';
import { TAG_PATTERN } from '../tags.js';
import type { SearchHit, ToolFilter, ToolSearch } from './tool-search.js';

/** What a caller asks of the catalog: words to rank by (or none: the catalog's order), filters, a page. */
export interface ToolQuery extends ToolFilter {
  /** A task in plain words; the tools are ranked by how well they fit it. */
  query?: string | undefined;
  /** Default: every tool without `query`, 20 with it. */
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  /** What `accept` depends on (a toolset's name): bound into page tokens with the filters. */
  acceptKey?: string | undefined;
}

export interface ToolListing {
  hits: SearchHit[];
  total: number;
  /** Pass it back as page_token for the next page; null on the last. */
  nextPageToken: string | null;
}

/** Tools a search answers with when the caller names no page size. */
export const DEFAULT_SEARCH_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 200;

/**
 * The catalog as one listing answers it, for every interface (REST, MCP's search tool, gRPC): words
 * ranked by the search index or the registry's order, the filters, and pages whose token is bound
 * to the query and filters it came from (a token used with other ones is refused, not misread).
 */
export function listTools(search: ToolSearch, query: ToolQuery): ToolListing {
  const tags = normaliseTags(query.tags);
  if (tags) {
    const known = search.knownTags();
    const unknown = tags.filter((tag) => !known.has(tag));
    if (unknown.length) {
      throw new Problem(
        'invalid_input',
        `No tool has the tag${unknown.length > 1 ? 's' : ''} ${unknown.map((t) => `"${t}"`).join(', ')}; tags are: ${[...known].sort().join(', ')}.`,
        {
          errors: [{ path: '/tags', message: `must name tags tools have: ${[...known].sort().join(', ')}` }],
        },
      );
    }
  }
  const words = query.query?.trim() || undefined;
  const filter: ToolFilter = { ...query, ...(tags ? { tags } : {}) };
  const binding = bindingOf(words, filter, query.acceptKey);
  const offset = query.pageToken ? decodePageToken(query.pageToken, binding) : 0;
  const limit =
    query.pageSize ?? (words || query.pageToken ? DEFAULT_SEARCH_PAGE_SIZE : Number.MAX_SAFE_INTEGER);
  const page = words
    ? search.search(words, filter, { offset, limit })
    : search.filter(filter, { offset, limit });
  const end = offset + page.hits.length;
  return {
    hits: page.hits,
    total: page.total,
    nextPageToken: end < page.total ? encodePageToken(end, binding) : null,
  };
}

/** Tags as a list, each item possibly "a,b" (a query string's `tags=a,b`). */
function normaliseTags(tags: readonly string[] | undefined): string[] | undefined {
  if (!tags) return undefined;
  const out = [
    ...new Set(
      tags
        .flatMap((t) => t.split(','))
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  const pattern = new RegExp(TAG_PATTERN);
  const bad = out.filter((t) => !pattern.test(t));
  if (bad.length) {
    throw new Problem(
      'invalid_input',
      `Tags are lower-case words with digits, - and _ (e.g. read-only, calendar); ${bad.map((t) => `"${t}"`).join(', ')} is not one.`,
      { errors: [{ path: '/tags', message: 'must be lower-case words with digits, - and _' }] },
    );
  }
  return out.length ? out : undefined;
}

/** What a page token stands for: the words and filters, hashed (a token says nothing of them). */
function bindingOf(words: string | undefined, filter: ToolFilter, acceptKey: string | undefined): string {
  const facts = JSON.stringify([
    acceptKey ?? null,
    words ?? null,
    filter.environmentId ?? null,
    filter.provider ?? null,
    filter.connection?.name ?? null,
    filter.readOnly ?? null,
    filter.tags ?? null,
  ]);
  return createHash('sha256').update(facts).digest('base64url').slice(0, 12);
}

function encodePageToken(offset: number, binding: string): string {
  return Buffer.from(`t1:${offset}:${binding}`).toString('base64url');
}

function decodePageToken(token: string, binding: string): number {
  const match = /^t1:(\d{1,9}):([A-Za-z0-9_-]{12})$/.exec(Buffer.from(token, 'base64url').toString());
  if (!match) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; pass next_page_token unchanged, or leave page_token out for the first page.',
      { errors: [{ path: '/page_token', message: 'is not a token this API returned' }] },
    );
  }
  if (match[2] !== binding) {
    throw new Problem(
      'invalid_input',
      'page_token belongs to another query: send the same query and filters as the request that returned it, or leave page_token out to start over.',
      { errors: [{ path: '/page_token', message: 'was returned for another query or other filters' }] },
    );
  }
  return Number(match[1]);
}
