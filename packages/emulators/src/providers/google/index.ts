import type { EmulatedUser, EmulatorModule } from '../../core/types.js';
import { type CalendarData, registerCalendarRoutes, seedCalendar } from './calendar.js';
import { type DocsData, registerDocsRoutes, seedDocs } from './docs.js';
import { registerDriveRoutes, seedDrive } from './drive.js';
import { googleOAuthProfile, registerGoogleOAuthRoutes, sendGoogleAuthError } from './oauth.js';
import { type DriveFile, sendGoogleError } from './shared.js';
import { registerSheetsRoutes, type SheetsData, seedSheets } from './sheets.js';
import { googleUsers } from './users.js';

/** Everything one emulated Google user owns. Sheets and Docs also file their documents in `drive`. */
export interface GoogleUserData {
  user: EmulatedUser;
  drive: Map<string, DriveFile>;
  calendar: CalendarData;
  sheets: SheetsData;
  docs: DocsData;
}

export interface GoogleState {
  byUser: Map<string, GoogleUserData>;
}

/** Resolves the data of the user behind the request's token (routes authenticate first). */
export type GoogleDataOf = (userId: string) => GoogleUserData;

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
