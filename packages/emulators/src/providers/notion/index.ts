import type { EmulatorModule } from '../../core/types.js';
import { sendUnauthorized } from './api.js';
import { sendNotionError } from './errors.js';
import type { NotionState } from './model.js';
import { notionOAuthProfile, registerNotionOAuthExtras } from './oauth.js';
import { registerBlockRoutes } from './routes/blocks.js';
import { registerCommentRoutes } from './routes/comments.js';
import { registerDataSourceRoutes } from './routes/data-sources.js';
import { registerDatabaseRoutes } from './routes/databases.js';
import { registerFileUploadRoutes } from './routes/file-uploads.js';
import { registerPageRoutes } from './routes/pages.js';
import { registerSearchRoutes } from './routes/search.js';
import { registerUserRoutes } from './routes/users.js';
import { seedWorkspace } from './seed.js';
import { notionUsers } from './users.js';
import { deliverNotionWebhooks } from './webhooks.js';

export type { NotionState, Workspace } from './model.js';
export { notionSeedIds } from './seed.js';
export { notionUsers } from './users.js';
export { createNotionWebhook, type NotionWebhook, verifyNotionWebhook } from './webhooks.js';

/** Notion (API versions 2022-06-28 and 2025-09-03): one workspace per emulated user, served under `/notion`. */
export const notionEmulator: EmulatorModule<NotionState> = {
  key: 'notion',
  prefix: '/notion',
  users: notionUsers,
  oauth: notionOAuthProfile,
  createState() {
    return {
      workspaces: new Map(notionUsers.map((user) => [user.id, seedWorkspace(user)])),
      webhooks: new Map(),
      webhookSeen: new Map(),
    };
  },
  registerRoutes(app, ctx, getState) {
    // Notion answers malformed JSON with its own error body, not Fastify's.
    app.setErrorHandler((error, _req, reply) => {
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      if (
        status === 400 &&
        (error instanceof SyntaxError || String((error as { code?: string }).code).startsWith('FST_ERR_CTP'))
      ) {
        return sendNotionError(reply, 400, 'invalid_json', 'Error parsing JSON body.');
      }
      if (status === 413) return sendNotionError(reply, 413, 'validation_error', 'Request body too large.');
      if (status >= 500)
        return sendNotionError(reply, 500, 'internal_server_error', 'Unexpected error occurred.');
      return sendNotionError(
        reply,
        status,
        'invalid_request',
        error instanceof Error ? error.message : 'Invalid request.',
      );
    });
    // After each write (before its answer leaves), the integrations' webhooks get what it changed.
    app.addHook('onSend', async (req, _reply, payload) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') deliverNotionWebhooks(ctx, getState());
      return payload;
    });
    registerNotionOAuthExtras(app, ctx);
    registerUserRoutes(app, ctx, getState);
    registerSearchRoutes(app, ctx, getState);
    registerBlockRoutes(app, ctx, getState);
    registerPageRoutes(app, ctx, getState);
    registerDatabaseRoutes(app, ctx, getState);
    registerDataSourceRoutes(app, ctx, getState);
    registerCommentRoutes(app, ctx, getState);
    registerFileUploadRoutes(app, ctx, getState);
  },
  sendAuthError(reply) {
    return sendUnauthorized(reply);
  },
  sendNotFound(reply) {
    return sendNotionError(reply, 400, 'invalid_request_url', 'Invalid request URL.');
  },
};
