import { type TString, Type } from '@sinclair/typebox';

const UUID = '[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}';

/**
 * What Notion users paste as an id: the hyphenated UUID, its 32 hex characters, or a notion.so /
 * notion.site URL ending in them. Checked by the schema, so a bad id never reaches Notion.
 */
export const NOTION_ID_PATTERN = `^\\s*(?:${UUID}|https?://(?:[\\w-]+\\.)*notion\\.(?:so|site)/\\S*${UUID}\\S*)\\s*$`;

/** A Notion id parameter: hyphenated, 32 hex characters, or the page's URL. */
export function notionId(what: string, example = '9adbce3c-958d-4ca1-8679-b7b8efbfb488'): TString {
  return Type.String({
    pattern: NOTION_ID_PATTERN,
    maxLength: 2048,
    description: `${what} A Notion id, hyphenated ("${example}"), as the 32 hex characters of a page URL, or the notion.so URL itself.`,
  });
}

function hyphenate(hex: string): string {
  const h = hex.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID_AT_END = new RegExp(`(${UUID})$`);
const UUID_ANYWHERE = new RegExp(UUID, 'g');

/**
 * The hyphenated id in what the caller gave. For a URL: the peeked page (`?p=`) when present, else
 * the id ending the last path segment (a page's URL is `…/Title-<32 hex>`; `?v=` names a view, not
 * the page).
 */
export function normalizeId(raw: string): string {
  const value = raw.trim();
  if (/^https?:\/\//i.test(value)) {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    const peek = url?.searchParams.get('p');
    if (peek && new RegExp(`^${UUID}$`).test(peek)) return hyphenate(peek.replaceAll('-', ''));
    const segments = (url?.pathname ?? value).split('/').filter(Boolean);
    for (const segment of segments.reverse()) {
      const match = UUID_AT_END.exec(segment);
      if (match?.[1]) return hyphenate(match[1].replaceAll('-', ''));
    }
    const any = [...value.matchAll(UUID_ANYWHERE)].pop();
    if (any) return hyphenate(any[0].replaceAll('-', ''));
  }
  return hyphenate(value.replaceAll('-', ''));
}

/** An id ready for a path segment. */
export function idSegment(raw: string): string {
  return encodeURIComponent(normalizeId(raw));
}
