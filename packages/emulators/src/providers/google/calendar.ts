import type { FastifyInstance } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../core/types.js';
import type { GoogleDataOf } from './index.js';

/** One emulated user's calendars and their events. */
export interface CalendarData {
  calendars: Map<string, Record<string, unknown>>;
  events: Map<string, Map<string, Record<string, unknown>>>;
}

export function seedCalendar(_user: EmulatedUser, _ctx: ProviderContext): CalendarData {
  return { calendars: new Map(), events: new Map() };
}

export function registerCalendarRoutes(
  _app: FastifyInstance,
  _ctx: ProviderContext,
  _dataOf: GoogleDataOf,
): void {}
