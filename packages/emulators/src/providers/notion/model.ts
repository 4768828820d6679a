import type { EmulatedUser } from '../../core/types.js';
import type { RichText } from './rich-text.js';
import type { WorkspaceIdentity } from './users.js';

export type Parent =
  | { type: 'page_id'; page_id: string }
  | { type: 'database_id'; database_id: string }
  | { type: 'block_id'; block_id: string }
  | { type: 'workspace'; workspace: true };

export type Icon = { type: 'emoji'; emoji: string } | { type: 'external'; external: { url: string } };
export type Cover = { type: 'external'; external: { url: string } };

/** Who did something: a person's or a bot's id, rendered as a partial user. */
export type Actor = string;

interface Tracked {
  id: string;
  parent: Parent;
  createdTime: number;
  lastEditedTime: number;
  createdBy: Actor;
  lastEditedBy: Actor;
  /** Notion keeps `archived` and `in_trash` equal under 2022-06-28. */
  inTrash: boolean;
  /** The object whose trashing trashed this one too, so restoring it restores exactly those. */
  trashedWith?: string;
}

/** A block's content as Notion returns it under `block[type]`, minus `children`. */
export type BlockContent = Record<string, unknown>;

export interface BlockRecord extends Tracked {
  type: string;
  content: BlockContent;
  /** Ordered ids of child blocks; child pages and databases appear here by their own ids. */
  childIds: string[];
}

/** The value of one page property, in the response shape of its type (`{type, [type]: value}` minus the id). */
export type PropertyValue = unknown;

export interface PageRecord extends Tracked {
  /** Values keyed by property id, so renaming a database property keeps them. */
  values: Map<string, PropertyValue>;
  icon: Icon | null;
  cover: Cover | null;
  childIds: string[];
}

export interface SelectOption {
  id: string;
  name: string;
  color: string;
  description: string | null;
}

/** One column of a database schema: its type and the type's configuration. */
export interface PropertySchema {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
  description: string | null;
}

export interface DatabaseRecord extends Tracked {
  title: RichText[];
  description: RichText[];
  /** In display order. */
  schema: PropertySchema[];
  icon: Icon | null;
  cover: Cover | null;
  isInline: boolean;
}

export interface CommentRecord {
  id: string;
  parent: { type: 'page_id'; page_id: string } | { type: 'block_id'; block_id: string };
  discussionId: string;
  createdTime: number;
  lastEditedTime: number;
  createdBy: Actor;
  richText: RichText[];
  displayName: { type: 'user' | 'integration' | 'custom'; resolved_name: string | null };
}

/** One emulated user's workspace: everything their integrations can see. */
export interface Workspace {
  owner: EmulatedUser;
  identity: WorkspaceIdentity;
  pages: Map<string, PageRecord>;
  blocks: Map<string, BlockRecord>;
  databases: Map<string, DatabaseRecord>;
  /** In creation order. */
  comments: CommentRecord[];
  /** Bot users of clients that called the API, so they show up in `GET /v1/users`. */
  bots: Set<string>;
}

export interface NotionState {
  workspaces: Map<string, Workspace>;
  /** Integrations' webhook subscriptions (webhooks.ts), by id. */
  webhooks: Map<string, import('./webhooks.js').NotionWebhook>;
  /** What webhooks last saw of each workspace, by owner id. */
  webhookSeen: Map<
    string,
    { pages: Map<string, { edited: number; trashed: boolean; values: string }>; comments: Set<string> }
  >;
}
