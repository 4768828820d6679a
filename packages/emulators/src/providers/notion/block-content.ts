import { shapeError, validationError } from './errors.js';
import { parseId } from './ids.js';
import type { BlockContent } from './model.js';
import { isColor, isRecord, type MentionResolver, parseRichText } from './rich-text.js';

/** Blocks whose content is rich text plus a color (and a few type-specific fields). */
const TEXT_BLOCKS = new Set([
  'paragraph',
  'heading_1',
  'heading_2',
  'heading_3',
  'bulleted_list_item',
  'numbered_list_item',
  'quote',
  'toggle',
  'to_do',
  'callout',
]);

const MEDIA_BLOCKS = new Set(['image', 'video', 'file', 'pdf', 'audio']);

export const CREATABLE_BLOCK_TYPES = new Set([
  ...TEXT_BLOCKS,
  ...MEDIA_BLOCKS,
  'code',
  'divider',
  'bookmark',
  'embed',
  'equation',
  'table_of_contents',
  'breadcrumb',
]);

/** Types the API knows but the emulator does not create (tables, columns, synced blocks…). */
const KNOWN_BLOCK_TYPES = new Set([
  ...CREATABLE_BLOCK_TYPES,
  'child_page',
  'child_database',
  'column_list',
  'column',
  'table',
  'table_row',
  'synced_block',
  'template',
  'link_to_page',
  'link_preview',
]);

/** Block types that may hold nested children. */
const PARENT_BLOCKS = new Set([
  'paragraph',
  'bulleted_list_item',
  'numbered_list_item',
  'quote',
  'toggle',
  'to_do',
  'callout',
]);

export interface BlockRequest {
  type: string;
  content: BlockContent;
  children: BlockRequest[];
}

/** Notion lets one request nest children two levels below the appended blocks. */
const MAX_NESTING = 2;

export function blockTypeKeys(body: Record<string, unknown>): string[] {
  return Object.keys(body).filter((key) => KNOWN_BLOCK_TYPES.has(key));
}

function caption(raw: unknown, path: string, resolve?: MentionResolver) {
  return raw === undefined ? [] : parseRichText(raw, path, resolve);
}

/**
 * A media block's file: a link (`external`) or an upload made with the File Upload API
 * (`file_upload`), kept by id so reads can sign a fresh link to its bytes.
 */
function parseMedia(
  raw: Record<string, unknown>,
  at: string,
  resolve: MentionResolver | undefined,
  previous: BlockContent | undefined,
): BlockContent {
  const captionValue =
    raw.caption === undefined ? (previous?.caption ?? []) : caption(raw.caption, `${at}.caption`, resolve);
  if (raw.type === 'file_upload' || raw.file_upload !== undefined) {
    const id = isRecord(raw.file_upload) ? parseId(raw.file_upload.id) : null;
    if (!id) throw shapeError('body', `${at}.file_upload.id`, 'a valid uuid', raw.file_upload);
    return { caption: captionValue, type: 'file_upload', file_upload: { id } };
  }
  if (raw.external === undefined && previous) return { ...previous, caption: captionValue };
  const external = raw.external;
  if (!isRecord(external) || typeof external.url !== 'string') {
    throw shapeError(
      'body',
      `${at}.external.url`,
      'a string (or give `file_upload: { id }` for a file sent with the File Upload API)',
      raw.external,
    );
  }
  return { caption: captionValue, type: 'external', external: { url: external.url } };
}

/**
 * Parses a block's type payload. With `previous`, fields left out keep their value (a PATCH);
 * without it, required fields must be present (a create).
 */
export function parseBlockContent(
  type: string,
  raw: Record<string, unknown>,
  path: string,
  resolve?: MentionResolver,
  previous?: BlockContent,
): BlockContent {
  const at = `${path}.${type}`;
  const keep = <T>(key: string, fallback: T): T =>
    previous && key in previous ? (previous[key] as T) : fallback;
  const richText = () => {
    if (raw.rich_text === undefined) {
      if (previous) return previous.rich_text;
      throw shapeError('body', `${at}.rich_text`, 'defined', undefined);
    }
    return parseRichText(raw.rich_text, `${at}.rich_text`, resolve);
  };
  const color = (fallback: string) => {
    if (raw.color === undefined) return keep('color', fallback);
    if (!isColor(raw.color)) throw shapeError('body', `${at}.color`, 'a valid color', raw.color);
    return raw.color;
  };
  if (TEXT_BLOCKS.has(type)) {
    const content: BlockContent = {
      rich_text: richText(),
      color: color(type === 'callout' ? 'gray_background' : 'default'),
    };
    if (type.startsWith('heading_')) {
      const toggleable = raw.is_toggleable ?? keep('is_toggleable', false);
      if (typeof toggleable !== 'boolean')
        throw shapeError('body', `${at}.is_toggleable`, 'a boolean', toggleable);
      content.is_toggleable = toggleable;
    }
    if (type === 'to_do') {
      const checked = raw.checked ?? keep('checked', false);
      if (typeof checked !== 'boolean') throw shapeError('body', `${at}.checked`, 'a boolean', checked);
      content.checked = checked;
    }
    if (type === 'callout') {
      const icon = raw.icon ?? keep('icon', { type: 'emoji', emoji: '💡' });
      content.icon = icon;
    }
    return content;
  }
  if (MEDIA_BLOCKS.has(type)) return parseMedia(raw, at, resolve, previous);
  switch (type) {
    case 'code': {
      const language = raw.language ?? keep<unknown>('language', undefined);
      if (typeof language !== 'string') throw shapeError('body', `${at}.language`, 'a string', language);
      return {
        caption:
          raw.caption === undefined ? keep('caption', []) : caption(raw.caption, `${at}.caption`, resolve),
        rich_text: richText(),
        language,
      };
    }
    case 'bookmark':
    case 'embed': {
      const url = raw.url ?? keep<unknown>('url', undefined);
      if (typeof url !== 'string') throw shapeError('body', `${at}.url`, 'a string', url);
      return {
        caption:
          raw.caption === undefined ? keep('caption', []) : caption(raw.caption, `${at}.caption`, resolve),
        url,
      };
    }
    case 'equation': {
      const expression = raw.expression ?? keep<unknown>('expression', undefined);
      if (typeof expression !== 'string')
        throw shapeError('body', `${at}.expression`, 'a string', expression);
      return { expression };
    }
    case 'table_of_contents':
      return { color: color('default') };
    case 'divider':
    case 'breadcrumb':
      return {};
    default:
      throw validationError(`Block type ${type} is not supported for creation via the API.`);
  }
}

/** Parses the `children` array of an append or page create. */
export function parseBlockRequests(
  raw: unknown,
  path: string,
  resolve?: MentionResolver,
  depth = 0,
): BlockRequest[] {
  if (!Array.isArray(raw)) throw shapeError('body', path, 'an array', raw);
  if (raw.length > 100) throw shapeError('body', `${path}.length`, '≤ `100`', raw.length);
  return raw.map((item, index) => {
    const at = `${path}[${index}]`;
    if (!isRecord(item)) throw shapeError('body', at, 'an object', item);
    const keys = blockTypeKeys(item);
    const type = typeof item.type === 'string' ? item.type : keys[0];
    if (type === undefined || keys.length === 0) {
      throw validationError(
        `body failed validation: ${at} should define a block type such as \`paragraph\`, instead was \`${JSON.stringify(item)}\`.`,
      );
    }
    if (!keys.includes(type) || keys.length > 1) {
      throw shapeError('body', `${at}.${type}`, 'the only block type present', item[type]);
    }
    if (!CREATABLE_BLOCK_TYPES.has(type))
      throw validationError(`Block type ${type} is not supported for creation via the API.`);
    const payload = item[type];
    if (!isRecord(payload)) throw shapeError('body', `${at}.${type}`, 'an object', payload);
    const content = parseBlockContent(type, payload, at, resolve);
    let children: BlockRequest[] = [];
    if (payload.children !== undefined) {
      const nestable =
        PARENT_BLOCKS.has(type) || (type.startsWith('heading_') && content.is_toggleable === true);
      if (!nestable || depth >= MAX_NESTING) {
        throw shapeError('body', `${at}.${type}.children`, 'not present', payload.children);
      }
      children = parseBlockRequests(payload.children, `${at}.${type}.children`, resolve, depth + 1);
    }
    return { type, content, children };
  });
}
