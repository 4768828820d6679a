import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenRecord, ProviderContext } from '../../core/types.js';
import { GRAPH_JSON, stampGraphHeaders } from './errors.js';
import type { MicrosoftState, TenantData } from './model.js';
import { normalizeScope } from './oauth.js';

/** Everything a Graph handler needs about the request it answers. */
export interface GraphCall {
  req: FastifyRequest;
  reply: FastifyReply;
  ctx: ProviderContext;
  state: MicrosoftState;
  tenant: TenantData;
  token: AccessTokenRecord;
  /** Public base of the emulator prefix, e.g. http://127.0.0.1:4000/microsoft. */
  base: string;
  query: Record<string, string | undefined>;
  /** Request path from `/v1.0/` on, as sent (no query), for `@odata.nextLink`. */
  path: string;
}

export function metadata(call: GraphCall, fragment: string): string {
  return `${call.base}/v1.0/$metadata#${fragment}`;
}

export function sendJson(call: GraphCall, status: number, body: unknown): FastifyReply {
  return stampGraphHeaders(call.req, call.reply).code(status).type(GRAPH_JSON).send(body);
}

const OIDC = new Set(['openid', 'profile', 'email', 'offline_access']);
const READ = ['sites.read.all', 'files.read', 'files.read.all', 'files.read.selected'];
const WRITE = [
  'sites.readwrite.all',
  'sites.manage.all',
  'sites.fullcontrol.all',
  'sites.selected',
  'files.readwrite',
  'files.readwrite.all',
  'files.readwrite.selected',
];

/**
 * Whether the token's delegated permissions allow reading or writing SharePoint content. A token
 * minted without any Graph permission (the test helper's default) is treated as all-powerful.
 */
export function permits(token: AccessTokenRecord, access: 'read' | 'write'): boolean {
  const graph = token.scopes.map((s) => normalizeScope(s).toLowerCase()).filter((s) => !OIDC.has(s));
  if (graph.length === 0 || graph.includes('.default')) return true;
  const allowed = access === 'read' ? [...READ, ...WRITE] : WRITE;
  return graph.some((s) => allowed.includes(s));
}
