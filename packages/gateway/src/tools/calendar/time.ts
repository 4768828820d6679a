/**
 * RFC 3339 date-times and IANA time zones for the `calendar_` tools: parsing, instants, and the
 * texts Calendar v3 expects.
 */

interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export interface ParsedDateTime {
  local: LocalDateTime;
  /** Minutes east of UTC when the text carries an offset. */
  offsetMinutes?: number;
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|z|[+-]\d{2}:\d{2})?$/;

/** Parses an RFC 3339 date-time (offset optional); null when a field is out of range. */
export function parseDateTime(text: string): ParsedDateTime | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as number[];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const local = { year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second };
  const probe = new Date(Date.UTC(local.year, local.month - 1, local.day));
  if (
    local.month < 1 ||
    local.month > 12 ||
    probe.getUTCDate() !== local.day ||
    local.hour > 23 ||
    local.minute > 59 ||
    local.second > 59
  ) {
    return null;
  }
  const zone = m[7];
  if (zone === undefined) return { local };
  if (zone === 'Z' || zone === 'z') return { local, offsetMinutes: 0 };
  const sign = zone.startsWith('-') ? -1 : 1;
  const offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  if (Math.abs(offsetMinutes) > 18 * 60) return null;
  return { local, offsetMinutes };
}

const TIME_ZONES = new Set(Intl.supportedValuesOf('timeZone'));

/**
 * An IANA zone Google accepts: one of the runtime's canonical zones, or an alias it resolves
 * ("UTC", "Asia/Calcutta"). Offsets such as "+02:00" are not zone names.
 */
export function isIanaTimeZone(name: string): boolean {
  if (TIME_ZONES.has(name)) return true;
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `timeZone` from UTC at the instant `ms`, in minutes. */
function zoneOffsetMinutes(ms: number, timeZone: string): number {
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
  const parts = Object.fromEntries(f.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const asUtc = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60_000);
}

/** The instant a parsed date-time names: by its own offset, else as wall time in `timeZone`. */
export function instantOf(value: ParsedDateTime, timeZone: string | undefined): number {
  const { year, month, day, hour, minute, second } = value.local;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  if (value.offsetMinutes !== undefined) return wall - value.offsetMinutes * 60_000;
  const zone = timeZone ?? 'UTC';
  // Two passes settle the offset, including just after a DST change.
  let ms = wall - zoneOffsetMinutes(wall, zone) * 60_000;
  ms = wall - zoneOffsetMinutes(ms, zone) * 60_000;
  return ms;
}

function pad(n: number, width = 2): string {
  return String(Math.abs(n)).padStart(width, '0');
}

/** RFC 3339 text of an instant at a fixed offset (minutes east of UTC). */
export function formatAtOffset(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000);
  const date = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
  const time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  return `${date}T${time}${sign}${pad(Math.trunc(offsetMinutes / 60))}:${pad(offsetMinutes % 60)}`;
}

/** RFC 3339 text of an instant as wall time in `timeZone`, with that zone's offset then. */
export function formatInZone(ms: number, timeZone: string): string {
  return formatAtOffset(ms, zoneOffsetMinutes(ms, timeZone));
}

/** The date-time as Calendar should get it: seconds always present, offset kept when given. */
export function normalizeDateTime(value: ParsedDateTime): string {
  const { year, month, day, hour, minute, second } = value.local;
  const text = `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}`;
  if (value.offsetMinutes === undefined) return text;
  if (value.offsetMinutes === 0) return `${text}Z`;
  const sign = value.offsetMinutes < 0 ? '-' : '+';
  return `${text}${sign}${pad(Math.trunc(value.offsetMinutes / 60))}:${pad(value.offsetMinutes % 60)}`;
}

/** The end instant as text: in the start's own offset when it had one, else in the event's zone. */
export function endText(endMs: number, start: ParsedDateTime, timeZone: string | undefined): string {
  if (start.offsetMinutes !== undefined) return formatAtOffset(endMs, start.offsetMinutes);
  return formatInZone(endMs, timeZone ?? 'UTC');
}
