import type { AnyTool } from '../types.js';
import { calendarCreateEvent } from './create-event.js';
import { calendarDeleteEvent } from './delete-event.js';
import { calendarGetEventById } from './get-event.js';
import { calendarListCalendars } from './list-calendars.js';
import { calendarListEvents } from './list-events.js';
import { calendarUpdateEvent } from './update-event.js';

/** The `calendar_` tools. */
export const calendarTools: AnyTool[] = [
  calendarCreateEvent,
  calendarDeleteEvent,
  calendarGetEventById,
  calendarListCalendars,
  calendarListEvents,
  calendarUpdateEvent,
];
