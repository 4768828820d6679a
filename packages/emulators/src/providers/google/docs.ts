import type { FastifyInstance } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../core/types.js';
import type { GoogleDataOf } from './index.js';
import type { DriveFile } from './shared.js';

/** One emulated user's documents, by id. */
export interface DocsData {
  documents: Map<string, unknown>;
}

export function seedDocs(
  _user: EmulatedUser,
  _drive: Map<string, DriveFile>,
  _ctx: ProviderContext,
): DocsData {
  return { documents: new Map() };
}

export function registerDocsRoutes(
  _app: FastifyInstance,
  _ctx: ProviderContext,
  _dataOf: GoogleDataOf,
): void {}
