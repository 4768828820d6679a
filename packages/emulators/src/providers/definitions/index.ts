import type { EmulatorModule } from '../../core/types.js';
import { sendUnauthorized } from './api.js';
import { Catalog } from './catalog.js';
import { createDefinitionsState, type DefinitionsState } from './keys.js';
import { registerDefinitionRoutes } from './routes.js';
import { definitionUsers } from './users.js';

export { DefinitionError, type PlayedDefinition, readDefinition } from './definition.js';
export type { DefinitionsState, KeyRecord } from './keys.js';
export { instanceOrigin } from './profile.js';
export { definitionUsers } from './users.js';

/**
 * The emulator that plays any provider from its JSON definition, under
 * `/definitions/{key}{the provider's real path}`: the definition's OAuth endpoints (the core's
 * server, spelled its way), API-key and Basic acceptance by rule, and an API that answers
 * user_info in the definition's shape and echoes everything else. A factory, not a constant: the
 * definitions it is given belong to one host.
 */
export function createDefinitionsEmulator(): EmulatorModule<DefinitionsState> {
  const catalog = new Catalog();
  return {
    key: 'definitions',
    prefix: '/definitions',
    users: definitionUsers,
    oauth: catalog.storeProfile,
    routesOAuthItself: true,
    definitions: catalog,
    createState: createDefinitionsState,
    registerRoutes(app, ctx, getState) {
      registerDefinitionRoutes(app, { ctx, getState, catalog });
    },
    sendAuthError: (reply, reason) => sendUnauthorized(reply, reason),
    sendNotFound(reply, req) {
      return reply.code(404).send({
        error: {
          message: `No route ${req.method} ${req.url.split('?')[0]}: the path names no definition.`,
          code: 'not_found',
        },
      });
    },
  };
}
