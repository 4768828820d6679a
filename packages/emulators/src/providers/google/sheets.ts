import type { FastifyInstance } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../core/types.js';
import type { GoogleDataOf } from './index.js';
import type { DriveFile } from './shared.js';

/** One emulated user's spreadsheets, by id. */
export interface SheetsData {
  spreadsheets: Map<string, unknown>;
}

export function seedSheets(
  _user: EmulatedUser,
  _drive: Map<string, DriveFile>,
  _ctx: ProviderContext,
): SheetsData {
  return { spreadsheets: new Map() };
}

export function registerSheetsRoutes(
  _app: FastifyInstance,
  _ctx: ProviderContext,
  _dataOf: GoogleDataOf,
): void {}
