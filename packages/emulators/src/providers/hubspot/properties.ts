import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { sendHubSpotError } from './errors.js';
import { authenticateCaller, type GetState, requireScopes } from './http.js';
import {
  type ObjectTypeName,
  PROPERTY_DEFINITIONS,
  type PropertyDefinition,
  resolveObjectType,
} from './schema.js';
import { isoTime, type Portal } from './store.js';

/** Property definitions carry a fixed date: a fresh portal's built-in properties never change. */
const DEFINED_AT = isoTime(Date.UTC(2019, 7, 6, 10, 0, 0));

function propertyJson(
  portal: Portal,
  def: PropertyDefinition,
  displayOrder: number,
): Record<string, unknown> {
  const optionsList = def.ownerReference
    ? portal.owners.map((o) => ({ label: `${o.firstName} ${o.lastName}`, value: o.id }))
    : (def.options ?? []);
  const json: Record<string, unknown> = {
    name: def.name,
    label: def.label,
    type: def.type,
    fieldType: def.fieldType,
    description: def.description ?? '',
    groupName: def.groupName,
    options: optionsList.map((o, i) => ({ label: o.label, value: o.value, displayOrder: i, hidden: false })),
    displayOrder,
    calculated: false,
    externalOptions: def.ownerReference === true,
    hasUniqueValue: def.hasUniqueValue === true,
    hidden: false,
    hubspotDefined: def.custom !== true,
    modificationMetadata: {
      archivable: def.custom === true,
      readOnlyDefinition: def.custom !== true,
      readOnlyValue: def.readOnly === true,
    },
    formField: def.readOnly !== true,
    createdAt: DEFINED_AT,
    updatedAt: DEFINED_AT,
    archived: false,
  };
  if (def.ownerReference) json.referencedObjectType = 'OWNER';
  return json;
}

function schemaScopes(type: ObjectTypeName): string[] {
  return [`crm.schemas.${type}.read`, `crm.objects.${type}.read`];
}

export function registerPropertyRoutes(app: FastifyInstance, ctx: ProviderContext, getState: GetState): void {
  app.get('/crm/v3/properties/:objectType', async (req, reply) => {
    const caller = authenticateCaller(req, reply, ctx, getState);
    if (!caller) return reply;
    const segment = (req.params as { objectType: string }).objectType;
    const type = resolveObjectType(segment);
    if (!type)
      return sendHubSpotError(reply, 400, 'VALIDATION_ERROR', `Unable to infer object type from: ${segment}`);
    if (!requireScopes(reply, caller, schemaScopes(type))) return reply;
    return reply.send({
      results: PROPERTY_DEFINITIONS[type].map((def, i) => propertyJson(caller.portal, def, i)),
    });
  });

  app.get('/crm/v3/properties/:objectType/:propertyName', async (req, reply) => {
    const caller = authenticateCaller(req, reply, ctx, getState);
    if (!caller) return reply;
    const { objectType: segment, propertyName } = req.params as { objectType: string; propertyName: string };
    const type = resolveObjectType(segment);
    if (!type)
      return sendHubSpotError(reply, 400, 'VALIDATION_ERROR', `Unable to infer object type from: ${segment}`);
    if (!requireScopes(reply, caller, schemaScopes(type))) return reply;
    const index = PROPERTY_DEFINITIONS[type].findIndex((p) => p.name === propertyName);
    const def = PROPERTY_DEFINITIONS[type][index];
    if (!def) {
      return sendHubSpotError(
        reply,
        404,
        'OBJECT_NOT_FOUND',
        `Unable to find property ${propertyName} for object type ${type}`,
      );
    }
    return reply.send(propertyJson(caller.portal, def, index));
  });
}
