import { shapeError, validationError } from './errors.js';

export type ApiColor = string;

export interface Annotations {
  bold: boolean;
  italic: boolean;
  strikethrough: boolean;
  underline: boolean;
  code: boolean;
  color: ApiColor;
}

/** A rich text item as Notion returns it. */
export type RichText = {
  type: 'text' | 'mention' | 'equation';
  annotations: Annotations;
  plain_text: string;
  href: string | null;
} & Record<string, unknown>;

const COLORS = new Set([
  'default',
  'gray',
  'brown',
  'orange',
  'yellow',
  'green',
  'blue',
  'purple',
  'pink',
  'red',
  'default_background',
  'gray_background',
  'brown_background',
  'orange_background',
  'yellow_background',
  'green_background',
  'blue_background',
  'purple_background',
  'pink_background',
  'red_background',
]);

export function isColor(value: unknown): value is ApiColor {
  return typeof value === 'string' && COLORS.has(value);
}

/** Notion caps one text item's content at 2000 characters. */
const MAX_TEXT_LENGTH = 2000;

function defaultAnnotations(): Annotations {
  return {
    bold: false,
    italic: false,
    strikethrough: false,
    underline: false,
    code: false,
    color: 'default',
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Builds response text for seeds and titles. */
export function text(
  content: string,
  annotations: Partial<Annotations> = {},
  link: string | null = null,
): RichText {
  return {
    type: 'text',
    text: { content, link: link ? { url: link } : null },
    annotations: { ...defaultAnnotations(), ...annotations },
    plain_text: content,
    href: link,
  };
}

export function plainText(items: RichText[]): string {
  return items.map((item) => item.plain_text).join('');
}

function parseAnnotations(raw: unknown, path: string): Annotations {
  const annotations = defaultAnnotations();
  if (raw === undefined) return annotations;
  if (!isRecord(raw)) throw shapeError('body', path, 'an object', raw);
  for (const key of ['bold', 'italic', 'strikethrough', 'underline', 'code'] as const) {
    const value = raw[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw shapeError('body', `${path}.${key}`, 'a boolean', value);
    annotations[key] = value;
  }
  if (raw.color !== undefined) {
    if (!isColor(raw.color)) throw shapeError('body', `${path}.color`, 'a valid color', raw.color);
    annotations.color = raw.color;
  }
  return annotations;
}

/** Resolves the display text of a mention; the resolver names users and pages like Notion does. */
export type MentionResolver = (mention: Record<string, unknown>) => string;

const MENTION_KINDS = ['user', 'page', 'database', 'date'] as const;

/** Turns request rich text (`[{text:{content}}]`, mentions, equations) into response items. */
export function parseRichText(raw: unknown, path: string, resolveMention?: MentionResolver): RichText[] {
  if (!Array.isArray(raw)) throw shapeError('body', path, 'an array', raw);
  if (raw.length > 100) throw shapeError('body', `${path}.length`, '≤ `100`', raw.length);
  return raw.map((item, index) => parseRichTextItem(item, `${path}[${index}]`, resolveMention));
}

function parseRichTextItem(raw: unknown, path: string, resolveMention?: MentionResolver): RichText {
  if (!isRecord(raw)) throw shapeError('body', path, 'an object', raw);
  const annotations = parseAnnotations(raw.annotations, `${path}.annotations`);
  if (isRecord(raw.text)) {
    const { content, link } = raw.text;
    if (typeof content !== 'string') throw shapeError('body', `${path}.text.content`, 'a string', content);
    if (content.length > MAX_TEXT_LENGTH) {
      throw shapeError('body', `${path}.text.content.length`, `≤ \`${MAX_TEXT_LENGTH}\``, content.length);
    }
    let url: string | null = null;
    if (link !== undefined && link !== null) {
      if (!isRecord(link) || typeof link.url !== 'string')
        throw shapeError('body', `${path}.text.link`, 'an object with url', link);
      url = link.url;
    }
    return {
      type: 'text',
      text: { content, link: url ? { url } : null },
      annotations,
      plain_text: content,
      href: url,
    };
  }
  if (isRecord(raw.equation)) {
    const expression = raw.equation.expression;
    if (typeof expression !== 'string')
      throw shapeError('body', `${path}.equation.expression`, 'a string', expression);
    return { type: 'equation', equation: { expression }, annotations, plain_text: expression, href: null };
  }
  if (isRecord(raw.mention)) {
    const kind = MENTION_KINDS.find(
      (k) => raw.mention !== undefined && isRecord((raw.mention as Record<string, unknown>)[k]),
    );
    if (!kind)
      throw shapeError('body', `${path}.mention`, 'a user, page, database or date mention', raw.mention);
    const target = { ...((raw.mention as Record<string, unknown>)[kind] as Record<string, unknown>) };
    if (kind === 'user') target.object = 'user';
    if (kind === 'date') target.end ??= null;
    if (kind === 'date') target.time_zone ??= null;
    const mention = { type: kind, [kind]: target };
    const label = resolveMention ? resolveMention(mention) : 'Untitled';
    return { type: 'mention', mention, annotations, plain_text: label, href: null };
  }
  throw validationError(
    `body failed validation. Fix one:\n${path}.text should be defined, instead was \`undefined\`.`,
  );
}
