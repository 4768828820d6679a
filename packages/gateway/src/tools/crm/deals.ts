import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { associations, createRecord, updateRecord } from './records.js';
import {
  CREATE,
  checkCalendarDate,
  closeDateValue,
  DATE_PATTERN,
  PRIORITIES,
  type Priority,
  type PropertyValue,
  priorityValue,
  propertyMap,
  propertyText,
  RECORD_ID_PATTERN,
  recordId,
  stringEnum,
  UPDATE,
} from './shared.js';

/** HubSpot-defined deal associations. */
const DEAL_TO_COMPANY = 341;
const DEAL_TO_CONTACT = 3;

/** The named fields of crm_deal_create, each one deal property. */
const DEAL_FIELDS = [
  'dealname',
  'amount',
  'dealstage',
  'pipeline',
  'closedate',
  'crm_priority',
  'good_deal',
  'dealtype',
  'description',
  'hubspot_owner_id',
] as const;

const goodDeal = Type.Boolean({
  description:
    'Marks the deal as a good deal: sent as the custom boolean deal property good_deal ("true"/"false"). The portal must define that property (internal name good_deal, type single checkbox), otherwise HubSpot refuses the call.',
});

/**
 * Deal properties as HubSpot takes them: crm_priority (HIGH/MEDIUM/LOW) as hs_priority (low/medium/
 * high), a closedate YYYY-MM-DD as midnight UTC (HubSpot's closedate is a date-time), the rest as
 * text; "" or null clears. Values left undefined are not sent.
 */
function dealProperties(values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(values)) {
    if (raw === undefined) continue;
    const value = raw as PropertyValue;
    const clears = value === null || value === '';
    if (name === 'crm_priority') out.hs_priority = clears ? '' : priorityValue(value as Priority);
    else if (name === 'closedate' && !clears) out.closedate = closeDateValue(String(value));
    else out[name] = propertyText(value);
  }
  return out;
}

/** extra_properties must not say again what a named field says, nor bypass the converted ones. */
function extraRepeats(extra: Record<string, unknown> | undefined, given: object): FieldError[] {
  const named = new Set<string>(DEAL_FIELDS);
  const errors: FieldError[] = [];
  for (const key of Object.keys(extra ?? {})) {
    const path = `/extra_properties/${key}`;
    if (key === 'hs_priority' || key === 'crm_priority') {
      errors.push({
        path,
        message:
          'use the crm_priority field (HIGH/MEDIUM/LOW) for the priority (rule: the priority is set through crm_priority).',
      });
    } else if (named.has(key) && key in given) {
      errors.push({
        path,
        message: `repeats the field "${key}" (rule: give each property once, either as a field or in extra_properties).`,
      });
    } else if (key === 'closedate') {
      errors.push({
        path,
        message:
          'use the closedate field (YYYY-MM-DD) for the close date (rule: closedate is validated as a calendar date).',
      });
    }
  }
  return errors;
}

const createInput = Type.Object(
  {
    amount: Type.Number({
      minimum: 0,
      description: 'Deal amount in the portal currency, e.g. 125000 (sent to HubSpot as text).',
    }),
    dealname: Type.String({ minLength: 1, description: 'Deal name, e.g. "Astronomical tables engine".' }),
    dealstage: Type.String({
      minLength: 1,
      description:
        'Stage id in the deal pipeline. The default "Sales Pipeline" stages are appointmentscheduled, qualifiedtobuy, presentationscheduled, decisionmakerboughtin, contractsent, closedwon, closedlost; custom pipelines have their own stage ids.',
    }),
    closedate: Type.Optional(
      Type.String({
        pattern: DATE_PATTERN,
        description:
          'Expected close date as YYYY-MM-DD (a real calendar date), e.g. "2025-06-30"; stored as midnight UTC.',
      }),
    ),
    dealtype: Type.Optional(
      stringEnum(['newbusiness', 'existingbusiness'], 'Deal type: newbusiness or existingbusiness.'),
    ),
    description: Type.Optional(Type.String({ description: 'Free-text description of the deal.' })),
    crm_priority: Type.Optional(
      stringEnum(
        PRIORITIES,
        "Deal priority: HIGH, MEDIUM or LOW (sent as HubSpot's hs_priority high/medium/low).",
      ),
    ),
    pipeline: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Pipeline id; "default" is the portal\'s Sales Pipeline (used when omitted).',
      }),
    ),
    good_deal: Type.Optional(goodDeal),
    hubspot_owner_id: Type.Optional(
      Type.String({
        pattern: RECORD_ID_PATTERN,
        description: 'Id of the HubSpot owner (user) to assign, e.g. "81000101".',
      }),
    ),
    company_ids: Type.Optional(
      Type.Array(recordId('Company record id.'), {
        maxItems: 10,
        uniqueItems: true,
        description: 'Ids of existing companies to associate the deal with (at most 10).',
      }),
    ),
    contact_ids: Type.Optional(
      Type.Array(recordId('Contact record id.'), {
        maxItems: 10,
        uniqueItems: true,
        description: 'Ids of existing contacts to associate the deal with (at most 10).',
      }),
    ),
    extra_properties: Type.Optional(
      propertyMap(
        'Any other deal properties by HubSpot internal name (including custom ones), e.g. {"hs_next_step": "Send contract"}. Must not repeat a field given above.',
      ),
    ),
  },
  { additionalProperties: false },
);

const createExample = {
  dealname: 'Astronomical tables engine',
  amount: 125000,
  dealstage: 'contractsent',
  pipeline: 'default',
  closedate: '2025-06-30',
  crm_priority: 'HIGH',
  dealtype: 'newbusiness',
};

export const crmDealCreate = defineTool({
  name: 'crm_deal_create',
  provider: 'hubspot',
  description: `Creates a deal in the HubSpot CRM, optionally linked to companies and contacts, and returns the created record (id, properties, createdAt). Use it to record a new sales opportunity. Rules: dealname, amount (a number ≥ 0) and dealstage (a stage id of the pipeline) are required; closedate is a real calendar date YYYY-MM-DD; crm_priority is HIGH, MEDIUM or LOW (HubSpot's hs_priority); good_deal is a boolean sent as the custom deal property good_deal. Example: ${JSON.stringify(createExample)}`,
  input: createInput,
  annotations: CREATE,
  check: (input) => [
    ...checkCalendarDate('/closedate', input.closedate),
    ...extraRepeats(input.extra_properties, input),
  ],
  async run(input, { client }) {
    const named = Object.fromEntries(DEAL_FIELDS.map((name) => [name, input[name]]));
    const properties = { ...dealProperties(input.extra_properties ?? {}), ...dealProperties(named) };
    return createRecord(client, 'deals', properties, [
      ...associations(input.company_ids, DEAL_TO_COMPANY),
      ...associations(input.contact_ids, DEAL_TO_CONTACT),
    ]);
  },
});

const NOTHING_TO_CHANGE =
  'Nothing to change (rule: properties holds the deal properties to change; give at least one, or good_deal).';

const updateExample = {
  deal_id: '100024',
  properties: { dealstage: 'closedwon', closedate: '2025-07-01', crm_priority: 'LOW' },
  good_deal: true,
};

export const crmDealUpdate = defineTool({
  name: 'crm_deal_update',
  provider: 'hubspot',
  description: `Changes properties of an existing HubSpot deal and returns the updated record; only the properties given change. Use it to move a deal to another stage, change its amount, close date or priority. Rules: properties is required and holds the properties to change by HubSpot internal name (dealname, amount, dealstage, pipeline, closedate, dealtype, description, custom ones), "" or null clears one; in it crm_priority is HIGH, MEDIUM or LOW (sent as hs_priority) and closedate a real calendar date YYYY-MM-DD; good_deal is a boolean sent beside properties as the custom property good_deal. Example: ${JSON.stringify(updateExample)}`,
  input: Type.Object(
    {
      deal_id: recordId('HubSpot record id of the deal (digits), e.g. "100024".'),
      properties: propertyMap(
        'The deal properties to change, by HubSpot internal name (custom ones too), e.g. {"dealstage": "closedwon", "amount": 130000}; "" or null clears one. crm_priority (HIGH, MEDIUM or LOW) is sent as hs_priority; closedate is YYYY-MM-DD. {} when only good_deal changes.',
      ),
      good_deal: Type.Optional(goodDeal),
    },
    { additionalProperties: false },
  ),
  // Portico's earlier name of the free-form properties object.
  aliases: { props: { to: 'properties' } },
  annotations: UPDATE,
  check(input) {
    const props = input.properties;
    const errors: FieldError[] = [];
    if ('crm_priority' in props && 'hs_priority' in props) {
      errors.push({
        path: '/properties/hs_priority',
        message: 'Give the priority once (rule: crm_priority and hs_priority are the same property).',
      });
    }
    const priority = props.crm_priority;
    if (
      priority !== undefined &&
      priority !== null &&
      priority !== '' &&
      !(PRIORITIES as readonly unknown[]).includes(priority)
    ) {
      errors.push({
        path: '/properties/crm_priority',
        message: `${JSON.stringify(priority)} is not allowed (rule: crm_priority is one of ${PRIORITIES.join(', ')}).`,
      });
    }
    const closedate = props.closedate;
    if (closedate !== undefined && closedate !== null && closedate !== '') {
      errors.push(...checkCalendarDate('/properties/closedate', String(closedate)));
    }
    if ('good_deal' in props && input.good_deal !== undefined) {
      errors.push({
        path: '/properties/good_deal',
        message: 'repeats good_deal given beside properties (rule: give each property once).',
      });
    }
    if (Object.keys(props).length === 0 && input.good_deal === undefined) {
      errors.push({ path: '/properties', message: NOTHING_TO_CHANGE });
    }
    return errors;
  },
  run: (input, { client }) =>
    updateRecord(
      client,
      'deals',
      input.deal_id,
      // check() refused good_deal given both ways, so at most one of the two is defined.
      dealProperties({ good_deal: input.good_deal, ...input.properties }),
    ),
});
