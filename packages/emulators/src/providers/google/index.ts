import type { EmulatorModule } from '../../core/types.js';
import { registerCalendarRoutes, seedCalendar } from './calendar/routes.js';
import { registerDocsRoutes, seedDocs } from './docs/routes.js';
import { registerDriveRoutes, seedDrive } from './drive/routes.js';
import { googleOAuthProfile, registerGoogleOAuthRoutes, sendGoogleAuthError } from './oauth.js';
import { sendGoogleError } from './shared.js';
import { registerSheetsRoutes } from './sheets/routes.js';
import { seedSheets } from './sheets/seed.js';
import type { GoogleDataOf, GoogleState, GoogleUserData } from './user-data.js';
import { googleUsers } from './users.js';

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
      const data: GoogleUserData = {
        user,
        drive,
        calendar: seedCalendar(user, ctx),
        sheets: seedSheets(user, drive, ctx),
        docs: seedDocs(user, drive, ctx),
      };
      byUser.set(user.id, data);
    }
    return { byUser };
  },
  registerRoutes(app, ctx, getState) {
    const dataOf: GoogleDataOf = (userId) => {
      const data = getState().byUser.get(userId);
      if (!data) throw new Error(`no Google data for user ${userId}`);
      return data;
    };
    registerGoogleOAuthRoutes(app, ctx);
    registerCalendarRoutes(app, ctx, dataOf);
    registerDriveRoutes(app, ctx, dataOf);
    registerSheetsRoutes(app, ctx, dataOf);
    registerDocsRoutes(app, ctx, dataOf);
  },
  sendAuthError: sendGoogleAuthError,
  sendNotFound(reply, req) {
    return sendGoogleError(reply, 404, `Method not found: ${req.method} ${req.url.split('?')[0]}`, {
      reason: 'notFound',
    });
  },
};
