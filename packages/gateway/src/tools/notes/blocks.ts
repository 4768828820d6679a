import { Type } from '@sinclair/typebox';
import { Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  BlockTextSchema,
  BlockTypeSchema,
  blockList,
  blockPayload,
  checkBlock,
  checkBlocks,
  LanguageSchema,
  toNotionBlock,
} from './block-content.js';
import { idSegment, normalizeId, notionId } from './ids.js';
import { plainText } from './rich-text.js';
import {
  listResult,
  PageSizeNumberSchema,
  StartCursorSchema,
  wholePageSize,
  withoutRequestId,
} from './shared.js';

/** The specification's invalid condition 4, quoted in the refusal. */
const SAME_TYPE_RULE = "type must equal the block's existing type";

export const notesBlockDelete = defineTool({
  name: 'notes_block_delete',
  provider: 'notion',
  description: `Delete (archive) a Notion block, page or database by id. Notion moves it to the trash together with everything under it (its child blocks are archived too); it can be restored from the trash in Notion. Use notes_page_content_get to find block ids. Returns the archived block.
Example: {"block_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488"}`,
  input: Type.Object(
    { block_id: notionId('The block (or page) to delete.') },
    { additionalProperties: false },
  ),
  annotations: { read_only: false, destructive: true, idempotent: true },
  async run(input, { client }) {
    const res = await client.request({ method: 'DELETE', path: `/v1/blocks/${idSegment(input.block_id)}` });
    return withoutRequestId(res.data);
  },
});

export const notesBlockUpdate = defineTool({
  name: 'notes_block_update',
  provider: 'notion',
  description: `Replace the text of an existing Notion block. Parameters: "block_id", "type", "text", "language" (code only). Supported types: paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, quote, callout, code (with "language"), and to_do (with "checked"). Rules: "type" must equal the block's existing type (a block's type cannot be changed: delete it and append a new one); "language" only for code; "checked" only for to_do. The gateway reads the block first to enforce the type rule and sends no update when it differs. Returns the updated block.
Example: {"block_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488", "type": "code", "text": "print('hi')", "language": "python"}`,
  input: Type.Object(
    {
      block_id: notionId('The block to update.'),
      type: BlockTypeSchema,
      text: BlockTextSchema,
      language: Type.Optional(LanguageSchema),
      checked: Type.Optional(
        Type.Boolean({ description: 'Whether a to_do block is checked (only with type "to_do").' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: false, destructive: true, idempotent: true },
  check: (input) => checkBlock(input, ''),
  async run(input, { client }) {
    const path = `/v1/blocks/${idSegment(input.block_id)}`;
    const current = await client.request<{ type?: string }>({ method: 'GET', path });
    const existing = current.data.type;
    if (existing !== input.type) {
      throw new Problem(
        'invalid_input',
        `Block ${normalizeId(input.block_id)} is a ${existing} block, but "type" is "${input.type}" (rule: ${SAME_TYPE_RULE}). Update it as "${existing}", or delete it and append a new block.`,
        {
          errors: [
            {
              path: '/tool_input/type',
              message: `must be the block's existing type "${existing}" (rule: ${SAME_TYPE_RULE})`,
            },
          ],
        },
      );
    }
    const res = await client.request({
      method: 'PATCH',
      path,
      json: { [input.type]: blockPayload(input, true) },
    });
    return withoutRequestId(res.data);
  },
});

export const notesPageContentAppend = defineTool({
  name: 'notes_page_content_append',
  provider: 'notion',
  description: `Append blocks to the end of a Notion page or block ("block_id"), or after a given child ("after"). "blocks" is a list of {type, text, language?}; types (rule 2): paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, code, quote, callout, divider; also to_do (with "checked"). Rules: 1-100 blocks; a divider takes no text (an empty "text" is ignored), every other type requires "text"; "language" only for code (default "plain text"); "checked" only for to_do. Returns the created blocks with their ids.
Alias: "page_id" for "block_id".
Example: {"block_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488", "blocks": [{"type": "heading_2", "text": "Summary"}, {"type": "paragraph", "text": "All tasks done."}, {"type": "divider"}, {"type": "code", "text": "SELECT 1;", "language": "sql"}]}`,
  input: Type.Object(
    {
      block_id: notionId('The page (or block) to append to.'),
      blocks: blockList('The blocks to append, in order (1-100).'),
      after: Type.Optional(notionId('Insert after this child block instead of at the end.')),
    },
    { additionalProperties: false },
  ),
  aliases: { page_id: { to: 'block_id' } },
  annotations: { read_only: false, destructive: false, idempotent: false },
  check: (input) => checkBlocks(input.blocks, 'blocks'),
  async run(input, { client }) {
    const res = await client.request({
      method: 'PATCH',
      path: `/v1/blocks/${idSegment(input.block_id)}/children`,
      json: {
        children: input.blocks.map(toNotionBlock),
        ...(input.after ? { after: normalizeId(input.after) } : {}),
      },
    });
    return { results: (res.data as { results?: unknown[] }).results ?? [] };
  },
});

/** A block with its text beside Notion's payload: the plain text of its rich text, or its title. */
function withText(block: Record<string, unknown>): Record<string, unknown> {
  const payload = block[String(block.type)] as { rich_text?: unknown; title?: unknown } | undefined;
  if (Array.isArray(payload?.rich_text)) return { ...block, text: plainText(payload.rich_text) };
  if (typeof payload?.title === 'string') return { ...block, text: payload.title };
  return block;
}

export const notesPageContentGet = defineTool({
  name: 'notes_page_content_get',
  provider: 'notion',
  description: `Read the content (child blocks) of a Notion page or block ("block_id"), one page of results at a time, in document order. Each block has its type, Notion's payload and its plain "text". Blocks with has_children=true have nested blocks: read them by calling this tool with the block's id. "page_size" is at most 100 (a fraction is rounded down). Paginated: when has_more is true, call again with next_page merged into the input.
Alias: "page_id" for "block_id".
Example: {"block_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488", "page_size": 50}`,
  input: Type.Object(
    {
      block_id: notionId('The page (or block) whose content to read.'),
      page_size: Type.Optional(PageSizeNumberSchema),
      start_cursor: Type.Optional(StartCursorSchema),
    },
    { additionalProperties: false },
  ),
  aliases: { page_id: { to: 'block_id' } },
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const res = await client.request<{ results?: Array<Record<string, unknown>> }>({
      method: 'GET',
      path: `/v1/blocks/${idSegment(input.block_id)}/children`,
      query: { page_size: wholePageSize(input.page_size), start_cursor: input.start_cursor },
    });
    return listResult(res.data, (res.data.results ?? []).map(withText));
  },
});
