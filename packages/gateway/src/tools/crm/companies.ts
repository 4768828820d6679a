import { Type } from '@sinclair/typebox';
import { defineTool } from '../types.js';
import { createRecord, getRecord, pickProperties } from './records.js';
import { CREATE, propertiesParam, propertyMap, READ_ONLY, recordId, splitProperties } from './shared.js';

const COMPANY_FIELDS = [
  'name',
  'domain',
  'website',
  'industry',
  'phone',
  'address',
  'city',
  'state',
  'zip',
  'country',
  'numberofemployees',
  'annualrevenue',
  'description',
  'lifecyclestage',
  'hubspot_owner_id',
] as const;

const createExample = {
  name: 'Analytical Engines Ltd',
  domain: 'analytical-engines.example',
  industry: 'COMPUTER_SOFTWARE',
  city: 'London',
  country: 'United Kingdom',
  numberofemployees: 42,
  annualrevenue: 1250000,
};

export const crmCompanyCreate = defineTool({
  name: 'crm_company_create',
  provider: 'hubspot',
  description: `Creates a company in the HubSpot CRM and returns the created record (id, properties, createdAt). Use it when the company does not exist yet (search with crm_companies_search first to avoid duplicates: HubSpot does not deduplicate companies created through the API). Rules: name is required; numberofemployees and annualrevenue are numbers ≥ 0; other HubSpot properties (including custom ones) go in extra_properties by internal name. Example: ${JSON.stringify(createExample)}`,
  input: Type.Object(
    {
      name: Type.String({ minLength: 1, description: 'Company name (HubSpot property name).' }),
      annualrevenue: Type.Optional(
        Type.Number({ minimum: 0, description: 'Annual revenue in the portal currency.' }),
      ),
      city: Type.Optional(Type.String({ minLength: 1, description: 'City.' })),
      country: Type.Optional(Type.String({ minLength: 1, description: 'Country or region.' })),
      state: Type.Optional(Type.String({ minLength: 1, description: 'State or region.' })),
      description: Type.Optional(Type.String({ description: 'Free-text description of the company.' })),
      domain: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'Primary web domain without scheme, e.g. "example.com" (HubSpot property domain).',
        }),
      ),
      industry: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            'HubSpot industry option value in upper snake case, e.g. "COMPUTER_SOFTWARE", "FINANCIAL_SERVICES", "RESEARCH" (the portal refuses values it does not define).',
        }),
      ),
      phone: Type.Optional(Type.String({ minLength: 1, description: 'Main phone number.' })),
      numberofemployees: Type.Optional(
        Type.Number({ minimum: 0, description: 'Number of employees, e.g. 42 (sent to HubSpot as text).' }),
      ),
      website: Type.Optional(Type.String({ minLength: 1, description: 'Website URL.' })),
      address: Type.Optional(Type.String({ minLength: 1, description: 'Street address.' })),
      zip: Type.Optional(Type.String({ minLength: 1, description: 'Postal code.' })),
      lifecyclestage: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            'Lifecycle stage option value: subscriber, lead, marketingqualifiedlead, salesqualifiedlead, opportunity, customer, evangelist, other (or a custom stage id of the portal).',
        }),
      ),
      hubspot_owner_id: Type.Optional(
        Type.String({
          pattern: '^[0-9]+$',
          description: 'Id of the HubSpot owner (user) to assign, e.g. "81000101".',
        }),
      ),
      extra_properties: Type.Optional(
        propertyMap(
          'Any other company properties by HubSpot internal name (including custom properties), e.g. {"about_us": "…"}. Must not repeat a field given above.',
        ),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: CREATE,
  check(input) {
    const repeated = Object.keys(input.extra_properties ?? {}).filter(
      (k) => (COMPANY_FIELDS as readonly string[]).includes(k) && k in input,
    );
    return repeated.map((k) => ({
      path: `/extra_properties/${k}`,
      message: `repeats the field "${k}" (rule: give each property once, either as a field or in extra_properties).`,
    }));
  },
  async run(input, { client }) {
    const properties = {
      ...pickProperties(input.extra_properties ?? {}, Object.keys(input.extra_properties ?? {})),
      ...pickProperties(input, COMPANY_FIELDS),
    };
    return createRecord(client, 'companies', properties);
  },
});

export const crmCompanyGet = defineTool({
  name: 'crm_company_get',
  provider: 'hubspot',
  description: `Reads one HubSpot company by its record id and returns its properties (HubSpot's defaults, or the ones named in properties) and, when asked, the ids of associated contacts and deals. Use it when you know the company id (e.g. from crm_companies_search). Rules: company_id is the numeric record id. Example: ${JSON.stringify({ company_id: '100001', properties: 'name,domain,industry,numberofemployees' })}`,
  input: Type.Object(
    {
      company_id: recordId('HubSpot record id of the company (digits), e.g. "100001".'),
      properties: Type.Optional(
        propertiesParam('name, domain, createdate, hs_lastmodifieddate, hs_object_id'),
      ),
      associations: Type.Optional(
        Type.String({
          pattern: '^\\s*(contacts|deals)(\\s*,\\s*(contacts|deals))?\\s*$',
          description:
            'Associated object types whose ids to include, comma-separated: "contacts", "deals" or "contacts,deals".',
        }),
      ),
      archived: Type.Optional(
        Type.Boolean({ description: 'true to read an archived (deleted) company. Default false.' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: READ_ONLY,
  run: (input, { client }) =>
    getRecord(client, 'companies', input.company_id, {
      properties: splitProperties(input.properties)?.join(','),
      associations: splitProperties(input.associations)?.join(','),
      archived: input.archived,
    }),
});
