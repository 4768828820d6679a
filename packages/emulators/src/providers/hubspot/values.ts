import type { FastifyReply } from 'fastify';
import { sendValidationError } from './errors.js';
import { type ObjectTypeName, type PropertyDefinition, propertyDefinition } from './schema.js';
import type { CrmRecord, Portal } from './store.js';

/** One refused property value, worded as HubSpot words it inside "Property values were not valid". */
export interface PropertyProblem {
  name: string;
  error: string;
  message: string;
}

export type PropertyWrite =
  | { ok: true; values: Map<string, string> }
  | { ok: false; problems: PropertyProblem[] };

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Epoch ms, an ISO date (midnight UTC) or an ISO date-time, as HubSpot accepts for date-time properties. */
export function parseHubSpotTime(raw: string): number | undefined {
  const trimmed = raw.trim();
  if (/^-?\d+$/.test(trimmed)) return Number(trimmed);
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const ms = Date.parse(`${trimmed}T00:00:00.000Z`);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(trimmed)) {
    const ms = Date.parse(trimmed);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

function asText(value: unknown): string | undefined {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function checkValue(
  portal: Portal,
  def: PropertyDefinition,
  raw: string,
): { value: string } | { problem: PropertyProblem } {
  const problem = (error: string, message: string) => ({ problem: { name: def.name, error, message } });
  // An empty string clears a property at HubSpot, whatever its type.
  if (raw === '') return { value: '' };
  switch (def.type) {
    case 'number': {
      const n = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(n))
        return problem('INVALID_INTEGER', `${raw} was not a valid number.`);
      return { value: String(n) };
    }
    case 'datetime':
    case 'date': {
      const ms = parseHubSpotTime(raw);
      if (ms === undefined) {
        return problem(
          'INVALID_DATE',
          `${raw} was not a valid date. Use epoch milliseconds or an ISO 8601 date (2025-06-30) or date-time (2025-06-30T12:00:00Z).`,
        );
      }
      return { value: new Date(ms).toISOString() };
    }
    case 'bool': {
      const lower = raw.trim().toLowerCase();
      if (lower === 'true' || lower === 'false') return { value: lower };
      return problem('INVALID_OPTION', `${raw} was not one of the allowed options: [true, false]`);
    }
    case 'enumeration': {
      const allowed = def.ownerReference
        ? portal.owners.map((o) => o.id)
        : (def.options ?? []).map((o) => o.value);
      if (!allowed.includes(raw)) {
        return problem(
          'INVALID_OPTION',
          `${raw} was not one of the allowed options: [${allowed.join(', ')}]`,
        );
      }
      return { value: raw };
    }
    default: {
      if (def.name === 'email') {
        const email = raw.trim().toLowerCase();
        if (!EMAIL_PATTERN.test(email)) return problem('INVALID_EMAIL', `Email address ${raw} is invalid`);
        return { value: email };
      }
      return { value: raw };
    }
  }
}

/** Validates a `properties` object of a create or update against the object type's definitions. */
export function validatePropertyWrite(portal: Portal, type: ObjectTypeName, input: unknown): PropertyWrite {
  if (input === undefined || input === null) return { ok: true, values: new Map() };
  if (typeof input !== 'object' || Array.isArray(input)) {
    return {
      ok: false,
      problems: [{ name: 'properties', error: 'INVALID_INPUT', message: 'properties must be an object' }],
    };
  }
  const values = new Map<string, string>();
  const problems: PropertyProblem[] = [];
  for (const [name, rawValue] of Object.entries(input as Record<string, unknown>)) {
    const def = propertyDefinition(type, name);
    if (!def) {
      problems.push({ name, error: 'PROPERTY_DOESNT_EXIST', message: `Property "${name}" does not exist` });
      continue;
    }
    const raw = asText(rawValue);
    if (raw === undefined) {
      problems.push({
        name,
        error: 'INVALID_INPUT',
        message: `${JSON.stringify(rawValue)} is not a valid value for ${name}`,
      });
      continue;
    }
    if (def.readOnly) {
      problems.push({
        name,
        error: 'READ_ONLY_VALUE',
        message: `"${name}" is a read only property; its value cannot be set.`,
      });
      continue;
    }
    const checked = checkValue(portal, def, raw);
    if ('problem' in checked) problems.push(checked.problem);
    else values.set(name, checked.value);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, values };
}

export function sendPropertyProblems(
  reply: FastifyReply,
  portal: Portal,
  problems: PropertyProblem[],
): FastifyReply {
  const items = problems.map((p) => ({
    isValid: false,
    message: p.message,
    error: p.error,
    name: p.name,
    localizedErrorMessage: p.message,
    portalId: portal.hubId,
  }));
  return sendValidationError(reply, `Property values were not valid: ${JSON.stringify(items)}`, {
    errors: problems.map((p) => ({ message: p.message, code: p.error, context: { propertyName: [p.name] } })),
  });
}

/** Writes validated values; an empty value removes the property, as at HubSpot. */
export function applyValues(record: CrmRecord, values: Map<string, string>): void {
  for (const [name, value] of values) {
    if (value === '') record.properties.delete(name);
    else record.properties.set(name, value);
  }
}
