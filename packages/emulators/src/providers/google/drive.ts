import type { FastifyInstance } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../core/types.js';
import type { GoogleDataOf } from './index.js';
import type { DriveFile } from './shared.js';

export function seedDrive(_user: EmulatedUser, _ctx: ProviderContext): Map<string, DriveFile> {
  return new Map();
}

export function registerDriveRoutes(
  _app: FastifyInstance,
  _ctx: ProviderContext,
  _dataOf: GoogleDataOf,
): void {}
