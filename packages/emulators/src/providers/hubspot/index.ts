import type { FastifyError } from 'fastify';
import type { EmulatorModule } from '../../core/types.js';
import { registerAssociationRoutes } from './associations.js';
import { sendHubSpotError } from './errors.js';
import { registerFileRoutes } from './file-routes.js';
import { sendHubSpotAuthError } from './http.js';
import { hubspotOAuthProfile, registerTokenInfoRoutes } from './oauth.js';
import { registerObjectRoutes } from './objects.js';
import { registerOwnerRoutes } from './owners.js';
import { registerPropertyRoutes } from './properties.js';
import { registerSearchRoute } from './search.js';
import { seedPortal } from './seed.js';
import type { HubSpotState } from './store.js';
import { hubspotUsers } from './users.js';
import { deliverAppWebhooks } from './webhooks.js';

export type { HubSpotState, Portal } from './store.js';
export { hubspotUsers } from './users.js';
export { type AppWebhookSettings, configureAppWebhooks } from './webhooks.js';

/** Uploads are not a CRM thing, but imports and big batch bodies can be large. */
const BODY_LIMIT = 64 * 1024 * 1024;

export const hubspotEmulator: EmulatorModule<HubSpotState> = {
  key: 'hubspot',
  prefix: '/hubspot',
  users: hubspotUsers,
  oauth: hubspotOAuthProfile,
  createState() {
    const portals = new Map(hubspotUsers.map((user, i) => [user.id, seedPortal(user, i)] as const));
    return { portals, appWebhooks: new Map(), webhookSeen: new Map(), webhookEventSeq: 0 };
  },
  registerRoutes(app, ctx, getState) {
    // A child scope so HubSpot's error shape for malformed bodies does not leak into the core's routes.
    app.register(async (scope) => {
      scope.setErrorHandler((error: FastifyError, _req, reply) => {
        const status = error.statusCode ?? 500;
        if (status >= 500) return sendHubSpotError(reply, status, 'INTERNAL_ERROR', 'internal error');
        return sendHubSpotError(reply, status, 'VALIDATION_ERROR', `Invalid input JSON: ${error.message}`);
      });
      // After each write (before its answer leaves), the apps' webhooks get what it changed.
      scope.addHook('onSend', async (req, _reply, payload) => {
        if (req.method !== 'GET' && req.method !== 'HEAD') deliverAppWebhooks(ctx, getState());
        return payload;
      });
      const options = { bodyLimit: BODY_LIMIT };
      scope.addHook('onRoute', (route) => {
        route.bodyLimit ??= options.bodyLimit;
      });
      registerTokenInfoRoutes(scope, ctx);
      registerOwnerRoutes(scope, ctx, getState);
      registerPropertyRoutes(scope, ctx, getState);
      registerSearchRoute(scope, ctx, getState);
      registerObjectRoutes(scope, ctx, getState);
      registerAssociationRoutes(scope, ctx, getState);
      registerFileRoutes(scope, ctx, getState);
    });
  },
  sendAuthError(reply, reason) {
    return sendHubSpotAuthError(reply, reason);
  },
  sendNotFound(reply, req) {
    return sendHubSpotError(
      reply,
      404,
      'OBJECT_NOT_FOUND',
      `Unable to route ${req.method} ${req.url.split('?')[0]}`,
    );
  },
};
