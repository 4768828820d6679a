import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { stringEnum } from '../schema.js';
import { richText } from './rich-text.js';

// The blocks the `notes_` tools write: their input schema, rules and Notion payloads.

/** The ten block types the text tools write. */
export const TEXT_BLOCK_TYPES = [
  'paragraph',
  'heading_1',
  'heading_2',
  'heading_3',
  'bulleted_list_item',
  'numbered_list_item',
  'to_do',
  'quote',
  'callout',
  'code',
] as const;
export type TextBlockType = (typeof TEXT_BLOCK_TYPES)[number];

/** Languages Notion's code blocks accept. */
export const CODE_LANGUAGES = [
  'abap',
  'arduino',
  'bash',
  'basic',
  'c',
  'clojure',
  'coffeescript',
  'c++',
  'c#',
  'css',
  'dart',
  'diff',
  'docker',
  'elixir',
  'elm',
  'erlang',
  'flow',
  'fortran',
  'f#',
  'gherkin',
  'glsl',
  'go',
  'graphql',
  'groovy',
  'haskell',
  'html',
  'java',
  'javascript',
  'json',
  'julia',
  'kotlin',
  'latex',
  'less',
  'lisp',
  'livescript',
  'lua',
  'makefile',
  'markdown',
  'markup',
  'matlab',
  'mermaid',
  'nix',
  'objective-c',
  'ocaml',
  'pascal',
  'perl',
  'php',
  'plain text',
  'powershell',
  'prolog',
  'protobuf',
  'python',
  'r',
  'reason',
  'ruby',
  'rust',
  'sass',
  'scala',
  'scheme',
  'scss',
  'shell',
  'sql',
  'swift',
  'typescript',
  'vb.net',
  'verilog',
  'vhdl',
  'visual basic',
  'webassembly',
  'xml',
  'yaml',
  'java/c/c++/c#',
] as const;

export const BlockTypeSchema = stringEnum(
  TEXT_BLOCK_TYPES,
  'Block type: paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, quote, callout or code.',
);

export const LanguageSchema = stringEnum(
  CODE_LANGUAGES,
  'Language of a code block (only with type "code"), e.g. "python", "typescript", "plain text".',
);

export const BlockTextSchema = Type.String({
  maxLength: 100_000,
  description: 'The block text (plain text; long text is split into 2000-character runs as Notion requires).',
});

export const BlockInputSchema = Type.Object(
  {
    type: BlockTypeSchema,
    text: BlockTextSchema,
    language: Type.Optional(LanguageSchema),
    checked: Type.Optional(
      Type.Boolean({ description: 'Whether a to_do block is checked (only with type "to_do").' }),
    ),
  },
  { additionalProperties: false, description: 'One block: {"type": "paragraph", "text": "Hello"}.' },
);
export type BlockInput = Static<typeof BlockInputSchema>;

/** Rules for one block that the schema cannot say (`language` only on code, `checked` only on to_do). */
export function checkBlock(block: Partial<BlockInput>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (block.language !== undefined && block.type !== 'code') {
    errors.push({
      path: `${path}/language`,
      message: `"language" is only allowed when "type" is "code" (rule: only code blocks have a language); remove it or set type "code".`,
    });
  }
  if (block.checked !== undefined && block.type !== 'to_do') {
    errors.push({
      path: `${path}/checked`,
      message: `"checked" is only allowed when "type" is "to_do" (rule: only to-do blocks can be checked); remove it or set type "to_do".`,
    });
  }
  return errors;
}

/** The type payload of a block (what goes under `block[type]`). */
export function blockPayload(block: BlockInput, update = false): Record<string, unknown> {
  const payload: Record<string, unknown> = { rich_text: richText(block.text) };
  if (block.type === 'code' && (block.language !== undefined || !update)) {
    payload.language = block.language ?? 'plain text';
  }
  if (block.type === 'to_do' && block.checked !== undefined) payload.checked = block.checked;
  return payload;
}

/** A block as Notion's append/create endpoints take it. */
export function toNotionBlock(block: BlockInput): Record<string, unknown> {
  return { object: 'block', type: block.type, [block.type]: blockPayload(block) };
}
