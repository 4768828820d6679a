import type { EmulatorModule } from '../../core/types.js';
import { registerCalendarRoutes, seedCalendar } from './calendar/routes.js';
import { registerDocsRoutes, seedDocs } from './docs/routes.js';
import { catchUp, newChangeLog } from './drive/changes.js';
import { registerDriveRoutes, seedDrive } from './drive/routes.js';
import { googleOAuthProfile, registerGoogleOAuthRoutes, sendGoogleAuthError } from './oauth.js';
import { sendGoogleError } from './shared.js';
import { registerSheetsRoutes } from './sheets/routes.js';
import { seedSheets } from './sheets/seed.js';
import type { GoogleDataOf, GoogleState, GoogleUserData } from './user-data.js';
import { googleUsers } from './users.js';
import { notifyWatchers, registerWatchRoutes } from './watch.js';

export type { GoogleDataOf, GoogleState, GoogleUserData } from './user-data.js';

export const googleEmulator: EmulatorModule<GoogleState> = {
  key: 'google',
  prefix: '/google',
  users: googleUsers,
  oauth: googleOAuthProfile,
  createState(ctx) {
    const byUser = new Map<string, GoogleUserData>();
    for (const user of googleUsers) {
      const drive = seedDrive(user, ctx);
      const calendar = seedCalendar(user, ctx);
      const sheets = seedSheets(user, drive, ctx);
      const docs = seedDocs(user, drive, ctx);
      // The seeded Sheets and Docs files are in Drive by now: the change log starts after them.
      const data: GoogleUserData = { user, drive, driveChanges: newChangeLog(drive), calendar, sheets, docs };
      byUser.set(user.id, data);
    }
    return { byUser, channels: new Map() };
  },
  registerRoutes(app, ctx, getState) {
    const dataOf: GoogleDataOf = (userId) => {
      const data = getState().byUser.get(userId);
      if (!data) throw new Error(`no Google data for user ${userId}`);
      return data;
    };
    // After each write (before its answer leaves), Drive's change log notes what it changed, so a
    // file created and deleted between two reads of the log is listed as removed, as Drive does.
    app.addHook('onSend', async (req, _reply, payload) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        for (const data of getState().byUser.values()) catchUp(data, ctx.clock());
        notifyWatchers(ctx, getState());
      }
      return payload;
    });
    registerGoogleOAuthRoutes(app, ctx);
    registerCalendarRoutes(app, ctx, dataOf);
    registerDriveRoutes(app, ctx, dataOf);
    registerSheetsRoutes(app, ctx, dataOf);
    registerDocsRoutes(app, ctx, dataOf);
    registerWatchRoutes(app, ctx, dataOf, getState);
  },
  sendAuthError: sendGoogleAuthError,
  sendNotFound(reply, req) {
    return sendGoogleError(reply, 404, `Method not found: ${req.method} ${req.url.split('?')[0]}`, {
      reason: 'notFound',
    });
  },
};
