import type { ValidateFunction } from 'ajv';
import { Problem } from '../errors/problem.js';
import { closestName } from '../validation/closest-name.js';
import { bodyAjv, toFieldErrors } from '../validation/validator.js';
import type { AnyTriggerType, Change } from './definition.js';
import { calendarEvents } from './types/google-calendar.js';
import { docsDocument, driveFiles, sheetsSpreadsheet } from './types/google-drive.js';
import { crmCompanies, crmContacts, crmDeals } from './types/hubspot.js';
import { notesComments, notesDatabaseRows, notesPage } from './types/notion.js';
import { sharepointDriveItems } from './types/sharepoint.js';

/** Every trigger type Portico ships, in one list: the API, the docs and the poller read it. */
export const TRIGGER_TYPES: readonly AnyTriggerType[] = [
  calendarEvents,
  driveFiles,
  sheetsSpreadsheet,
  docsDocument,
  crmContacts,
  crmCompanies,
  crmDeals,
  notesDatabaseRows,
  notesPage,
  notesComments,
  sharepointDriveItems,
];

const byName = new Map(TRIGGER_TYPES.map((t) => [t.name, t]));
const validators = new Map<string, ValidateFunction>();

/** The type named `name`; trigger_type_unknown (with the nearest name) otherwise. */
export function triggerType(name: string, path = '/trigger_type'): AnyTriggerType {
  const found = byName.get(name);
  if (found) return found;
  const closest = closestName(name, [...byName.keys()]);
  throw new Problem(
    'trigger_type_unknown',
    `No trigger type "${name}"${closest ? ` (did you mean "${closest}"?)` : ''}; GET /api/v1/trigger-types lists them: ${[...byName.keys()].join(', ')}.`,
    {
      errors: [{ path, message: 'is not a trigger type' }],
      ...(closest ? { extensions: { did_you_mean: closest } } : {}),
    },
  );
}

/** The name a change goes by in the type's events (Calendar's deletions are cancellations). */
export function changeName(type: AnyTriggerType, change: Change): string {
  return type.changeNames?.[change] ?? change;
}

/** A subscription's config, checked against its type's schema (defaults filled in). */
export function validateConfig(type: AnyTriggerType, config: unknown): Record<string, unknown> {
  let validate = validators.get(type.name);
  if (!validate) {
    validate = bodyAjv.compile(type.config);
    validators.set(type.name, validate);
  }
  const copy = structuredClone(config ?? {});
  if (!validate(copy)) {
    const errors = toFieldErrors(validate.errors, '/config');
    throw new Problem(
      'invalid_input',
      `config does not fit ${type.name}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}. GET /api/v1/trigger-types/${type.name} shows its schema.`,
      { errors },
    );
  }
  return copy as Record<string, unknown>;
}

/** The trigger type as the API lists it. */
export function triggerTypeView(type: AnyTriggerType) {
  return {
    name: type.name,
    provider: type.provider,
    description: type.description,
    changes: type.changes.map((c) => changeName(type, c)),
    mechanism: type.mechanism,
    config_schema: type.config,
  };
}
