import { type Static, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { associations, createRecord, pickProperties, updateRecord } from './records.js';
import {
  CREATE,
  checkCalendarDate,
  closeDateValue,
  DATE_PATTERN,
  PRIORITIES,
  priorityValue,
  propertyText,
  propertyValueSchema,
  RECORD_ID_PATTERN,
  recordId,
  stringEnum,
  UPDATE,
} from './shared.js';

/** HubSpot-defined deal associations. */
const DEAL_TO_COMPANY = 341;
const DEAL_TO_CONTACT = 3;

/** Deal fields sent under their own HubSpot names. */
const PLAIN_FIELDS = [
  'dealname',
  'amount',
  'dealstage',
  'pipeline',
  'dealtype',
  'description',
  'hubspot_owner_id',
] as const;
/** The spec's names that HubSpot knows under another name or in another form. */
const MAPPED_FIELDS = ['closedate', 'crm_priority', 'good_deal'] as const;
const PROPERTY_NAME = '^[A-Za-z0-9_]+$';

/** The deal's own fields, shared by create (dealname required there) and update. */
const dealFields = {
  amount: Type.Number({
    minimum: 0,
    description: 'Deal amount in the portal currency, e.g. 125000 (sent to HubSpot as text).',
  }),
  dealstage: Type.String({
    minLength: 1,
    description:
      'Stage id in the deal pipeline. The default "Sales Pipeline" stages are appointmentscheduled, qualifiedtobuy, presentationscheduled, decisionmakerboughtin, contractsent, closedwon, closedlost; custom pipelines have their own stage ids.',
  }),
  pipeline: Type.String({
    minLength: 1,
    description:
      'Pipeline id; "default" is the portal\'s Sales Pipeline. Omitted on create: HubSpot uses the default pipeline.',
  }),
  closedate: Type.String({
    pattern: DATE_PATTERN,
    description:
      'Expected close date as YYYY-MM-DD (a real calendar date), e.g. "2025-06-30"; stored as midnight UTC.',
  }),
  crm_priority: stringEnum(
    PRIORITIES,
    "Deal priority: HIGH, MEDIUM or LOW (sent as HubSpot's hs_priority high/medium/low).",
  ),
  good_deal: Type.Boolean({
    description:
      'Marks the deal as a good deal: sent as the custom boolean deal property good_deal ("true"/"false"). The portal must define that property (internal name good_deal, type single checkbox), otherwise HubSpot refuses the call.',
  }),
  dealtype: stringEnum(['newbusiness', 'existingbusiness'], 'Deal type: newbusiness or existingbusiness.'),
  description: Type.String({ description: 'Free-text description of the deal.' }),
  hubspot_owner_id: Type.String({
    pattern: RECORD_ID_PATTERN,
    description: 'Id of the HubSpot owner (user) to assign, e.g. "81000101".',
  }),
};

function mappedProperties(input: {
  closedate?: string;
  crm_priority?: (typeof PRIORITIES)[number];
  good_deal?: boolean;
}): Record<string, string> {
  const out: Record<string, string> = {};
  if (input.closedate !== undefined) out.closedate = closeDateValue(input.closedate);
  if (input.crm_priority !== undefined) out.hs_priority = priorityValue(input.crm_priority);
  if (input.good_deal !== undefined) out.good_deal = String(input.good_deal);
  return out;
}

/** extra_properties/props must not say again what a named field says. */
function repeats(field: string, extra: Record<string, unknown> | undefined, given: object): FieldError[] {
  const named = new Set<string>([...PLAIN_FIELDS, ...MAPPED_FIELDS]);
  const errors: FieldError[] = [];
  for (const key of Object.keys(extra ?? {})) {
    if (key === 'hs_priority' || key === 'crm_priority') {
      errors.push({
        path: `/${field}/${key}`,
        message:
          'use the crm_priority field (HIGH/MEDIUM/LOW) for the priority (rule: the priority is set through crm_priority).',
      });
    } else if (named.has(key) && key in given) {
      errors.push({
        path: `/${field}/${key}`,
        message: `repeats the field "${key}" (rule: give each property once, either as a field or in ${field}).`,
      });
    } else if (key === 'closedate') {
      errors.push({
        path: `/${field}/${key}`,
        message:
          'use the closedate field (YYYY-MM-DD) for the close date (rule: closedate is validated as a calendar date).',
      });
    }
  }
  return errors;
}

const createInput = Type.Object(
  {
    dealname: Type.String({ minLength: 1, description: 'Deal name, e.g. "Astronomical tables engine".' }),
    amount: Type.Optional(dealFields.amount),
    dealstage: Type.Optional(dealFields.dealstage),
    pipeline: Type.Optional(dealFields.pipeline),
    closedate: Type.Optional(dealFields.closedate),
    crm_priority: Type.Optional(dealFields.crm_priority),
    good_deal: Type.Optional(dealFields.good_deal),
    dealtype: Type.Optional(dealFields.dealtype),
    description: Type.Optional(dealFields.description),
    hubspot_owner_id: Type.Optional(dealFields.hubspot_owner_id),
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
      Type.Record(Type.String({ pattern: PROPERTY_NAME }), propertyValueSchema, {
        description:
          'Any other deal properties by HubSpot internal name (including custom ones), e.g. {"hs_next_step": "Send contract"}. Must not repeat a field given above.',
      }),
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
  good_deal: true,
  company_ids: ['100002'],
};

export const crmDealCreate = defineTool({
  name: 'crm_deal_create',
  provider: 'hubspot',
  description: `Creates a deal in the HubSpot CRM, optionally linked to companies and contacts, and returns the created record (id, properties, createdAt). Use it to record a new sales opportunity. Rules: dealname is required; closedate is a real calendar date YYYY-MM-DD; crm_priority is HIGH, MEDIUM or LOW (HubSpot's hs_priority); good_deal is a boolean sent as the custom deal property good_deal; amount ≥ 0. Example: ${JSON.stringify(createExample)}`,
  input: createInput,
  annotations: CREATE,
  check(input: Static<typeof createInput>) {
    return [
      ...checkCalendarDate('/closedate', input.closedate),
      ...repeats('extra_properties', input.extra_properties, input),
    ];
  },
  async run(input, { client }) {
    const extra = input.extra_properties ?? {};
    const properties = {
      ...pickProperties(extra, Object.keys(extra)),
      ...pickProperties(input, PLAIN_FIELDS),
      ...mappedProperties(input),
    };
    return createRecord(client, 'deals', properties, [
      ...associations(input.company_ids, DEAL_TO_COMPANY),
      ...associations(input.contact_ids, DEAL_TO_CONTACT),
    ]);
  },
});

const updateInput = Type.Object(
  {
    deal_id: recordId('HubSpot record id of the deal (digits), e.g. "100024".'),
    dealname: Type.Optional(Type.String({ minLength: 1, description: 'New deal name.' })),
    amount: Type.Optional(dealFields.amount),
    dealstage: Type.Optional(dealFields.dealstage),
    pipeline: Type.Optional(dealFields.pipeline),
    closedate: Type.Optional(dealFields.closedate),
    crm_priority: Type.Optional(dealFields.crm_priority),
    good_deal: Type.Optional(dealFields.good_deal),
    dealtype: Type.Optional(dealFields.dealtype),
    description: Type.Optional(dealFields.description),
    hubspot_owner_id: Type.Optional(dealFields.hubspot_owner_id),
    props: Type.Optional(
      Type.Record(Type.String({ pattern: PROPERTY_NAME }), propertyValueSchema, {
        description:
          'Any other deal properties to change, by HubSpot internal name (custom ones too); "" or null clears one. Must not repeat a field given above.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const crmDealUpdate = defineTool({
  name: 'crm_deal_update',
  provider: 'hubspot',
  description: `Changes properties of an existing HubSpot deal and returns the updated record; only the fields given change. Use it to move a deal to another stage, change its amount, close date or priority. Rules: give at least one change besides deal_id; closedate is a real calendar date YYYY-MM-DD; crm_priority is HIGH, MEDIUM or LOW (HubSpot's hs_priority); good_deal is a boolean sent as the custom property good_deal; other properties go in props. Example: ${JSON.stringify({ deal_id: '100024', dealstage: 'closedwon', closedate: '2025-07-01', crm_priority: 'LOW' })}`,
  input: updateInput,
  annotations: UPDATE,
  check(input: Static<typeof updateInput>) {
    const errors = [
      ...checkCalendarDate('/closedate', input.closedate),
      ...repeats('props', input.props, input),
    ];
    const changes = Object.keys(input).filter((k) => k !== 'deal_id' && k !== 'props');
    if (changes.length === 0 && Object.keys(input.props ?? {}).length === 0) {
      errors.push({
        path: '/',
        message:
          'Nothing to change: give at least one deal field (dealname, amount, dealstage, closedate, crm_priority, good_deal, …) or props (rule: an update changes at least one property).',
      });
    }
    return errors;
  },
  async run(input, { client }) {
    const props: Record<string, string> = {};
    for (const [key, value] of Object.entries(input.props ?? {})) {
      props[key] = propertyText(value);
    }
    const properties = { ...props, ...pickProperties(input, PLAIN_FIELDS), ...mappedProperties(input) };
    return updateRecord(client, 'deals', input.deal_id, properties);
  },
});
