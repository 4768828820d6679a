import { createHash } from 'node:crypto';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import { writeEvent } from './event-write.js';
import {
  type CalendarEntry,
  type CalendarEvent,
  eventIdFor,
  type GuestEmail,
  type StoredEvent,
} from './model.js';
import { addDays, formatDate, localPartsAt, weekdayOf } from './time.js';

/** One emulated user's calendars and, per calendar id, their events. */
export interface CalendarData {
  calendars: Map<string, CalendarEntry>;
  events: Map<string, Map<string, StoredEvent>>;
  /** Emails to guests the user's writes asked Calendar to send, oldest first. */
  outbox: GuestEmail[];
}

interface Persona {
  timeZone: string;
  teamCalendar: string;
  colleague: { name: string; email: string };
  lunch: { with: string; place: string };
  conference: string;
}

const PERSONAS: Record<string, Persona> = {
  'ada.lovelace@example.com': {
    timeZone: 'Europe/London',
    teamCalendar: 'Analytical Engine',
    colleague: { name: 'Grace Hopper', email: 'grace.hopper@example.com' },
    lunch: { with: 'Charles Babbage', place: 'The Athenaeum, 107 Pall Mall, London' },
    conference: 'Royal Society lecture series',
  },
  'grace.hopper@example.com': {
    timeZone: 'America/New_York',
    teamCalendar: 'COBOL Working Group',
    colleague: { name: 'Alan Turing', email: 'alan.turing@example.com' },
    lunch: { with: 'Jean Sammet', place: 'Harvard Faculty Club, Cambridge, MA' },
    conference: 'CODASYL meeting',
  },
  'alan.turing@example.com': {
    timeZone: 'Europe/London',
    teamCalendar: 'Bletchley Hut 8',
    colleague: { name: 'Ada Lovelace', email: 'ada.lovelace@example.com' },
    lunch: { with: 'Joan Clarke', place: "King's College, Cambridge" },
    conference: 'Computing Machinery symposium',
  },
};

const COLORS = [
  { colorId: '14', backgroundColor: '#9fe1e7', foregroundColor: '#000000' },
  { colorId: '7', backgroundColor: '#42d692', foregroundColor: '#000000' },
  { colorId: '4', backgroundColor: '#fa573c', foregroundColor: '#000000' },
];

export function groupCalendarId(seed: string): string {
  const hash = createHash('sha256').update(seed).digest('hex').slice(0, 26);
  return `c_${hash}@group.calendar.google.com`;
}

export function entry(
  id: string,
  summary: string,
  timeZone: string,
  role: CalendarEntry['accessRole'],
  primary: boolean,
  color: number,
  now: number,
): CalendarEntry {
  return {
    id,
    summary,
    timeZone,
    accessRole: role,
    primary,
    ...COLORS[color % COLORS.length]!,
    etag: `"${now}"`,
    hidden: false,
    selected: true,
    deleted: false,
    updatedMs: now,
  };
}

/**
 * Seeds a primary calendar, a team calendar the user owns and a shared one they can only read, with
 * one-off and recurring events around today (relative to the emulator clock) so listings of "this
 * week" are never empty. Event ids derive from the user and a name, so they survive resets.
 */
export function seedCalendar(user: EmulatedUser, ctx: ProviderContext): CalendarData {
  const now = ctx.clock();
  const persona = PERSONAS[user.email] ?? {
    timeZone: 'UTC',
    teamCalendar: 'Team',
    colleague: { name: 'Grace Hopper', email: 'grace.hopper@example.com' },
    lunch: { with: 'a friend', place: 'Cafe' },
    conference: 'Conference',
  };
  const tz = persona.timeZone;
  const primary = entry(user.email, user.email, tz, 'owner', true, 0, now);
  const team = entry(groupCalendarId(`${user.id}:team`), persona.teamCalendar, tz, 'owner', false, 1, now);
  const shared = entry(
    groupCalendarId(`${user.id}:oncall`),
    'Engineering on-call',
    tz,
    'reader',
    false,
    2,
    now,
  );
  const data: CalendarData = {
    calendars: new Map([primary, team, shared].map((c) => [c.id, c])),
    events: new Map([primary, team, shared].map((c) => [c.id, new Map()])),
    outbox: [],
  };
  const seed = eventSeeder(user, persona, data, now);
  seedOwnEvents(seed, primary, user, persona);
  seedTeamAndOnCallEvents(seed, team, shared, persona);
  return data;
}

type SeedTime = { dateTime: string; timeZone: string };

/** Dates relative to the user's today, and the way a seed event is stored. */
interface EventSeeder {
  /** Stores the event written from `body`; its id derives from the user and `name`. */
  add(calendar: CalendarEntry, name: string, body: Record<string, unknown>, conference?: boolean): void;
  /** The date `offset` days from today. */
  day(offset: number): string;
  /** A time of the day `offset` days from today. */
  at(offset: number, time: string): SeedTime;
  /** A time of a weekday (0 = Monday) in the week `weeks` weeks from this one. */
  weekDay(weeks: number, weekday: number, time: string): SeedTime;
  /** Monday of this week. */
  monday: { year: number; month: number; day: number };
}

function eventSeeder(user: EmulatedUser, persona: Persona, data: CalendarData, now: number): EventSeeder {
  const tz = persona.timeZone;
  const today = localPartsAt(now, tz);
  const monday = addDays(today, -((weekdayOf(today) + 6) % 7));
  const day = (offset: number) => formatDate(addDays(today, offset));
  const at = (offset: number, time: string) => ({ dateTime: `${day(offset)}T${time}:00`, timeZone: tz });
  const weekDay = (weeks: number, weekday: number, time: string) => ({
    dateTime: `${formatDate(addDays(monday, weeks * 7 + weekday))}T${time}:00`,
    timeZone: tz,
  });

  const add = (calendar: CalendarEntry, name: string, body: Record<string, unknown>, conference = false) => {
    const event = writeEvent(body, {
      calendar,
      user,
      now: now - 14 * 86_400_000,
      conferenceDataVersion: conference ? 1 : 0,
      merge: false,
      newId: eventIdFor(`${user.id}:${name}`),
    });
    if ('message' in event) throw new Error(`bad seed event ${name}: ${event.message}`);
    if (calendar.accessRole !== 'owner') {
      // Someone else's calendar: they organize, the user only sees it.
      event.organizer = { email: calendar.id, displayName: calendar.summary };
      event.creator = { email: persona.colleague.email, displayName: persona.colleague.name };
    }
    const stored: StoredEvent = { resource: event as CalendarEvent, exceptions: new Map() };
    data.events.get(calendar.id)?.set(event.id, stored);
  };
  return { add, day, at, weekDay, monday };
}

/** The user's own calendar: a weekly sync, a 1:1 with a Meet link, lunch, focus time, a conference. */
function seedOwnEvents(
  { add, day, at, weekDay }: EventSeeder,
  primary: CalendarEntry,
  user: EmulatedUser,
  persona: Persona,
): void {
  add(primary, 'weekly-sync', {
    summary: 'Weekly team sync',
    description: `Agenda and notes for the ${persona.teamCalendar} team.`,
    start: weekDay(-4, 0, '10:00'),
    end: weekDay(-4, 0, '10:30'),
    recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO'],
    attendees: [
      { email: user.email, displayName: user.name },
      { email: persona.colleague.email, displayName: persona.colleague.name, responseStatus: 'accepted' },
    ],
  });
  add(
    primary,
    'one-on-one',
    {
      summary: `1:1 with ${persona.colleague.name}`,
      start: at(1, '14:00'),
      end: at(1, '14:30'),
      attendees: [{ email: persona.colleague.email, displayName: persona.colleague.name }],
      conferenceData: {
        createRequest: { requestId: `seed-${user.id}`, conferenceSolutionKey: { type: 'hangoutsMeet' } },
      },
    },
    true,
  );
  add(primary, 'lunch', {
    summary: `Lunch with ${persona.lunch.with}`,
    location: persona.lunch.place,
    start: at(2, '12:30'),
    end: at(2, '13:30'),
    transparency: 'opaque',
  });
  add(primary, 'focus', {
    summary: 'Focus time: write the design notes',
    start: at(0, '09:00'),
    end: at(0, '11:00'),
    visibility: 'private',
  });
  add(primary, 'conference', {
    summary: persona.conference,
    start: { date: day(7) },
    end: { date: day(9) },
    transparency: 'transparent',
  });
}

function seedTeamAndOnCallEvents(
  { add, at, weekDay, monday }: EventSeeder,
  team: CalendarEntry,
  shared: CalendarEntry,
  persona: Persona,
): void {
  add(team, 'standup', {
    summary: 'Daily standup',
    start: weekDay(-1, 0, '09:30'),
    end: weekDay(-1, 0, '09:45'),
    recurrence: ['RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;COUNT=20'],
  });
  add(team, 'review', {
    summary: 'Project review',
    description: 'Quarterly review of milestones.',
    start: at(3, '15:00'),
    end: at(3, '16:00'),
  });
  add(shared, 'on-call', {
    summary: `On-call: ${persona.colleague.name}`,
    start: { date: formatDate(monday) },
    end: { date: formatDate(addDays(monday, 7)) },
  });
}
