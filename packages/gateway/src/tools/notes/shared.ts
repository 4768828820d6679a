import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import type { FieldError } from '../../errors/problem.js';
import { paged } from '../pagination.js';
import { stringEnum } from '../schema.js';
import { type BlockInput, toNotionBlock } from './block-content.js';

function imageUrl(description: string) {
  return Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description });
}

/** Rule 8's external file, the one shape a cover takes and one an icon takes. */
const ExternalImage = Type.Object(
  {
    type: Type.Literal('external', { description: 'Always "external".' }),
    external: Type.Object(
      { url: imageUrl('The http(s) URL of the image.') },
      { additionalProperties: false, description: 'Where the image is: {"url": "https://…"}.' },
    ),
  },
  {
    additionalProperties: false,
    description: 'An external image: {"type": "external", "external": {"url": "https://…"}}.',
  },
);

const EmojiIcon = Type.Object(
  {
    type: Type.Literal('emoji', { description: 'Always "emoji".' }),
    emoji: Type.String({ minLength: 1, maxLength: 64, description: 'One emoji, e.g. "🚀".' }),
  },
  { additionalProperties: false, description: 'An emoji icon: {"type": "emoji", "emoji": "🚀"}.' },
);

/** Portico's earlier shorthand, kept as a wider type: an emoji, or an image URL. */
const IconShorthand = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Shorthand: an emoji ("🚀") or the http(s) URL of an image.',
});
const CoverShorthand = imageUrl('Shorthand: the http(s) URL of an external image.');

const ICON_DESCRIPTION =
  'Page icon (rule 8): {"type": "emoji", "emoji": "🚀"} or {"type": "external", "external": {"url": "https://…"}}; an emoji or an image URL as a plain string is accepted too.';
const COVER_DESCRIPTION =
  'Cover image (rule 8): {"type": "external", "external": {"url": "https://…"}}; the image URL as a plain string is accepted too.';

/** Rule 8's icon shapes first, then the string shorthand (a wider type). */
export const IconSchema = Type.Union([EmojiIcon, ExternalImage, IconShorthand], {
  description: ICON_DESCRIPTION,
});
export const CoverSchema = Type.Union([ExternalImage, CoverShorthand], { description: COVER_DESCRIPTION });
/** On update, null removes the icon or cover. */
export const NullableIconSchema = Type.Union([EmojiIcon, ExternalImage, IconShorthand, Type.Null()], {
  description: `${ICON_DESCRIPTION} null removes it.`,
});
export const NullableCoverSchema = Type.Union([ExternalImage, CoverShorthand, Type.Null()], {
  description: `${COVER_DESCRIPTION} null removes it.`,
});

export type IconInput = Static<typeof NullableIconSchema>;
export type CoverInput = Static<typeof NullableCoverSchema>;

/** An icon as Notion takes it: rule 8's objects as given, the shorthand converted. */
export function toIcon(value: IconInput): Record<string, unknown> | null {
  if (value === null || typeof value === 'object') return value;
  return /^https?:\/\//i.test(value)
    ? { type: 'external', external: { url: value } }
    : { type: 'emoji', emoji: value };
}

export function toCover(value: CoverInput): Record<string, unknown> | null {
  if (value === null || typeof value === 'object') return value;
  return { type: 'external', external: { url: value } };
}

/** POST /v1/pages: a page (or database row) with its properties, optional content, icon and cover. */
export async function createPage(
  client: ProviderClient,
  parent: Record<string, unknown>,
  properties: Record<string, unknown>,
  input: { child_blocks?: BlockInput[]; icon?: IconInput; cover?: CoverInput },
): Promise<Record<string, unknown>> {
  const res = await client.request({
    method: 'POST',
    path: '/v1/pages',
    json: {
      parent,
      properties,
      ...(input.child_blocks ? { children: input.child_blocks.map(toNotionBlock) } : {}),
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
/**
 * The specification types page_size of notes_page_content_get and notes_user_list as a number of
 * at most 100: a fraction is accepted and rounded down (`wholePageSize`), below 1 is refused.
 */
export const PageSizeNumberSchema = Type.Number({
  minimum: 1,
  maximum: 100,
  description: 'How many results to return, 1-100 (a fraction is rounded down; Notion default 100).',
});

/** Notion takes whole page sizes only. */
export function wholePageSize(pageSize: number | undefined): number | undefined {
  return pageSize === undefined ? undefined : Math.floor(pageSize);
}

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
