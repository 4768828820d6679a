import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { stringEnum } from '../schema.js';
import { richText } from './rich-text.js';

// The blocks the `notes_` tools write: their input schema, rules and Notion payloads.

/** The block types that hold text, as the tools write them. */
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

/** The types notes_page_content_append writes (rule 2 lists divider too), plus to_do. */
export const APPENDABLE_BLOCK_TYPES = [...TEXT_BLOCK_TYPES, 'divider'] as const;

/** The types notes_block_update changes the text of (a divider has none). */
export const BlockTypeSchema = stringEnum(
  TEXT_BLOCK_TYPES,
  'Block type: paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, quote, callout or code.',
);

const AppendableBlockTypeSchema = stringEnum(
  APPENDABLE_BLOCK_TYPES,
  'Block type (rule 2): paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, code, quote, callout, divider; also to_do.',
);

export const LanguageSchema = stringEnum(
  CODE_LANGUAGES,
  'Language of a code block (only with type "code"), e.g. "python", "typescript", "plain text".',
);

const BLOCK_TEXT =
  'The block text (plain text; long text is split into 2000-character runs as Notion requires).';

export const BlockTextSchema = Type.String({ maxLength: 100_000, description: BLOCK_TEXT });

export const BlockInputSchema = Type.Object(
  {
    type: AppendableBlockTypeSchema,
    text: Type.Optional(
      Type.String({
        maxLength: 100_000,
        description: `${BLOCK_TEXT} Required for every type except divider, which takes none.`,
      }),
    ),
    language: Type.Optional(LanguageSchema),
    checked: Type.Optional(
      Type.Boolean({ description: 'Whether a to_do block is checked (only with type "to_do").' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'One block: {"type": "paragraph", "text": "Hello"}, or {"type": "divider"}.',
  },
);
export type BlockInput = Static<typeof BlockInputSchema>;

/** A list of blocks to write (1-100, Notion's limit per request). */
export function blockList(description: string) {
  return Type.Array(BlockInputSchema, { minItems: 1, maxItems: 100, description });
}

const TEXT_RULE =
  'divider blocks take no text (an empty one is ignored); every other block type requires text';

/**
 * Rules for one block that the schema cannot say: text on every type but divider, `language` only
 * on code, `checked` only on to_do.
 */
export function checkBlock(block: Partial<BlockInput>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  // The block shape has `text`, so a client filling every field sends "" on a divider: harmless.
  if (block.type === 'divider' && block.text !== undefined && block.text !== '') {
    errors.push({
      path: `${path}/text`,
      message: `must be empty or left out for a divider (rule: ${TEXT_RULE}); remove it.`,
    });
  }
  if (block.type !== 'divider' && block.text === undefined) {
    errors.push({
      path: `${path}/text`,
      message: `is required for a ${block.type} block (rule: ${TEXT_RULE}).`,
    });
  }
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

/** The rules of every block of a list given under `field`. */
export function checkBlocks(blocks: BlockInput[] | undefined, field: string): FieldError[] {
  return (blocks ?? []).flatMap((block, i) => checkBlock(block, `/${field}/${i}`));
}

/** The type payload of a block (what goes under `block[type]`); a divider has none. */
export function blockPayload(block: BlockInput, update = false): Record<string, unknown> {
  if (block.type === 'divider') return {};
  const payload: Record<string, unknown> = { rich_text: richText(block.text ?? '') };
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
