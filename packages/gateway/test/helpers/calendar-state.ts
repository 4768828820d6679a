/** The emulated Google Calendar's state, as far as the calendar tool tests read it back. */
export interface StoredEvent {
  resource: Record<string, unknown> & {
    id: string;
    status: string;
    attendees?: Array<{ email: string }>;
  };
}

export interface EmulatedCalendar {
  calendars: Map<string, { id: string; accessRole: string; summary: string; primary: boolean }>;
  /** Calendar id → event id → event. */
  events: Map<string, Map<string, StoredEvent>>;
  /** The mails Google would send for sendUpdates. */
  outbox: Array<{ to: string; eventId: string; kind: string }>;
}

export interface CalendarState {
  byUser: Map<string, { calendar: EmulatedCalendar }>;
}
