import {
  addDays,
  daysInMonth,
  epochOfLocal,
  isValidTimeZone,
  type LocalDateTime,
  parseDate,
  weekdayOf,
} from './time.js';

/** RFC 5545 recurrence, the subset Google Calendar clients actually send. */
export interface RecurrenceRule {
  freq: 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';
  interval: number;
  count?: number;
  /** Last allowed start: an instant, or (for an UNTIL date) a whole local day. */
  until?: { epochMs: number } | { date: string };
  byDay?: Array<{ weekday: number; ordinal?: number }>;
  byMonthDay?: number[];
  byMonth?: number[];
  /** Week start, 0 = Sunday; RFC 5545 default is Monday. */
  wkst: number;
}

export interface ParsedRecurrence {
  rules: RecurrenceRule[];
  /** Excluded starts: epoch ms (timed events) or YYYY-MM-DD (all-day events). */
  exdates: Set<string>;
  rdates: string[];
}

const WEEKDAYS: Record<string, number> = { SU: 0, MO: 1, TU: 2, WE: 3, TH: 4, FR: 5, SA: 6 };

type Day = { year: number; month: number; day: number };

function dateKey(d: Day): string {
  return `${String(d.year).padStart(4, '0')}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
}

/** `20250106T100000Z`, `20250106T100000` (read in `tz`) or `20250106` → exdate key. */
function icalValueKey(value: string, tz: string | undefined, allDay: boolean): string | null {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?$/.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, z] = m;
  const date = parseDate(`${y}-${mo}-${d}`);
  if (!date) return null;
  if (allDay || h === undefined) return dateKey(date);
  const local: LocalDateTime = { ...date, hour: Number(h), minute: Number(mi), second: Number(s) };
  if (z)
    return String(Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second));
  return String(epochOfLocal(local, tz && isValidTimeZone(tz) ? tz : 'UTC'));
}

function parseRule(body: string): RecurrenceRule | string {
  const parts = new Map<string, string>();
  for (const piece of body.split(';')) {
    const [k, v] = piece.split('=');
    if (!k || v === undefined) return `Invalid recurrence rule part: ${piece}`;
    parts.set(k.toUpperCase(), v.toUpperCase());
  }
  const freq = parts.get('FREQ');
  if (freq !== 'DAILY' && freq !== 'WEEKLY' && freq !== 'MONTHLY' && freq !== 'YEARLY') {
    return `Unsupported recurrence frequency: ${freq ?? '(none)'}`;
  }
  const rule: RecurrenceRule = { freq, interval: 1, wkst: 1 };
  const interval = parts.get('INTERVAL');
  if (interval !== undefined) {
    rule.interval = Number(interval);
    if (!Number.isInteger(rule.interval) || rule.interval < 1) return 'Invalid INTERVAL';
  }
  const count = parts.get('COUNT');
  if (count !== undefined) {
    rule.count = Number(count);
    if (!Number.isInteger(rule.count) || rule.count < 1) return 'Invalid COUNT';
  }
  const until = parts.get('UNTIL');
  if (until !== undefined) {
    if (rule.count !== undefined) return 'COUNT and UNTIL are mutually exclusive';
    const key = icalValueKey(until, 'UTC', false);
    if (!key) return 'Invalid UNTIL';
    rule.until = key.includes('-') ? { date: key } : { epochMs: Number(key) };
  }
  const byDay = parts.get('BYDAY');
  if (byDay !== undefined) {
    rule.byDay = [];
    for (const item of byDay.split(',')) {
      const m = /^([+-]?\d{1,2})?(SU|MO|TU|WE|TH|FR|SA)$/.exec(item);
      if (!m) return `Invalid BYDAY value: ${item}`;
      const weekday = WEEKDAYS[m[2] as string] as number;
      rule.byDay.push(m[1] ? { weekday, ordinal: Number(m[1]) } : { weekday });
    }
  }
  const byMonthDay = parts.get('BYMONTHDAY');
  if (byMonthDay !== undefined) {
    rule.byMonthDay = byMonthDay.split(',').map(Number);
    if (rule.byMonthDay.some((d) => !Number.isInteger(d) || d === 0 || d < -31 || d > 31))
      return 'Invalid BYMONTHDAY';
  }
  const byMonth = parts.get('BYMONTH');
  if (byMonth !== undefined) {
    rule.byMonth = byMonth.split(',').map(Number);
    if (rule.byMonth.some((m) => !Number.isInteger(m) || m < 1 || m > 12)) return 'Invalid BYMONTH';
  }
  const wkst = parts.get('WKST');
  if (wkst !== undefined) {
    const w = WEEKDAYS[wkst];
    if (w === undefined) return 'Invalid WKST';
    rule.wkst = w;
  }
  return rule;
}

/** Parses an event's `recurrence` lines (RRULE, EXDATE, RDATE); a string is the reason it is invalid. */
export function parseRecurrence(
  lines: string[],
  timeZone: string | undefined,
  allDay: boolean,
): ParsedRecurrence | string {
  const out: ParsedRecurrence = { rules: [], exdates: new Set(), rdates: [] };
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) return `Invalid recurrence line: ${line}`;
    const [name, ...params] = line.slice(0, colon).split(';');
    const value = line.slice(colon + 1);
    const tzid = params.find((p) => p.toUpperCase().startsWith('TZID='))?.slice(5) ?? timeZone;
    switch (name?.toUpperCase()) {
      case 'RRULE': {
        const rule = parseRule(value);
        if (typeof rule === 'string') return rule;
        out.rules.push(rule);
        break;
      }
      case 'EXDATE':
      case 'RDATE':
        for (const v of value.split(',')) {
          const key = icalValueKey(v, tzid, allDay);
          if (!key) return `Invalid ${name} value: ${v}`;
          if (name.toUpperCase() === 'EXDATE') out.exdates.add(key);
          else out.rdates.push(key);
        }
        break;
      default:
        return `Unsupported recurrence line: ${line}`;
    }
  }
  return out;
}

/** Candidate days of one period of a rule, in ascending order. */
function periodDays(rule: RecurrenceRule, first: Day, period: number): Day[] {
  const step = period * rule.interval;
  switch (rule.freq) {
    case 'DAILY': {
      const d = addDays(first, step);
      if (rule.byDay && !rule.byDay.some((b) => b.weekday === weekdayOf(d))) return [];
      if (rule.byMonth && !rule.byMonth.includes(d.month)) return [];
      return [d];
    }
    case 'WEEKLY': {
      const weekStart = addDays(first, -((weekdayOf(first) - rule.wkst + 7) % 7) + step * 7);
      const weekdays = rule.byDay?.map((b) => b.weekday) ?? [weekdayOf(first)];
      const days: Day[] = [];
      for (let i = 0; i < 7; i++) {
        const d = addDays(weekStart, i);
        if (weekdays.includes(weekdayOf(d)) && (!rule.byMonth || rule.byMonth.includes(d.month)))
          days.push(d);
      }
      return days;
    }
    case 'MONTHLY':
    case 'YEARLY': {
      const months: Array<{ year: number; month: number }> = [];
      if (rule.freq === 'MONTHLY') {
        const index = first.year * 12 + (first.month - 1) + step;
        const month = (index % 12) + 1;
        if (!rule.byMonth || rule.byMonth.includes(month))
          months.push({ year: Math.floor(index / 12), month });
      } else {
        for (const month of rule.byMonth ?? [first.month]) months.push({ year: first.year + step, month });
      }
      const days: Day[] = [];
      for (const { year, month } of months) days.push(...monthDays(rule, first, year, month));
      return days.sort((a, b) => dateKey(a).localeCompare(dateKey(b)));
    }
  }
}

function monthDays(rule: RecurrenceRule, first: Day, year: number, month: number): Day[] {
  const length = daysInMonth(year, month);
  const days = new Set<number>();
  if (rule.byMonthDay) {
    for (const d of rule.byMonthDay) {
      const day = d > 0 ? d : length + d + 1;
      if (day >= 1 && day <= length) days.add(day);
    }
  } else if (rule.byDay) {
    for (const b of rule.byDay) {
      const matching: number[] = [];
      for (let day = 1; day <= length; day++)
        if (weekdayOf({ year, month, day }) === b.weekday) matching.push(day);
      if (b.ordinal === undefined) for (const day of matching) days.add(day);
      else {
        const day = b.ordinal > 0 ? matching[b.ordinal - 1] : matching[matching.length + b.ordinal];
        if (day !== undefined) days.add(day);
      }
    }
  } else if (first.day <= length) {
    // RFC 5545: a start on the 31st skips months without one rather than clamping.
    days.add(first.day);
  }
  return [...days].sort((a, b) => a - b).map((day) => ({ year, month, day }));
}

export type EventStart =
  | { allDay: true; date: Day }
  | { allDay: false; local: LocalDateTime; timeZone: string };

/** One occurrence: its start instant and a key (epoch ms, or YYYY-MM-DD for all-day). */
export interface Occurrence {
  key: string;
  /** For timed events the instant; for all-day events the UTC midnight of the date. */
  startMs: number;
  date: Day;
}

/**
 * Expands a recurrence from its first start up to `horizonMs` (exclusive) or `limit` occurrences,
 * skipping EXDATEs. COUNT counts excluded occurrences too, as RFC 5545 says.
 */
export function expandRecurrence(
  start: EventStart,
  recurrence: ParsedRecurrence,
  horizonMs: number,
  limit = 5000,
): Occurrence[] {
  const firstDay: Day = start.allDay ? start.date : start.local;
  const occurrenceOf = (d: Day): Occurrence => {
    if (start.allDay) return { key: dateKey(d), startMs: Date.UTC(d.year, d.month - 1, d.day), date: d };
    const ms = epochOfLocal({ ...start.local, year: d.year, month: d.month, day: d.day }, start.timeZone);
    return { key: String(ms), startMs: ms, date: d };
  };
  const first = occurrenceOf(firstDay);
  const found = new Map<string, Occurrence>([[first.key, first]]);
  for (const rule of recurrence.rules) {
    let produced = 1; // DTSTART is the first occurrence.
    const beyondUntil = (o: Occurrence) => {
      if (!rule.until) return false;
      if ('date' in rule.until) return dateKey(o.date) > rule.until.date;
      return o.startMs > rule.until.epochMs;
    };
    let emptyPeriods = 0;
    outer: for (let period = 0; found.size < limit; period++) {
      const days = periodDays(rule, firstDay, period);
      emptyPeriods = days.length === 0 ? emptyPeriods + 1 : 0;
      if (emptyPeriods > 2000) break;
      for (const d of days) {
        if (dateKey(d) <= dateKey(firstDay)) continue;
        const o = occurrenceOf(d);
        if (beyondUntil(o) || o.startMs >= horizonMs) break outer;
        if (rule.count !== undefined && produced >= rule.count) break outer;
        produced++;
        found.set(o.key, o);
      }
    }
  }
  for (const key of recurrence.rdates) {
    const date = start.allDay ? parseDate(key) : null;
    if (date) found.set(key, occurrenceOf(date));
    else if (!start.allDay) {
      const ms = Number(key);
      found.set(key, { key, startMs: ms, date: firstDay });
    }
  }
  return [...found.values()]
    .filter((o) => !recurrence.exdates.has(o.key) && o.startMs < horizonMs)
    .sort((a, b) => a.startMs - b.startMs)
    .slice(0, limit);
}
