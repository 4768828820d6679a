import { Type } from '@sinclair/typebox';
import { Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { normalizeId, notionId } from './ids.js';
import { richText } from './rich-text.js';
import { exactlyOne, listResult, PageSizeSchema, StartCursorSchema, withoutRequestId } from './shared.js';

export const notesCommentCreate = defineTool({
  name: 'notes_comment_create',
  provider: 'notion',
  description: `Add a comment in Notion: either start a new page-level discussion (give "parent": {"page_id": …}) or reply in an existing discussion thread (give "discussion_id", found on every comment from notes_comments_fetch). Rule: exactly one of "parent" or "discussion_id". The comment is {"text": "…"} (plain text) or {"rich_text": [...]} (Notion rich text objects, sent as they are); a plain "text" parameter is accepted as another way to give {"text": …}. Returns the comment with its id and discussion_id.
Example: {"parent": {"page_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488"}, "comment": {"text": "Looks good to me."}}`,
  input: Type.Object(
    {
      parent: Type.Optional(
        Type.Object(
          { page_id: notionId('The page to comment on.') },
          { additionalProperties: false, description: 'Start a new discussion on this page.' },
        ),
      ),
      discussion_id: Type.Optional(notionId('Reply in this discussion thread.')),
      comment: Type.Object(
        {
          text: Type.Optional(
            Type.String({ minLength: 1, maxLength: 100_000, description: 'The comment as plain text.' }),
          ),
          rich_text: Type.Optional(
            Type.Array(Type.Object({}, { additionalProperties: true }), {
              minItems: 1,
              maxItems: 100,
              description: 'The comment as Notion rich text objects, e.g. [{"text": {"content": "Hi"}}].',
            }),
          ),
        },
        {
          additionalProperties: false,
          description: 'What the comment says: {"text": "…"} or {"rich_text": [...]}.',
        },
      ),
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

/** How many pages of comments notes_comment_retrieve reads before giving up. */
const MAX_COMMENT_PAGES = 20;

export const notesCommentRetrieve = defineTool({
  name: 'notes_comment_retrieve',
  provider: 'notion',
  description: `Get one Notion comment by id, with the other comments of its discussion thread. Notion's API has no "get comment by id", so the gateway lists the comments of the page or block the comment is on ("block_id") and picks it; give the block_id the comment belongs to. Returns {comment, discussion: {id, comments}}.
Example: {"comment_id": "2f1c0a6e-4b1d-4c55-9a59-0d1f6b1a2c3d", "block_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488"}`,
  input: Type.Object(
    {
      comment_id: notionId('The comment to get.', '2f1c0a6e-4b1d-4c55-9a59-0d1f6b1a2c3d'),
      block_id: notionId('The page or block the comment is on.'),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const commentId = normalizeId(input.comment_id);
    const blockId = normalizeId(input.block_id);
    const all: Array<{ id?: string; discussion_id?: string }> = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_COMMENT_PAGES; page++) {
      const res = await client.request<{ results?: typeof all; next_cursor?: string | null }>({
        method: 'GET',
        path: '/v1/comments',
        query: { block_id: blockId, page_size: 100, start_cursor: cursor },
      });
      all.push(...(res.data.results ?? []));
      cursor = res.data.next_cursor ?? undefined;
      if (!cursor) break;
    }
    const comment = all.find((c) => c.id === commentId);
    if (!comment) {
      throw new Problem(
        'upstream_not_found',
        `Notion has no open comment ${commentId} on block ${blockId} (${all.length} comments there). Check the comment id, or give the block_id of the page or block the comment is on; resolved comments are not returned by Notion.`,
      );
    }
    return {
      comment,
      discussion: {
        id: comment.discussion_id,
        comments: all.filter((c) => c.discussion_id === comment.discussion_id),
      },
    };
  },
});
