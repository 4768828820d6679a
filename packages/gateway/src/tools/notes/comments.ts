import { Type } from '@sinclair/typebox';
import { Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { idSegment, normalizeId, notionId } from './ids.js';
import { richText, richTextArray } from './rich-text.js';
import { exactlyOne, listResult, PageSizeSchema, StartCursorSchema, withoutRequestId } from './shared.js';

export const notesCommentCreate = defineTool({
  name: 'notes_comment_create',
  provider: 'notion',
  description: `Add a comment in Notion. "comment" holds a "rich_text" array of {"type": "text", "text": {"content": "…"}} items (sent as they are); {"text": "…"} (plain text) is accepted too. Give exactly one of "parent" ({"page_id": …}) to start a page-level discussion, or "discussion_id" (on every comment from notes_comments_fetch) to reply in a thread. Returns the comment with its id and discussion_id.
Alias: a plain "text" parameter for "comment": {"text": …}.
Example: {"parent": {"page_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488"}, "comment": {"rich_text": [{"type": "text", "text": {"content": "Looks good to me."}}]}}`,
  input: Type.Object(
    {
      comment: Type.Object(
        {
          rich_text: Type.Optional(
            richTextArray(
              'The comment as Notion rich text objects, e.g. [{"type": "text", "text": {"content": "Hi"}}].',
            ),
          ),
          text: Type.Optional(
            Type.String({ minLength: 1, maxLength: 100_000, description: 'The comment as plain text.' }),
          ),
        },
        {
          additionalProperties: false,
          description: 'What the comment says: {"rich_text": [...]} or {"text": "…"}.',
        },
      ),
      parent: Type.Optional(
        Type.Object(
          { page_id: notionId('The page to comment on.') },
          { additionalProperties: false, description: 'Start a new discussion on this page.' },
        ),
      ),
      discussion_id: Type.Optional(notionId('Reply in this discussion thread.')),
    },
    { additionalProperties: false },
  ),
  aliases: { text: { to: 'comment', convert: (text) => ({ text }) } },
  annotations: { read_only: false, destructive: false, idempotent: false },
  check: (input) => [
    ...exactlyOne(
      input,
      'parent',
      'discussion_id',
      'a comment either starts a discussion on a page or replies in an existing discussion',
    ),
    ...exactlyOne(
      input.comment,
      'text',
      'rich_text',
      'a comment is given once, as plain text or as rich text',
    ).map((e) => ({ ...e, path: `/comment${e.path === '/' ? '' : e.path}` })),
  ],
  async run(input, { client }) {
    const target = input.parent
      ? { parent: { page_id: normalizeId(input.parent.page_id) } }
      : { discussion_id: normalizeId(input.discussion_id!) };
    const res = await client.request({
      method: 'POST',
      path: '/v1/comments',
      json: { ...target, rich_text: input.comment.rich_text ?? richText(input.comment.text!) },
    });
    return withoutRequestId(res.data);
  },
});

export const notesCommentsFetch = defineTool({
  name: 'notes_comments_fetch',
  provider: 'notion',
  description: `List the open (unresolved) comments on a Notion page or block, oldest first; each has its discussion_id (reply with notes_comment_create). Paginated: when has_more is true, call again with next_page merged into the input.
Example: {"block_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488", "page_size": 20}`,
  input: Type.Object(
    {
      block_id: notionId('The page or block whose comments to list.'),
      page_size: Type.Optional(PageSizeSchema),
      start_cursor: Type.Optional(StartCursorSchema),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const res = await client.request({
      method: 'GET',
      path: '/v1/comments',
      query: {
        block_id: normalizeId(input.block_id),
        page_size: input.page_size,
        start_cursor: input.start_cursor,
      },
    });
    return listResult(res.data);
  },
});

export const notesCommentRetrieve = defineTool({
  name: 'notes_comment_retrieve',
  provider: 'notion',
  description: `Get one Notion comment by its id ("comment_id", a hyphenated UUID, e.g. from notes_comments_fetch or notes_comment_create): its rich_text, author, timestamps, parent (the page or block it is on) and discussion_id (reply with notes_comment_create). Returns the comment.
"block_id" (optional, accepted from earlier callers) names the page or block the comment should be on; a comment elsewhere is reported as not found.
Example: {"comment_id": "2f1c0a6e-4b1d-4c55-9a59-0d1f6b1a2c3d"}`,
  input: Type.Object(
    {
      comment_id: notionId('The comment to get.', '2f1c0a6e-4b1d-4c55-9a59-0d1f6b1a2c3d'),
      block_id: Type.Optional(
        notionId('Optional: the page or block the comment must be on (not needed to find it).'),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const res = await client.request<{ parent?: { page_id?: string; block_id?: string } }>({
      method: 'GET',
      path: `/v1/comments/${idSegment(input.comment_id)}`,
    });
    if (input.block_id !== undefined) {
      const blockId = normalizeId(input.block_id);
      const on = res.data.parent?.page_id ?? res.data.parent?.block_id;
      if (on !== blockId) {
        throw new Problem(
          'upstream_not_found',
          `Comment ${normalizeId(input.comment_id)} is on ${on ?? 'another object'}, not on block ${blockId}. Omit "block_id" to get the comment wherever it is.`,
          {
            errors: [{ path: '/tool_input/block_id', message: 'is not the page or block the comment is on' }],
          },
        );
      }
    }
    return withoutRequestId(res.data);
  },
});
