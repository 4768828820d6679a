import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { ProviderContext } from '../../core/types.js';
import type { NotionState, PageRecord, Workspace } from './model.js';

/** A webhook subscription of an integration (its settings page): a URL, verified once. */
export interface NotionWebhook {
  id: string;
  /** The integration's OAuth client id. */
  integrationId: string;
  url: string;
  /** Sent to the URL when the subscription was created; signs every event after. */
  verificationToken: string;
  /** The token was pasted back into the integration's settings: events flow. */
  verified: boolean;
  eventTypes?: string[];
}

interface Seen {
  pages: Map<string, { edited: number; trashed: boolean; values: string }>;
  comments: Set<string>;
}

/**
 * Creates an integration's webhook subscription: Notion POSTs `{"verification_token": …}` to the
 * URL at once; events flow once the token is given back (verifyNotionWebhook), as on the
 * integration's settings page.
 */
export function createNotionWebhook(
  state: NotionState,
  opts: { integrationId: string; url: string; eventTypes?: string[] },
): NotionWebhook {
  const hook: NotionWebhook = {
    id: randomUUID(),
    integrationId: opts.integrationId,
    url: opts.url,
    verificationToken: `secret_${randomBytes(24).toString('base64url')}`,
    verified: false,
    ...(opts.eventTypes ? { eventTypes: opts.eventTypes } : {}),
  };
  state.webhooks.set(hook.id, hook);
  for (const ws of state.workspaces.values()) snapshot(state, ws);
  post(hook.url, JSON.stringify({ verification_token: hook.verificationToken }), {});
  return hook;
}

/** The settings page's Verify: the token must be the one sent. */
export function verifyNotionWebhook(state: NotionState, id: string, token: string): boolean {
  const hook = state.webhooks.get(id);
  if (!hook || hook.verificationToken !== token) return false;
  hook.verified = true;
  return true;
}

/**
 * After a write: each change to a workspace where the integration is installed (a live grant),
 * as an event to its verified subscriptions, signed (X-Notion-Signature: `sha256=` and the hex
 * HMAC-SHA256 of the body keyed with the verification token).
 */
export function deliverNotionWebhooks(ctx: ProviderContext, state: NotionState): void {
  if (!state.webhooks.size) return;
  for (const ws of state.workspaces.values()) {
    const events = diff(state, ws, ctx.clock());
    if (!events.length) continue;
    for (const hook of state.webhooks.values()) {
      if (!hook.verified || !ctx.hasGrant(hook.integrationId, ws.owner.id)) continue;
      for (const e of events) {
        if (hook.eventTypes && !hook.eventTypes.includes(e.type)) continue;
        const body = JSON.stringify({
          id: randomUUID(),
          timestamp: new Date(ctx.clock()).toISOString(),
          workspace_id: ws.identity.id,
          workspace_name: ws.identity.name,
          subscription_id: hook.id,
          integration_id: hook.integrationId,
          authors: [{ id: ws.owner.id, type: 'person' }],
          attempt_number: 1,
          ...e,
        });
        const signature = `sha256=${createHmac('sha256', hook.verificationToken).update(body).digest('hex')}`;
        post(hook.url, body, { 'X-Notion-Signature': signature });
      }
    }
  }
}

type Event = { type: string; entity: { id: string; type: string }; data: Record<string, unknown> };

function diff(state: NotionState, ws: Workspace, _now: number): Event[] {
  const seen = seenOf(state, ws);
  const out: Event[] = [];
  for (const page of ws.pages.values()) {
    const before = seen.pages.get(page.id);
    const now = { edited: page.lastEditedTime, trashed: page.inTrash, values: valuesOf(page) };
    seen.pages.set(page.id, now);
    const data = { parent: parentOf(page) };
    const entity = { id: page.id, type: 'page' };
    if (!before) {
      if (!page.inTrash) out.push({ type: 'page.created', entity, data });
      continue;
    }
    if (before.trashed !== now.trashed) {
      out.push({ type: now.trashed ? 'page.deleted' : 'page.undeleted', entity, data });
    } else if (before.values !== now.values) {
      out.push({ type: 'page.properties_updated', entity, data });
    } else if (before.edited !== now.edited) {
      out.push({ type: 'page.content_updated', entity, data });
    }
  }
  for (const comment of ws.comments) {
    if (seen.comments.has(comment.id)) continue;
    seen.comments.add(comment.id);
    const parentId = comment.parent.type === 'page_id' ? comment.parent.page_id : comment.parent.block_id;
    out.push({
      type: 'comment.created',
      entity: { id: comment.id, type: 'comment' },
      data: {
        page_id: pageOfBlock(ws, parentId),
        parent: { id: parentId, type: comment.parent.type === 'page_id' ? 'page' : 'block' },
      },
    });
  }
  return out;
}

function parentOf(page: PageRecord): { id: string; type: string } {
  const p = page.parent;
  if (p.type === 'database_id') return { id: p.database_id, type: 'database' };
  if (p.type === 'page_id') return { id: p.page_id, type: 'page' };
  if (p.type === 'block_id') return { id: p.block_id, type: 'block' };
  return { id: '', type: 'space' };
}

/** The page a block belongs to (a comment on a block names its page). */
function pageOfBlock(ws: Workspace, id: string): string {
  let current = id;
  for (let i = 0; i < 64; i++) {
    if (ws.pages.has(current)) return current;
    const block = ws.blocks.get(current);
    const parent = block?.parent;
    if (!parent) return id;
    current = parent.type === 'page_id' ? parent.page_id : parent.type === 'block_id' ? parent.block_id : id;
    if (parent.type !== 'page_id' && parent.type !== 'block_id') return id;
  }
  return id;
}

function valuesOf(page: PageRecord): string {
  return JSON.stringify([...page.values.entries()]);
}

function snapshot(state: NotionState, ws: Workspace): void {
  const seen = seenOf(state, ws);
  seen.pages.clear();
  seen.comments.clear();
  for (const page of ws.pages.values()) {
    seen.pages.set(page.id, { edited: page.lastEditedTime, trashed: page.inTrash, values: valuesOf(page) });
  }
  for (const c of ws.comments) seen.comments.add(c.id);
}

function seenOf(state: NotionState, ws: Workspace): Seen {
  let seen = state.webhookSeen.get(ws.owner.id);
  if (!seen) {
    seen = { pages: new Map(), comments: new Set() };
    state.webhookSeen.set(ws.owner.id, seen);
  }
  return seen;
}

function post(url: string, body: string, headers: Record<string, string>): void {
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(10_000),
  })
    .then((res) => res.body?.cancel())
    .catch(() => {});
}
