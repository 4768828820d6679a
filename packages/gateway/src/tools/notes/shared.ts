import { Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import type { FieldError } from '../../errors/problem.js';
import { paged } from '../pagination.js';
import { stringEnum } from '../schema.js';
import { type BlockInput, toNotionBlock } from './block-content.js';

export const IconSchema = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Page icon: an emoji ("🚀") or the https URL of an image.',
});
export const CoverSchema = Type.String({
  format: 'uri',
  pattern: '^https?://',
  maxLength: 2048,
  description: 'Cover image: the http(s) URL of an external image.',
});

export function toIcon(value: string | null): Record<string, unknown> | null {
  if (value === null) return null;
  return /^https?:\/\//i.test(value)
    ? { type: 'external', external: { url: value } }
    : { type: 'emoji', emoji: value };
}

export function toCover(value: string | null): Record<string, unknown> | null {
  return value === null ? null : { type: 'external', external: { url: value } };
}

/** POST /v1/pages: a page (or database row) with its properties, optional content, icon and cover. */
export async function createPage(
  client: ProviderClient,
  parent: Record<string, unknown>,
  properties: Record<string, unknown>,
  input: { blocks?: BlockInput[]; icon?: string | null; cover?: string | null },
): Promise<Record<string, unknown>> {
  const res = await client.request({
    method: 'POST',
    path: '/v1/pages',
    json: {
      parent,
      properties,
      ...(input.blocks ? { children: input.blocks.map(toNotionBlock) } : {}),
      ...(input.icon !== undefined ? { icon: toIcon(input.icon) } : {}),
      ...(input.cover !== undefined ? { cover: toCover(input.cover) } : {}),
    },
  });
  return withoutRequestId(res.data);
}

export const PageSizeSchema = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: 'How many results to return (1-100; Notion default 100).',
});
export const StartCursorSchema = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'Continue a previous listing: pass next_page.start_cursor from the previous result.',
});

/** A Notion list as a tool result: the items, and exactly what to pass to get the next page. */
export function listResult(body: unknown, results = (body as { results?: unknown[] }).results ?? []) {
  const cursor = (body as { next_cursor?: string | null }).next_cursor ?? null;
  return { results, next_cursor: cursor, ...paged('start_cursor', cursor) };
}

/** Notion's answer without the request id (it identifies the HTTP call, not the object). */
export function withoutRequestId(body: unknown): Record<string, unknown> {
  const { request_id: _ignored, ...rest } = (body ?? {}) as Record<string, unknown>;
  return rest;
}

/** A rule violation of the input, as the engine reports it. */
export function rule(path: string, message: string): FieldError {
  return { path, message };
}

/**
 * The "exactly one of a or b" rule: neither is reported at the input's root, both at the second
 * field. The message quotes the rule.
 */
export function exactlyOne(input: Record<string, unknown>, a: string, b: string, why: string): FieldError[] {
  const hasA = input[a] !== undefined;
  const hasB = input[b] !== undefined;
  if (hasA !== hasB) return [];
  return [
    {
      path: hasA ? `/${b}` : '/',
      message: `Provide exactly one of "${a}" or "${b}" (rule: ${why}).`,
    },
  ];
}

export { stringEnum };
