import { Type } from '@sinclair/typebox';

// Notion's rich text, as the `notes_` tools write and read it.

/** Notion caps one text object at 2000 characters; longer text is sent as several. */
const TEXT_CHUNK = 2000;

export type RichText = Array<{ type: 'text'; text: { content: string } }>;

/**
 * A rich_text array as Notion takes it: items {"type": "text", "text": {"content": "…"}} (mentions,
 * equations and annotations too; Notion validates them).
 */
export function richTextArray(description: string) {
  return Type.Array(Type.Object({}, { additionalProperties: true }), {
    minItems: 1,
    maxItems: 100,
    description,
  });
}

/** Plain text as Notion rich text (split into 2000-character runs). */
export function richText(text: string): RichText {
  const runs: RichText = [];
  for (let i = 0; i < text.length; i += TEXT_CHUNK) {
    runs.push({ type: 'text', text: { content: text.slice(i, i + TEXT_CHUNK) } });
  }
  return runs.length ? runs : [{ type: 'text', text: { content: '' } }];
}

/** The text of a Notion rich text array. */
export function plainText(value: unknown): string {
  return Array.isArray(value)
    ? value.map((t) => (typeof t?.plain_text === 'string' ? t.plain_text : (t?.text?.content ?? ''))).join('')
    : '';
}
