import type { EmulatedUser } from '../../core/types.js';
import { stableId } from './ids.js';

/**
 * The people who can sign in to the emulated Notion; each owns one workspace. Ids are Notion user
 * ids (UUIDs) and never change, so tests and docs can name them.
 */
export const notionUsers: EmulatedUser[] = [
  { id: 'ada00000-0000-4000-8000-000000000001', name: 'Ada Lovelace', email: 'ada.lovelace@example.com' },
  { id: '9ace0000-0000-4000-8000-000000000002', name: 'Grace Hopper', email: 'grace.hopper@example.com' },
  {
    id: 'ca7e0000-0000-4000-8000-000000000003',
    name: 'Katherine Johnson',
    email: 'katherine.johnson@example.com',
  },
];

/** A member of a workspace: the owner who signs in, or a teammate who only appears in data. */
export interface WorkspaceMember {
  id: string;
  name: string;
  email: string;
  avatarUrl: string | null;
}

export interface WorkspaceIdentity {
  id: string;
  name: string;
  icon: string | null;
  members: WorkspaceMember[];
}

const teammates: Record<string, { name: string; email: string }> = {
  [notionUsers[0]!.id]: { name: 'Charles Babbage', email: 'charles.babbage@example.com' },
  [notionUsers[1]!.id]: { name: 'Howard Aiken', email: 'howard.aiken@example.com' },
  [notionUsers[2]!.id]: { name: 'Dorothy Vaughan', email: 'dorothy.vaughan@example.com' },
};

/** Derived from the user alone, so the token endpoint can describe the workspace without API state. */
export function workspaceOf(user: EmulatedUser): WorkspaceIdentity {
  const firstName = user.name.split(' ')[0] ?? user.name;
  const teammate = teammates[user.id];
  const members: WorkspaceMember[] = [{ id: user.id, name: user.name, email: user.email, avatarUrl: null }];
  if (teammate) members.push({ id: stableId(`member:${teammate.email}`), ...teammate, avatarUrl: null });
  return { id: stableId(`workspace:${user.id}`), name: `${firstName}'s Workspace`, icon: null, members };
}

export function notionUserById(id: string): EmulatedUser | undefined {
  return notionUsers.find((u) => u.id === id);
}

/** Each OAuth client installed in a workspace is its own bot user there, as in Notion. */
export function botIdFor(userId: string, clientId: string): string {
  return stableId(`bot:${userId}:${clientId}`);
}

export const BOT_NAME = 'Portico Connector';

export function renderPerson(member: WorkspaceMember): Record<string, unknown> {
  return {
    object: 'user',
    id: member.id,
    name: member.name,
    avatar_url: member.avatarUrl,
    type: 'person',
    person: { email: member.email },
  };
}

export function renderBot(
  owner: EmulatedUser,
  botId: string,
  workspace: WorkspaceIdentity,
): Record<string, unknown> {
  return {
    object: 'user',
    id: botId,
    name: BOT_NAME,
    avatar_url: null,
    type: 'bot',
    bot: {
      owner: {
        type: 'user',
        user: renderPerson({ id: owner.id, name: owner.name, email: owner.email, avatarUrl: null }),
      },
      workspace_name: workspace.name,
      workspace_limits: { max_file_upload_size_in_bytes: 5_368_709_120 },
    },
  };
}
