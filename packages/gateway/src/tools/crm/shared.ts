import { type TNumber, type TString, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { stringEnum } from '../schema.js';

/**
 * What the `crm_` tools share: the spec's property names mapped to HubSpot's and the input rules
 * every search and write follows (search filters are in ./filters.ts, the endpoints in ./records.ts).
 */

export type CrmObjectType = 'companies' | 'contacts' | 'deals';

/** A HubSpot record as the v3 object endpoints return it. */
export interface CrmRecord {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  [key: string]: unknown;
}

export interface CrmPage {
  total?: number;
  results: CrmRecord[];
  paging?: { next?: { after?: string } };
}

/** HubSpot record ids are numeric strings (`"100001"`). */
export const RECORD_ID_PATTERN = '^[0-9]+$';

export function recordId(description: string): TString {
  return Type.String({ pattern: RECORD_ID_PATTERN, minLength: 1, description });
}

/** `"email,firstname , lastname"`: HubSpot internal property names, comma-separated. */
export const PROPERTIES_PATTERN = '^\\s*[A-Za-z0-9_]+(\\s*,\\s*[A-Za-z0-9_]+)*\\s*$';

export function propertiesParam(defaults: string): TString {
  return Type.String({
    pattern: PROPERTIES_PATTERN,
    description: `HubSpot internal property names to return, comma-separated (e.g. "email,firstname,hs_lead_status"). Unknown names are ignored by HubSpot. Omitted: HubSpot's defaults (${defaults}).`,
  });
}

/** HubSpot's largest page, for searches and lists alike. */
const MAX_PAGE = 100;

/** The spec's `limit`: a number (not only an integer) of at most 100; see `pageSize`. */
export function limitParam(noun: string): TNumber {
  return Type.Number({
    minimum: 1,
    maximum: MAX_PAGE,
    description: `${noun} per page, 1–100 (default 10); a fraction is rounded down.`,
  });
}

/** The spec types `limit` as a number; HubSpot takes whole numbers, so a fraction is rounded down. */
export function pageSize(limit: number | undefined): number | undefined {
  return limit === undefined ? undefined : Math.floor(limit);
}

export function splitProperties(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/** The spec's lead status, HubSpot's `hs_lead_status`: the default options of a HubSpot portal. */
export const LEAD_STATUSES = [
  'NEW',
  'OPEN',
  'IN_PROGRESS',
  'OPEN_DEAL',
  'UNQUALIFIED',
  'ATTEMPTED_TO_CONTACT',
  'CONNECTED',
  'BAD_TIMING',
] as const;

export const leadStatusSchema = stringEnum(
  LEAD_STATUSES,
  `Lead status, sent as HubSpot's hs_lead_status. One of: ${LEAD_STATUSES.join(', ')}.`,
);

/** The spec's HIGH/MEDIUM/LOW; HubSpot's `hs_priority` option values are lower case. */
export const PRIORITIES = ['HIGH', 'MEDIUM', 'LOW'] as const;
export type Priority = (typeof PRIORITIES)[number];

export function priorityValue(priority: Priority): string {
  return priority.toLowerCase();
}

export type PropertyValue = string | number | boolean | null;

/** A property value as HubSpot stores it: text. */
export const propertyValueSchema = Type.Unsafe<PropertyValue>({
  type: ['string', 'number', 'boolean', 'null'],
  description:
    'Property value. HubSpot stores text: numbers and booleans are sent as text, "" or null clears the property.',
});

/** Properties by HubSpot internal name: the free-form part of creates and updates. */
export function propertyMap(description: string) {
  return Type.Record(Type.String({ pattern: '^[A-Za-z0-9_]+$' }), propertyValueSchema, { description });
}

export function propertyText(value: PropertyValue): string {
  return value === null ? '' : String(value);
}

/** `YYYY-MM-DD` that is also a real calendar date (no 2025-02-30). */
export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export function checkCalendarDate(path: string, value: string | undefined): FieldError[] {
  if (value === undefined || isCalendarDate(value)) return [];
  return [
    {
      path,
      message: `"${value}" is not a calendar date (rule: closedate is a real date in the form YYYY-MM-DD, e.g. "2025-06-30").`,
    },
  ];
}

/** Midnight UTC of the date: HubSpot's closedate is a date-time property. */
export function closeDateValue(date: string): string {
  return `${date}T00:00:00.000Z`;
}

export const READ_ONLY = { read_only: true, destructive: false, idempotent: true } as const;
export const CREATE = { read_only: false, destructive: false, idempotent: false } as const;
export const UPDATE = { read_only: false, destructive: true, idempotent: true } as const;

export { stringEnum };
