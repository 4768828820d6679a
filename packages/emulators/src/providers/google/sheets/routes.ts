import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { fileNativeDocument, setDriveText, toCsv, touchDriveFile } from '../native-files.js';
import { lookupNative, rpcAuthorizer, sendMasked } from '../native-routes.js';
import { GOOGLE_API_SCOPES } from '../scopes.js';
import { GOOGLE_MIME, sendGoogleError } from '../shared.js';
import type { GoogleDataOf, GoogleUserData } from '../user-data.js';
import {
  appendValues,
  batchClearValues,
  batchGetValues,
  batchUpdateValues,
  clearValues,
  createSpreadsheet,
  getSpreadsheet,
  getValues,
  spreadsheetJson,
  updateValues,
} from './handlers.js';
import { newSheet, SheetsRequestError, type SpreadsheetModel } from './model.js';
import { badRequest, objectBody, parseTarget, type Reply, type Target } from './requests.js';
import { sheetFormattedRows } from './seed.js';
import { batchUpdateSpreadsheet } from './structure.js';

// The Sheets API's routes: one RPC per method and custom verb, each checked for its scope.

const BODY_LIMIT = 128 * 1024 * 1024;
const NOT_FOUND = 'Requested entity was not found.';

const SERVICE = 'sheets.googleapis.com';

export function registerSheetsRoutes(app: FastifyInstance, ctx: ProviderContext, dataOf: GoogleDataOf): void {
  const authorize = rpcAuthorizer(
    ctx,
    GOOGLE_API_SCOPES.sheets,
    SERVICE,
    'google.apps.sheets.v4.SpreadsheetsService',
  );

  /** The user's spreadsheet; one created through Drive starts empty. */
  const lookup = (data: GoogleUserData, id: string): SpreadsheetModel | null =>
    lookupNative(
      data.drive,
      data.sheets.spreadsheets,
      GOOGLE_MIME.spreadsheet,
      id,
      (spreadsheetId, title) => ({
        spreadsheetId,
        title,
        locale: 'en_US',
        timeZone: 'Etc/GMT',
        sheets: [newSheet(0, 'Sheet1')],
      }),
    );

  const send = (req: FastifyRequest, reply: Reply, body: unknown): Reply =>
    sendMasked(req, reply, body, (message) => badRequest(reply, message));

  app.post('/v4/spreadsheets', { bodyLimit: BODY_LIMIT }, (req, reply) => {
    const auth = authorize(req, reply, true, 'CreateSpreadsheet');
    if (!auth) return reply;
    const data = dataOf(auth.user.id);
    try {
      const ss = createSpreadsheet(objectBody(req));
      data.sheets.spreadsheets.set(ss.spreadsheetId, ss);
      fileNativeDocument(data.drive, {
        id: ss.spreadsheetId,
        name: ss.title,
        mimeType: GOOGLE_MIME.spreadsheet,
        ownerId: auth.user.id,
        now: ctx.clock(),
      });
      setDriveText(data.drive, ss.spreadsheetId, toCsv(sheetFormattedRows(ss)));
      return send(req, reply, spreadsheetJson(ss));
    } catch (e) {
      if (e instanceof SheetsRequestError) return badRequest(reply, e.message);
      throw e;
    }
  });

  app.route({
    method: ['GET', 'POST', 'PUT'],
    url: '/v4/spreadsheets/*',
    bodyLimit: BODY_LIMIT,
    handler: (req, reply) => {
      const target = parseTarget(req.url);
      const notFoundRoute = () =>
        sendGoogleError(reply, 404, `Method not found: ${req.method} ${req.url.split('?')[0]}`, {
          style: 'modern',
        });
      if (!target) return notFoundRoute();
      const route = routeOf(req.method, target);
      if (!route) return notFoundRoute();
      const auth = authorize(req, reply, route.write, route.method);
      if (!auth) return reply;
      const data = dataOf(auth.user.id);
      const ss = lookup(data, target.id);
      if (!ss) return sendGoogleError(reply, 404, NOT_FOUND, { style: 'modern' });
      try {
        const body = route.handle(ss, req, target);
        if (route.write) {
          touchDriveFile(data.drive, ss.spreadsheetId, ctx.clock());
          const file = data.drive.get(ss.spreadsheetId);
          if (file) file.name = ss.title;
          setDriveText(data.drive, ss.spreadsheetId, toCsv(sheetFormattedRows(ss)));
        }
        return send(req, reply, body);
      } catch (e) {
        if (e instanceof SheetsRequestError) return badRequest(reply, e.message);
        throw e;
      }
    },
  });
}

interface Route {
  write: boolean;
  method: string;
  handle(ss: SpreadsheetModel, req: FastifyRequest, target: Target): unknown;
}

/** Which RPC serves a method and custom verb on each kind of target (no verb: `undefined`). */
const ROUTES: Record<Target['kind'], Array<[httpMethod: string, verb: string | undefined, route: Route]>> = {
  spreadsheet: [
    ['GET', undefined, { write: false, method: 'GetSpreadsheet', handle: getSpreadsheet }],
    [
      'POST',
      'batchUpdate',
      { write: true, method: 'BatchUpdateSpreadsheet', handle: batchUpdateSpreadsheet },
    ],
  ],
  values: [
    ['GET', undefined, { write: false, method: 'GetValues', handle: getValues }],
    ['PUT', undefined, { write: true, method: 'UpdateValues', handle: updateValues }],
    ['POST', 'append', { write: true, method: 'AppendValues', handle: appendValues }],
    ['POST', 'clear', { write: true, method: 'ClearValues', handle: clearValues }],
  ],
  valuesBatch: [
    ['GET', 'batchGet', { write: false, method: 'BatchGetValues', handle: batchGetValues }],
    ['POST', 'batchUpdate', { write: true, method: 'BatchUpdateValues', handle: batchUpdateValues }],
    ['POST', 'batchClear', { write: true, method: 'BatchClearValues', handle: batchClearValues }],
  ],
};

function routeOf(method: string, t: Target): Route | null {
  return ROUTES[t.kind].find(([m, verb]) => m === method && verb === t.verb)?.[2] ?? null;
}
