import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { sendHubSpotError, sendObjectNotFound, sendValidationError } from './errors.js';
import {
  authenticateCaller,
  type Caller,
  type GetState,
  type Query,
  requireScopes,
  singleParam,
} from './http.js';
import { ASSOCIATION_TYPES } from './objects.js';
import { type ObjectTypeName, REQUIRED_SCOPES, resolveObjectType } from './schema.js';
import { associate, type CrmRecord, dissociate, isoTime } from './store.js';

/** HubSpot's object type ids, as the v4 answers name the two ends. */
const TYPE_IDS: Record<ObjectTypeName, string> = { contacts: '0-1', companies: '0-2', deals: '0-3' };

/** The unlabelled association type HubSpot creates for a pair by default (v4 "default"). */
const DEFAULT_TYPE: Record<string, number> = {
  'contacts>companies': 279,
  'companies>contacts': 280,
  'deals>contacts': 3,
  'contacts>deals': 4,
  'deals>companies': 341,
  'companies>deals': 342,
};

/** Largest page of an object's associations, as at HubSpot. */
const PAGE_MAX = 500;

interface Ends {
  caller: Caller;
  from: ObjectTypeName;
  to: ObjectTypeName;
  record: CrmRecord;
  toRecord?: CrmRecord;
}

/**
 * Common prologue of the v4 routes: both object types, authentication, the scopes of both ends,
 * the record the path names (and the other end when the path names one).
 */
function openEnds(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: ProviderContext,
  getState: GetState,
  access: 'read' | 'write',
): Ends | undefined {
  const params = req.params as Record<string, string>;
  const caller = authenticateCaller(req, reply, ctx, getState);
  if (!caller) return undefined;
  const fromSegment = params.fromObjectType ?? '';
  const toSegment = params.toObjectType ?? '';
  const from = resolveObjectType(fromSegment);
  const to = resolveObjectType(toSegment);
  if (!from || !to) {
    const bad = from ? toSegment : fromSegment;
    sendHubSpotError(reply, 400, 'VALIDATION_ERROR', `Unable to infer object type from: ${bad}`);
    return undefined;
  }
  if (!requireScopes(reply, caller, REQUIRED_SCOPES[from][access])) return undefined;
  if (!requireScopes(reply, caller, REQUIRED_SCOPES[to].read)) return undefined;
  const record = caller.portal.objects[from].get(params.fromObjectId ?? '');
  if (!record || record.archived) {
    sendObjectNotFound(reply, params.fromObjectId ?? '');
    return undefined;
  }
  if (params.toObjectId === undefined) return { caller, from, to, record };
  const toRecord = caller.portal.objects[to].get(params.toObjectId);
  if (!toRecord || toRecord.archived) {
    sendObjectNotFound(reply, params.toObjectId);
    return undefined;
  }
  return { caller, from, to, record, toRecord };
}

function defaultType(from: ObjectTypeName, to: ObjectTypeName): number | undefined {
  return DEFAULT_TYPE[`${from}>${to}`];
}

/** The association specs of a labelled PUT: HubSpot-defined type ids valid for the pair. */
function specsError(from: ObjectTypeName, to: ObjectTypeName, body: unknown): string | undefined {
  if (!Array.isArray(body) || body.length === 0) {
    return 'Invalid input JSON: expected a non-empty array of {associationCategory, associationTypeId}.';
  }
  for (const spec of body as Array<{ associationCategory?: unknown; associationTypeId?: unknown }>) {
    const known = ASSOCIATION_TYPES[Number(spec?.associationTypeId)];
    if (spec?.associationCategory !== 'HUBSPOT_DEFINED' || !known || known.from !== from || known.to !== to) {
      return `Association type ${String(spec?.associationTypeId)} (${String(spec?.associationCategory)}) is not valid from ${from} to ${to}`;
    }
  }
  return undefined;
}

/** CRM associations v4: list, create (default and labelled) and remove one object's links. */
export function registerAssociationRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: GetState,
): void {
  app.get('/crm/v4/objects/:fromObjectType/:fromObjectId/associations/:toObjectType', async (req, reply) => {
    const ends = openEnds(req, reply, ctx, getState, 'read');
    if (!ends) return reply;
    const query = req.query as Query;
    const rawLimit = singleParam(query.limit);
    const limit = rawLimit === undefined ? PAGE_MAX : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1) {
      return sendValidationError(
        reply,
        `Invalid limit: ${rawLimit}. Expected an integer between 1 and ${PAGE_MAX}.`,
      );
    }
    const after = singleParam(query.after);
    if (after !== undefined && !/^\d+$/.test(after)) {
      return sendValidationError(
        reply,
        `Invalid after: ${after}. Use paging.next.after of the previous page.`,
      );
    }
    const ids = [...(ends.record.associations.get(ends.to) ?? [])]
      .filter((id) => ends.caller.portal.objects[ends.to].get(id)?.archived === false)
      .sort((a, b) => Number(a) - Number(b))
      .filter((id) => after === undefined || Number(id) >= Number(after));
    const pageSize = Math.min(limit, PAGE_MAX);
    const typeId = defaultType(ends.from, ends.to);
    const body: Record<string, unknown> = {
      results: ids.slice(0, pageSize).map((id) => ({
        toObjectId: id,
        associationTypes: typeId === undefined ? [] : [{ category: 'HUBSPOT_DEFINED', typeId, label: null }],
      })),
    };
    const next = ids[pageSize];
    if (next) body.paging = { next: { after: next } };
    return reply.send(body);
  });

  app.put(
    '/crm/v4/objects/:fromObjectType/:fromObjectId/associations/default/:toObjectType/:toObjectId',
    async (req, reply) => {
      const ends = openEnds(req, reply, ctx, getState, 'write');
      if (!ends?.toRecord) return reply;
      const typeId = defaultType(ends.from, ends.to);
      if (typeId === undefined) {
        return sendValidationError(reply, `No default association from ${ends.from} to ${ends.to}`);
      }
      const at = isoTime(ctx.clock());
      associate(ends.caller.portal, ends.from, ends.record.id, ends.to, ends.toRecord.id);
      return reply.send({
        status: 'COMPLETE',
        results: [
          {
            from: { id: ends.record.id },
            to: { id: ends.toRecord.id },
            associationSpec: { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: typeId },
          },
        ],
        startedAt: at,
        completedAt: at,
      });
    },
  );

  app.put(
    '/crm/v4/objects/:fromObjectType/:fromObjectId/associations/:toObjectType/:toObjectId',
    async (req, reply) => {
      const ends = openEnds(req, reply, ctx, getState, 'write');
      if (!ends?.toRecord) return reply;
      const problem = specsError(ends.from, ends.to, req.body);
      if (problem) return sendValidationError(reply, problem);
      associate(ends.caller.portal, ends.from, ends.record.id, ends.to, ends.toRecord.id);
      return reply.code(201).send({
        fromObjectTypeId: TYPE_IDS[ends.from],
        fromObjectId: ends.record.id,
        toObjectTypeId: TYPE_IDS[ends.to],
        toObjectId: ends.toRecord.id,
        labels: [],
      });
    },
  );

  app.delete(
    '/crm/v4/objects/:fromObjectType/:fromObjectId/associations/:toObjectType/:toObjectId',
    async (req, reply) => {
      const ends = openEnds(req, reply, ctx, getState, 'write');
      if (!ends?.toRecord) return reply;
      dissociate(ends.caller.portal, ends.from, ends.record.id, ends.to, ends.toRecord.id);
      return reply.code(204).send();
    },
  );
}
