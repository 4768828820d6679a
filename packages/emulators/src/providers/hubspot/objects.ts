import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { sendHubSpotError, sendObjectNotFound, sendValidationError } from './errors.js';
import {
  authenticateCaller,
  booleanParam,
  type Caller,
  type GetState,
  listParam,
  type Query,
  requireScopes,
  singleParam,
} from './http.js';
import { OBJECT_TYPES, type ObjectTypeName, REQUIRED_SCOPES, resolveObjectType } from './schema.js';
import { activeRecords, allocateId, associate, type CrmRecord, stampSystemProperties } from './store.js';
import { applyValues, sendPropertyProblems, validatePropertyWrite } from './values.js';
import { findByProperty, recordJson } from './view.js';

/** Largest page of the list endpoint; larger `limit` values are clamped, as at HubSpot. */
const LIST_MAX = 100;
const LIST_DEFAULT = 10;

/** HubSpot-defined association type ids (v4 labels) and the object types they link. */
export const ASSOCIATION_TYPES: Record<number, { from: ObjectTypeName; to: ObjectTypeName }> = {
  1: { from: 'contacts', to: 'companies' },
  279: { from: 'contacts', to: 'companies' },
  2: { from: 'companies', to: 'contacts' },
  280: { from: 'companies', to: 'contacts' },
  3: { from: 'deals', to: 'contacts' },
  4: { from: 'contacts', to: 'deals' },
  5: { from: 'deals', to: 'companies' },
  341: { from: 'deals', to: 'companies' },
  6: { from: 'companies', to: 'deals' },
  342: { from: 'companies', to: 'deals' },
};

interface ObjectRoute {
  caller: Caller;
  type: ObjectTypeName;
}

/** Common prologue of every object route: object type, authentication, scope. */
export function openObjectRoute(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: ProviderContext,
  getState: GetState,
  access: 'read' | 'write',
): ObjectRoute | undefined {
  const segment = (req.params as { objectType: string }).objectType;
  const caller = authenticateCaller(req, reply, ctx, getState);
  if (!caller) return undefined;
  const type = resolveObjectType(segment);
  if (!type) {
    sendHubSpotError(reply, 400, 'VALIDATION_ERROR', `Unable to infer object type from: ${segment}`);
    return undefined;
  }
  if (!requireScopes(reply, caller, REQUIRED_SCOPES[type][access])) return undefined;
  return { caller, type };
}

function setPropertyNames(record: CrmRecord): string[] {
  return [...record.properties.keys()];
}

function associationTypesParam(query: Query): ObjectTypeName[] {
  return (listParam(query.associations) ?? [])
    .map((segment) => resolveObjectType(segment))
    .filter((t): t is ObjectTypeName => t !== undefined);
}

function duplicateEmail(
  route: ObjectRoute,
  email: string | undefined,
  selfId?: string,
): CrmRecord | undefined {
  if (route.type !== 'contacts' || !email) return undefined;
  const existing = findByProperty(route.caller.portal, 'contacts', 'email', email, false);
  return existing && existing.id !== selfId ? existing : undefined;
}

function sendContactConflict(reply: FastifyReply, existing: CrmRecord): FastifyReply {
  return sendHubSpotError(reply, 409, 'CONFLICT', `Contact already exists. Existing ID: ${existing.id}`);
}

interface AssociationInput {
  to?: { id?: unknown };
  types?: Array<{ associationCategory?: unknown; associationTypeId?: unknown }>;
}

/** Resolves create-time associations; returns an error message when one cannot be honoured. */
function resolveAssociations(
  route: ObjectRoute,
  input: unknown,
): { links: Array<{ type: ObjectTypeName; id: string }> } | { error: string } {
  if (input === undefined) return { links: [] };
  if (!Array.isArray(input)) return { error: 'associations must be an array' };
  const links: Array<{ type: ObjectTypeName; id: string }> = [];
  for (const item of input as AssociationInput[]) {
    const toId = item?.to?.id;
    const id = typeof toId === 'number' ? String(toId) : typeof toId === 'string' ? toId : undefined;
    if (!id) return { error: 'Each association needs to.id' };
    for (const spec of item.types ?? []) {
      const typeId = Number(spec.associationTypeId);
      const known = ASSOCIATION_TYPES[typeId];
      if (!known || known.from !== route.type) {
        return {
          error: `Association type ${String(spec.associationTypeId)} is not valid from ${route.type}`,
        };
      }
      const target = route.caller.portal.objects[known.to].get(id);
      if (!target || target.archived) {
        return { error: `One or more associations are invalid: ${known.to} ${id} does not exist` };
      }
      links.push({ type: known.to, id });
    }
  }
  return { links };
}

function lookupRecord(route: ObjectRoute, req: FastifyRequest): CrmRecord | undefined {
  const { objectId } = req.params as { objectId: string };
  const query = req.query as Query;
  const archived = booleanParam(query.archived);
  const idProperty = singleParam(query.idProperty);
  if (idProperty && idProperty !== 'hs_object_id') {
    return findByProperty(route.caller.portal, route.type, idProperty, objectId, archived);
  }
  const record = route.caller.portal.objects[route.type].get(objectId);
  return record && record.archived === archived ? record : undefined;
}

export function registerObjectRoutes(app: FastifyInstance, ctx: ProviderContext, getState: GetState): void {
  app.get('/crm/v3/objects/:objectType', (req, reply) => listObjects(ctx, getState, req, reply));

  app.get('/crm/v3/objects/:objectType/:objectId', async (req, reply) => {
    const route = openObjectRoute(req, reply, ctx, getState, 'read');
    if (!route) return reply;
    const record = lookupRecord(route, req);
    if (!record) return sendObjectNotFound(reply, (req.params as { objectId: string }).objectId);
    const query = req.query as Query;
    return reply.send(
      recordJson(route.type, record, listParam(query.properties), associationTypesParam(query)),
    );
  });

  app.post('/crm/v3/objects/:objectType', (req, reply) => createObject(ctx, getState, req, reply));

  app.patch('/crm/v3/objects/:objectType/:objectId', async (req, reply) => {
    const route = openObjectRoute(req, reply, ctx, getState, 'write');
    if (!route) return reply;
    const record = lookupRecord(route, req);
    if (!record) return sendObjectNotFound(reply, (req.params as { objectId: string }).objectId);
    const body = (req.body ?? {}) as { properties?: unknown };
    const { portal } = route.caller;
    const write = validatePropertyWrite(portal, route.type, body.properties);
    if (!write.ok) return sendPropertyProblems(reply, portal, write.problems);
    const existing = duplicateEmail(route, write.values.get('email'), record.id);
    if (existing) return sendContactConflict(reply, existing);
    applyValues(record, write.values);
    record.updatedAt = Math.max(ctx.clock(), record.createdAt);
    stampSystemProperties(route.type, record);
    return reply.send(recordJson(route.type, record, setPropertyNames(record)));
  });

  app.delete('/crm/v3/objects/:objectType/:objectId', (req, reply) =>
    archiveObject(ctx, getState, req, reply),
  );
}

/** One page of an object type's records, in id order; the next page's link keeps the query. */
async function listObjects(
  ctx: ProviderContext,
  getState: GetState,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const route = openObjectRoute(req, reply, ctx, getState, 'read');
  if (!route) return reply;
  const query = req.query as Query;
  const rawLimit = singleParam(query.limit);
  const limit = rawLimit === undefined ? LIST_DEFAULT : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1) {
    return sendValidationError(
      reply,
      `Invalid limit: ${rawLimit}. Expected an integer between 1 and ${LIST_MAX}.`,
    );
  }
  const after = singleParam(query.after);
  if (after !== undefined && !/^\d+$/.test(after)) {
    return sendValidationError(reply, `Invalid after: ${after}. Use paging.next.after of the previous page.`);
  }
  const pageSize = Math.min(limit, LIST_MAX);
  const records = activeRecords(route.caller.portal, route.type, booleanParam(query.archived)).filter(
    (r) => after === undefined || Number(r.id) >= Number(after),
  );
  const page = records.slice(0, pageSize);
  const properties = listParam(query.properties);
  const associationTypes = associationTypesParam(query);
  const body: Record<string, unknown> = {
    results: page.map((r) => recordJson(route.type, r, properties, associationTypes)),
  };
  const next = records[pageSize];
  if (next) {
    const params = new URLSearchParams(req.url.split('?')[1] ?? '');
    params.set('after', next.id);
    const segment = (req.params as { objectType: string }).objectType;
    body.paging = {
      next: {
        after: next.id,
        link: `${ctx.publicBase(req)}/crm/v3/objects/${segment}?${params.toString()}`,
      },
    };
  }
  return reply.send(body);
}

/** A new record, with its associations; a contact's email must be unique. */
async function createObject(
  ctx: ProviderContext,
  getState: GetState,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const route = openObjectRoute(req, reply, ctx, getState, 'write');
  if (!route) return reply;
  const body = (req.body ?? {}) as { properties?: unknown; associations?: unknown };
  if (typeof body !== 'object' || Array.isArray(body)) {
    return sendValidationError(reply, 'Invalid input JSON: expected an object with "properties".');
  }
  const { portal } = route.caller;
  const write = validatePropertyWrite(portal, route.type, body.properties);
  if (!write.ok) return sendPropertyProblems(reply, portal, write.problems);
  const existing = duplicateEmail(route, write.values.get('email'));
  if (existing) return sendContactConflict(reply, existing);
  const associations = resolveAssociations(route, body.associations);
  if ('error' in associations) return sendValidationError(reply, associations.error);

  const now = ctx.clock();
  const record: CrmRecord = {
    id: allocateId(portal),
    properties: new Map(),
    createdAt: now,
    updatedAt: now,
    archived: false,
    associations: new Map(),
  };
  applyValues(record, write.values);
  stampSystemProperties(route.type, record);
  portal.objects[route.type].set(record.id, record);
  for (const link of associations.links) associate(portal, route.type, record.id, link.type, link.id);
  return reply.code(201).send(recordJson(route.type, record, setPropertyNames(record)));
}

/** Archives a record into the recycle bin and drops its associations from both ends. */
async function archiveObject(
  ctx: ProviderContext,
  getState: GetState,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const route = openObjectRoute(req, reply, ctx, getState, 'write');
  if (!route) return reply;
  const { objectId } = req.params as { objectId: string };
  const record = route.caller.portal.objects[route.type].get(objectId);
  if (!record) return sendObjectNotFound(reply, objectId);
  // Archiving twice is not an error at HubSpot: the record is simply in the recycle bin.
  if (!record.archived) {
    const now = ctx.clock();
    record.archived = true;
    record.archivedAt = now;
    record.updatedAt = now;
    for (const other of OBJECT_TYPES) {
      for (const id of record.associations.get(other) ?? []) {
        route.caller.portal.objects[other].get(id)?.associations.get(route.type)?.delete(record.id);
      }
    }
    record.associations.clear();
  }
  return reply.code(204).send();
}
