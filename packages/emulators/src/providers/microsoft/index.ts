import type { EmulatorModule } from '../../core/types.js';
import { logDriveWrites } from './delta.js';
import { registerDownloadRoute } from './download.js';
import { sendGraphAuthError, sendGraphError } from './errors.js';
import { registerGraphRoutes } from './graph-routes.js';
import type { MicrosoftState } from './model.js';
import { microsoftOAuthProfile } from './oauth.js';
import { seedMicrosoftState } from './seed.js';
import { notifySubscribers } from './subscriptions.js';
import { registerUploadSessionRoutes } from './upload-sessions.js';
import { microsoftUsers } from './users.js';

export type { Drive, DriveItem, MicrosoftState, Site, TenantData } from './model.js';
export { type GraphSubscription, sendLifecycle } from './subscriptions.js';
export { type MicrosoftTenant, type MicrosoftUser, microsoftUsers } from './users.js';

/**
 * Microsoft identity platform v2.0 (authorize/token under `/{tenant}/oauth2/v2.0/`) and the
 * SharePoint part of Microsoft Graph v1.0 (sites, drives, drive items, uploads, downloads).
 */
export const microsoftEmulator: EmulatorModule<MicrosoftState> = {
  key: 'microsoft',
  prefix: '/microsoft',
  users: microsoftUsers,
  oauth: microsoftOAuthProfile,
  createState() {
    return seedMicrosoftState();
  },
  async registerRoutes(app, ctx, getState) {
    // A child scope, so the raw-body parser does not reach the core's OAuth routes.
    await app.register(async (scope) => {
      // After each write (before its answer leaves), the delta logs note what it changed.
      scope.addHook('onSend', async (req, _reply, payload) => {
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          logDriveWrites(getState());
          notifySubscribers(getState(), ctx.clock());
        }
        return payload;
      });
      registerGraphRoutes(scope, ctx, getState, sendGraphAuthError);
      registerDownloadRoute(scope, ctx, getState);
      registerUploadSessionRoutes(scope, ctx, getState);
    });
  },
  sendAuthError: sendGraphAuthError,
  sendNotFound(reply, req) {
    const path = req.url.split('?')[0] ?? '';
    const version = /\/microsoft\/([^/]+)/.exec(path)?.[1];
    // graph.microsoft.com only knows v1.0 and beta; anything else is an unknown version.
    return sendGraphError(req, reply, 400, 'BadRequest', `Invalid version: ${version ?? ''}`);
  },
};
