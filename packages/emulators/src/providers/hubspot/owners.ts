import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { sendHubSpotError, sendValidationError } from './errors.js';
import {
  authenticateCaller,
  booleanParam,
  type GetState,
  type Query,
  requireScopes,
  singleParam,
} from './http.js';
import { isoTime, type Owner } from './store.js';

const OWNERS_DEFAULT_LIMIT = 100;
const OWNERS_MAX_LIMIT = 500;
const OWNER_SCOPES = ['crm.objects.owners.read'];

function ownerJson(owner: Owner): Record<string, unknown> {
  return {
    id: owner.id,
    email: owner.email,
    type: 'PERSON',
    firstName: owner.firstName,
    lastName: owner.lastName,
    userId: owner.userId,
    userIdIncludingInactive: owner.userId,
    createdAt: isoTime(owner.createdAt),
    updatedAt: isoTime(owner.updatedAt),
    archived: owner.archived,
    teams: owner.teams.map((t) => ({ ...t })),
  };
}

export function registerOwnerRoutes(app: FastifyInstance, ctx: ProviderContext, getState: GetState): void {
  const list = async (req: FastifyRequest, reply: FastifyReply) => {
    const caller = authenticateCaller(req, reply, ctx, getState);
    if (!caller || !requireScopes(reply, caller, OWNER_SCOPES)) return reply;
    const query = req.query as Query;
    const rawLimit = singleParam(query.limit);
    const limit = rawLimit === undefined ? OWNERS_DEFAULT_LIMIT : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1)
      return sendValidationError(reply, `Invalid limit: ${rawLimit}.`);
    const after = singleParam(query.after);
    const offset = after === undefined ? 0 : Number(after);
    if (!Number.isInteger(offset) || offset < 0)
      return sendValidationError(reply, `Invalid after: ${after}.`);
    const email = singleParam(query.email)?.toLowerCase();
    const archived = booleanParam(query.archived);
    const owners = caller.portal.owners.filter(
      (o) => o.archived === archived && (email === undefined || o.email.toLowerCase() === email),
    );
    const pageSize = Math.min(limit, OWNERS_MAX_LIMIT);
    const page = owners.slice(offset, offset + pageSize);
    const body: Record<string, unknown> = { results: page.map(ownerJson) };
    if (offset + pageSize < owners.length) {
      const params = new URLSearchParams(req.url.split('?')[1] ?? '');
      params.set('after', String(offset + pageSize));
      body.paging = {
        next: {
          after: String(offset + pageSize),
          link: `${ctx.publicBase(req)}/crm/v3/owners/?${params.toString()}`,
        },
      };
    }
    return reply.send(body);
  };
  // The SDK calls `/crm/v3/owners/` with the trailing slash; plain clients usually omit it.
  app.get('/crm/v3/owners/', list);
  const config = app.initialConfig as {
    ignoreTrailingSlash?: boolean;
    routerOptions?: { ignoreTrailingSlash?: boolean };
  };
  if (!(config.routerOptions?.ignoreTrailingSlash ?? config.ignoreTrailingSlash))
    app.get('/crm/v3/owners', list);

  app.get('/crm/v3/owners/:ownerId', async (req, reply) => {
    const caller = authenticateCaller(req, reply, ctx, getState);
    if (!caller || !requireScopes(reply, caller, OWNER_SCOPES)) return reply;
    const { ownerId } = req.params as { ownerId: string };
    const query = req.query as Query;
    const byUserId = singleParam(query.idProperty) === 'userId';
    const archived = booleanParam(query.archived);
    const owner = caller.portal.owners.find(
      (o) => o.archived === archived && (byUserId ? String(o.userId) === ownerId : o.id === ownerId),
    );
    if (!owner) {
      return sendHubSpotError(
        reply,
        404,
        'OBJECT_NOT_FOUND',
        `No owner found for ${byUserId ? 'userId' : 'id'} ${ownerId}`,
      );
    }
    return reply.send(ownerJson(owner));
  });
}
