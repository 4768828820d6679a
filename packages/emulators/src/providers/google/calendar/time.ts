/**
 * Wall-clock arithmetic in IANA time zones, done with Intl so recurrences keep their local time
 * across daylight-saving changes exactly as Google Calendar does.
 */

export interface LocalDateTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock reading in `timeZone` at an instant. */
export function localPartsAt(epochMs: number, timeZone: string): LocalDateTime {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(epochMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

function utcOf(l: LocalDateTime): number {
  return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second);
}

/** Offset of `timeZone` from UTC at an instant, in ms. */
export function offsetAt(epochMs: number, timeZone: string): number {
  return utcOf(localPartsAt(epochMs, timeZone)) - Math.floor(epochMs / 1000) * 1000;
}

/** The instant a wall-clock reading in `timeZone` denotes (the earlier one when ambiguous). */
export function epochOfLocal(l: LocalDateTime, timeZone: string): number {
  const asUtc = utcOf(l);
  let guess = asUtc - offsetAt(asUtc, timeZone);
  const second = asUtc - offsetAt(guess, timeZone);
  if (second !== guess) guess = Math.min(guess, second);
  return guess;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

export function formatDate(l: Pick<LocalDateTime, 'year' | 'month' | 'day'>): string {
  return `${pad(l.year, 4)}-${pad(l.month)}-${pad(l.day)}`;
}

/** RFC 3339 with the zone's offset, as Calendar prints `dateTime` (`Z` for UTC). */
export function formatInZone(epochMs: number, timeZone: string): string {
  const l = localPartsAt(epochMs, timeZone);
  const offMin = Math.round(offsetAt(epochMs, timeZone) / 60000);
  const sign = offMin < 0 ? '-' : '+';
  const abs = Math.abs(offMin);
  const zone =
    timeZone === 'UTC' || timeZone === 'Etc/UTC'
      ? 'Z'
      : `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return `${formatDate(l)}T${pad(l.hour)}:${pad(l.minute)}:${pad(l.second)}${zone}`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/;

/**
 * Parses an RFC 3339 date-time. Without an offset it is read in `timeZone`; with neither it is
 * not a valid instant (null), which is what Calendar demands of `timeMin`/`timeMax`.
 */
export function parseDateTime(text: string, timeZone?: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, , zone] = m;
  const local: LocalDateTime = {
    year: Number(y),
    month: Number(mo),
    day: Number(d),
    hour: Number(h),
    minute: Number(mi),
    second: Number(s),
  };
  if (local.month < 1 || local.month > 12 || local.day < 1 || local.day > 31 || local.hour > 23) return null;
  if (zone) {
    const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${zone.toUpperCase()}`);
    return Number.isNaN(ms) ? null : ms;
  }
  if (!timeZone || !isValidTimeZone(timeZone)) return null;
  return epochOfLocal(local, timeZone);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function parseDate(text: string): { year: number; month: number; day: number } | null {
  const m = DATE.exec(text);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const probe = new Date(Date.UTC(year, month - 1, day));
  if (probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) return null;
  return { year, month, day };
}

/** Calendar arithmetic on dates only (no zone involved). */
export function addDays(d: { year: number; month: number; day: number }, days: number) {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(d: { year: number; month: number; day: number }): number {
  return new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
