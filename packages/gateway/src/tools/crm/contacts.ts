import { type TOptional, Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import {
  associations,
  createRecord,
  getRecord,
  listRecords,
  pickProperties,
  updateRecord,
} from './records.js';
import {
  CREATE,
  LEAD_STATUSES,
  leadStatusSchema,
  limitParam,
  propertiesParam,
  propertyMap,
  READ_ONLY,
  RECORD_ID_PATTERN,
  recordId,
  splitProperties,
  stringEnum,
  UPDATE,
} from './shared.js';

const CONTACT_DEFAULTS = 'firstname, lastname, email, createdate, lastmodifieddate, hs_object_id';

const EMAIL_PATTERN = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$';

function text(description: string) {
  return Type.String({ minLength: 1, description });
}

/** Contact fields taken under their own names by create, and beside props by update. */
const contactFields = {
  email: Type.String({
    pattern: EMAIL_PATTERN,
    description: 'Email address, the contact\'s unique identifier at HubSpot, e.g. "ada@example.com".',
  }),
  company: text('Company name as free text (to link a company record use company_ids).'),
  firstname: text('First name.'),
  lastname: text('Last name.'),
  jobtitle: text('Job title.'),
  lifecyclestage: text(
    'Lifecycle stage option value: subscriber, lead, marketingqualifiedlead, salesqualifiedlead, opportunity, customer, evangelist, other (or a custom stage id of the portal).',
  ),
  phone: text('Phone number.'),
  website: text('Website URL.'),
  crm_lead_status: leadStatusSchema,
  mobilephone: text('Mobile phone number.'),
  address: text('Street address.'),
  city: text('City.'),
  state: text('State or region.'),
  zip: text('Postal code.'),
  country: text('Country or region.'),
  hubspot_owner_id: Type.String({
    pattern: RECORD_ID_PATTERN,
    description: 'Id of the HubSpot owner (user) to assign, e.g. "81000101".',
  }),
};
const CONTACT_FIELDS = Object.keys(contactFields) as Array<keyof typeof contactFields>;

type OptionalContactFields = { [K in keyof typeof contactFields]: TOptional<(typeof contactFields)[K]> };

/** Every contact field, optional. */
function optionalFields(): OptionalContactFields {
  return Object.fromEntries(
    Object.entries(contactFields).map(([name, schema]) => [name, Type.Optional(schema)]),
  ) as OptionalContactFields;
}

/** HubSpot's contact→company association (primary company). */
const CONTACT_TO_COMPANY = 279;

/** The spec's crm_lead_status is HubSpot's hs_lead_status: one property under two names. */
function hubspotName(name: string): string {
  return name === 'crm_lead_status' ? 'hs_lead_status' : name;
}

/** The given `names` of `values` as HubSpot properties: text, under HubSpot's names. */
function contactProperties(
  values: Record<string, unknown>,
  names: readonly string[] = Object.keys(values),
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(pickProperties(values, names)).map(([name, value]) => [hubspotName(name), value]),
  );
}

const createExample = {
  email: 'grace.hopper@example.com',
  firstname: 'Grace',
  lastname: 'Hopper',
  company: 'Remington Rand',
  jobtitle: 'Rear Admiral',
  crm_lead_status: 'NEW',
};

const LEAD_STATUS_RULE = `rule: the lead status (crm_lead_status, HubSpot's hs_lead_status) is one of ${LEAD_STATUSES.join(', ')}`;

function extraRepeats(extra: Record<string, unknown> | undefined, given: object): FieldError[] {
  return Object.keys(extra ?? {})
    .filter((k) => k in given || k === 'hs_lead_status' || k === 'crm_lead_status')
    .map((k) => ({
      path: `/extra_properties/${k}`,
      message:
        k === 'hs_lead_status' || k === 'crm_lead_status'
          ? 'use the crm_lead_status field for the lead status (rule: give each property once, lead status through crm_lead_status).'
          : `repeats the field "${k}" (rule: give each property once, either as a field or in extra_properties).`,
    }));
}

export const crmContactCreate = defineTool({
  name: 'crm_contact_create',
  provider: 'hubspot',
  description: `Creates a contact in the HubSpot CRM and returns the created record (id, properties, createdAt). Use it for a person who is not in the CRM yet; HubSpot refuses a second contact with the same email (409 conflict, naming the existing id: update that one with crm_contact_update instead). Rules: email is required (the contact's unique identifier) and must look like an address; crm_lead_status (sent as hs_lead_status) is one of ${LEAD_STATUSES.join(', ')}; company_ids links the contact to existing companies. Example: ${JSON.stringify(createExample)}`,
  input: Type.Object(
    {
      ...optionalFields(),
      email: contactFields.email,
      company_ids: Type.Optional(
        Type.Array(recordId('Company record id.'), {
          maxItems: 10,
          uniqueItems: true,
          description: 'Ids of existing companies to associate the contact with (at most 10).',
        }),
      ),
      extra_properties: Type.Optional(
        propertyMap(
          'Any other contact properties by HubSpot internal name (including custom ones), e.g. {"hs_language": "en"}. Must not repeat a field given above.',
        ),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: CREATE,
  check: (input) => extraRepeats(input.extra_properties, input),
  async run(input, { client }) {
    const properties = {
      ...contactProperties(input.extra_properties ?? {}),
      ...contactProperties(input, CONTACT_FIELDS),
    };
    return createRecord(client, 'contacts', properties, associations(input.company_ids, CONTACT_TO_COMPANY));
  },
});

export const crmContactGet = defineTool({
  name: 'crm_contact_get',
  provider: 'hubspot',
  description: `Reads one HubSpot contact by record id (or by email with id_property "email") and returns its properties (HubSpot's defaults, or those named in properties) and, when asked, associated company and deal ids. Use it when you know the contact's id or email; to find contacts otherwise use crm_contacts_search. Rules: contact_id is the numeric record id unless id_property is "email". Example: ${JSON.stringify({ contact_id: '100009', properties: 'firstname,lastname,email,hs_lead_status' })}`,
  input: Type.Object(
    {
      contact_id: Type.String({
        minLength: 1,
        description:
          'The contact: its HubSpot record id (digits, e.g. "100009"), or its email when id_property is "email".',
      }),
      properties: Type.Optional(propertiesParam(CONTACT_DEFAULTS)),
      id_property: Type.Optional(
        stringEnum(
          ['hs_object_id', 'email'],
          'What contact_id is: "hs_object_id" (record id, default) or "email".',
        ),
      ),
      associations: Type.Optional(
        Type.String({
          pattern: '^\\s*(companies|deals)(\\s*,\\s*(companies|deals))?\\s*$',
          description:
            'Associated object types whose ids to include, comma-separated: "companies", "deals" or "companies,deals".',
        }),
      ),
      archived: Type.Optional(
        Type.Boolean({ description: 'true to read an archived (deleted) contact. Default false.' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: READ_ONLY,
  check(input) {
    if (input.id_property === 'email') {
      return new RegExp(EMAIL_PATTERN).test(input.contact_id)
        ? []
        : [
            {
              path: '/contact_id',
              message: `"${input.contact_id}" is not an email address (rule: with id_property "email", contact_id is the contact's email).`,
            },
          ];
    }
    return new RegExp(RECORD_ID_PATTERN).test(input.contact_id)
      ? []
      : [
          {
            path: '/contact_id',
            message: `"${input.contact_id}" is not a record id (rule: contact_id is the numeric HubSpot record id, e.g. "100009"; to look up by email set id_property to "email").`,
          },
        ];
  },
  run: (input, { client }) =>
    getRecord(client, 'contacts', input.contact_id, {
      idProperty: input.id_property === 'email' ? 'email' : undefined,
      properties: splitProperties(input.properties)?.join(','),
      associations: splitProperties(input.associations)?.join(','),
      archived: input.archived,
    }),
});

const NOTHING_TO_CHANGE =
  'Nothing to change (rule: props is optional, but a call must change something: the properties to change are given inside props, e.g. {"props": {"jobtitle": "CTO"}}).';

export const crmContactUpdate = defineTool({
  name: 'crm_contact_update',
  provider: 'hubspot',
  description: `Changes properties of an existing HubSpot contact and returns the updated record; only the properties given change, "" or null clears one. Use it to correct details or move a contact along (e.g. set the lead status). Rules: the properties to change go inside props, by HubSpot internal name (a call that changes nothing is refused); contact fields such as email or jobtitle given beside props are merged into it, each property once; the lead status is crm_lead_status (sent as hs_lead_status) or hs_lead_status, one of ${LEAD_STATUSES.join(', ')}; email must look like an address. Example: ${JSON.stringify({ contact_id: '100009', props: { crm_lead_status: 'IN_PROGRESS', jobtitle: 'Chief Engineer' } })}`,
  input: Type.Object(
    {
      contact_id: recordId('HubSpot record id of the contact (digits), e.g. "100009".'),
      props: Type.Optional(
        propertyMap(
          'The properties to change, by HubSpot internal name, e.g. {"jobtitle": "CTO", "crm_lead_status": "CONNECTED"}; "" or null clears one. crm_lead_status is accepted as the name of hs_lead_status. Contact fields given beside props are merged into it.',
        ),
      ),
      // The reading of the specification: fields beside props are a convenience, merged into it.
      ...optionalFields(),
    },
    { additionalProperties: false },
  ),
  annotations: UPDATE,
  check(input) {
    const errors: FieldError[] = [];
    const props = input.props ?? {};
    const given = new Set(CONTACT_FIELDS.filter((k) => input[k] !== undefined).map(hubspotName));
    for (const key of Object.keys(props)) {
      const name = hubspotName(key);
      if (given.has(name)) {
        errors.push({
          path: `/props/${key}`,
          message:
            name === 'hs_lead_status'
              ? 'Give the lead status once (rule: crm_lead_status and hs_lead_status are the same property).'
              : `repeats the field "${key}" given beside props (rule: give each property once, inside props or beside it).`,
        });
      }
      given.add(name);
    }
    if (given.size === 0) errors.push({ path: '/props', message: NOTHING_TO_CHANGE });
    for (const key of ['crm_lead_status', 'hs_lead_status'] as const) {
      if (!(key in props)) continue;
      const value = props[key];
      if (value === null || value === '') continue;
      if (typeof value !== 'string' || !(LEAD_STATUSES as readonly string[]).includes(value)) {
        errors.push({
          path: `/props/${key}`,
          message: `${JSON.stringify(value)} is not allowed (${LEAD_STATUS_RULE}).`,
        });
      }
    }
    if (
      typeof props.email === 'string' &&
      props.email !== '' &&
      !new RegExp(EMAIL_PATTERN).test(props.email)
    ) {
      errors.push({
        path: '/props/email',
        message: `"${props.email}" is not an email address (rule: email must look like name@example.com).`,
      });
    }
    return errors;
  },
  async run(input, { client }) {
    const properties = {
      ...contactProperties(input, CONTACT_FIELDS),
      ...contactProperties(input.props ?? {}),
    };
    return updateRecord(client, 'contacts', input.contact_id, properties);
  },
});

export const crmContactsList = defineTool({
  name: 'crm_contacts_list',
  provider: 'hubspot',
  description: `Lists HubSpot contacts page by page in record-id order, with the requested properties, and says how to get the next page (next_page: pass it back as is). Use it to walk through all contacts (or archived ones); to find specific contacts use crm_contacts_search. Rules: limit is 1–100 (default 10, a fraction is rounded down); after is the cursor of the next set, from next_page; archived true lists deleted contacts instead. Example: ${JSON.stringify({ limit: 50, properties: 'firstname,lastname,email,hs_lead_status' })}`,
  input: Type.Object(
    {
      after: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'Paging cursor: next_page.after of the previous result. Omit for the first page.',
        }),
      ),
      archived: Type.Optional(
        Type.Boolean({
          description: 'true to list archived (deleted) contacts instead of active ones. Default false.',
        }),
      ),
      limit: Type.Optional(limitParam('Contacts')),
      properties: Type.Optional(propertiesParam(CONTACT_DEFAULTS)),
    },
    { additionalProperties: false },
  ),
  annotations: READ_ONLY,
  run: (input, { client }) => listRecords(client, 'contacts', input),
});
