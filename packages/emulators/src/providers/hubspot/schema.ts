/**
 * The CRM object types the emulator serves and their property definitions, modelled on a fresh
 * HubSpot portal: internal names, types and enumeration values are HubSpot's own.
 */

export type ObjectTypeName = 'companies' | 'contacts' | 'deals';

export const OBJECT_TYPES: ObjectTypeName[] = ['companies', 'contacts', 'deals'];

/** HubSpot's object type ids, accepted wherever an object type name is. */
const OBJECT_TYPE_IDS: Record<string, ObjectTypeName> = {
  '0-1': 'contacts',
  '0-2': 'companies',
  '0-3': 'deals',
};

/** Singular spellings HubSpot also accepts in paths (`/crm/v3/objects/contact`). */
const OBJECT_TYPE_ALIASES: Record<string, ObjectTypeName> = {
  contact: 'contacts',
  company: 'companies',
  deal: 'deals',
};

export function resolveObjectType(segment: string): ObjectTypeName | undefined {
  const lower = segment.toLowerCase();
  if ((OBJECT_TYPES as string[]).includes(lower)) return lower as ObjectTypeName;
  return OBJECT_TYPE_IDS[lower] ?? OBJECT_TYPE_ALIASES[lower];
}

export const SINGULAR: Record<ObjectTypeName, string> = {
  companies: 'company',
  contacts: 'contact',
  deals: 'deal',
};

export type PropertyType =
  | 'string'
  | 'number'
  | 'date'
  | 'datetime'
  | 'enumeration'
  | 'bool'
  | 'phone_number';

export interface PropertyOption {
  label: string;
  value: string;
}

export interface PropertyDefinition {
  name: string;
  label: string;
  type: PropertyType;
  fieldType: string;
  groupName: string;
  description?: string;
  options?: PropertyOption[];
  /** Maintained by HubSpot; a write is refused. */
  readOnly?: boolean;
  /** Created by the portal, not by HubSpot. */
  custom?: boolean;
  hasUniqueValue?: boolean;
  /** Enumeration whose values are the portal's owners (validated against them, not a fixed list). */
  ownerReference?: boolean;
}

function text(name: string, label: string, groupName: string, fieldType = 'text'): PropertyDefinition {
  return { name, label, type: 'string', fieldType, groupName };
}

function number(name: string, label: string, groupName: string): PropertyDefinition {
  return { name, label, type: 'number', fieldType: 'number', groupName };
}

function options(values: Array<[value: string, label: string]>): PropertyOption[] {
  return values.map(([value, label]) => ({ value, label }));
}

function enumeration(
  name: string,
  label: string,
  groupName: string,
  values: Array<[string, string]>,
  fieldType = 'select',
): PropertyDefinition {
  return { name, label, type: 'enumeration', fieldType, groupName, options: options(values) };
}

function datetime(name: string, label: string, groupName: string, readOnly = false): PropertyDefinition {
  return { name, label, type: 'datetime', fieldType: 'date', groupName, readOnly };
}

const LIFECYCLE_STAGES: Array<[string, string]> = [
  ['subscriber', 'Subscriber'],
  ['lead', 'Lead'],
  ['marketingqualifiedlead', 'Marketing Qualified Lead'],
  ['salesqualifiedlead', 'Sales Qualified Lead'],
  ['opportunity', 'Opportunity'],
  ['customer', 'Customer'],
  ['evangelist', 'Evangelist'],
  ['other', 'Other'],
];

export const LEAD_STATUSES: Array<[string, string]> = [
  ['NEW', 'New'],
  ['OPEN', 'Open'],
  ['IN_PROGRESS', 'In Progress'],
  ['OPEN_DEAL', 'Open Deal'],
  ['UNQUALIFIED', 'Unqualified'],
  ['ATTEMPTED_TO_CONTACT', 'Attempted to Contact'],
  ['CONNECTED', 'Connected'],
  ['BAD_TIMING', 'Bad Timing'],
];

/** Stages of the portal's default sales pipeline ("Sales Pipeline", id `default`). */
export const DEAL_STAGES: Array<[string, string]> = [
  ['appointmentscheduled', 'Appointment Scheduled'],
  ['qualifiedtobuy', 'Qualified To Buy'],
  ['presentationscheduled', 'Presentation Scheduled'],
  ['decisionmakerboughtin', 'Decision Maker Bought-In'],
  ['contractsent', 'Contract Sent'],
  ['closedwon', 'Closed Won'],
  ['closedlost', 'Closed Lost'],
];

const INDUSTRIES: Array<[string, string]> = [
  ['ACCOUNTING', 'Accounting'],
  ['AIRLINES_AVIATION', 'Airlines/Aviation'],
  ['BIOTECHNOLOGY', 'Biotechnology'],
  ['COMPUTER_HARDWARE', 'Computer Hardware'],
  ['COMPUTER_SOFTWARE', 'Computer Software'],
  ['DEFENSE_SPACE', 'Defense & Space'],
  ['EDUCATION_MANAGEMENT', 'Education Management'],
  ['FINANCIAL_SERVICES', 'Financial Services'],
  ['HIGHER_EDUCATION', 'Higher Education'],
  ['INFORMATION_TECHNOLOGY_AND_SERVICES', 'Information Technology and Services'],
  ['MACHINERY', 'Machinery'],
  ['RESEARCH', 'Research'],
  ['TELECOMMUNICATIONS', 'Telecommunications'],
  ['TEXTILES', 'Textiles'],
];

const OWNER: PropertyDefinition = {
  name: 'hubspot_owner_id',
  label: 'Owner',
  type: 'enumeration',
  fieldType: 'select',
  groupName: 'sales_properties',
  ownerReference: true,
};

const OBJECT_ID: PropertyDefinition = {
  name: 'hs_object_id',
  label: 'Record ID',
  type: 'number',
  fieldType: 'number',
  groupName: 'system',
  readOnly: true,
  hasUniqueValue: true,
};

const CONTACT_PROPERTIES: PropertyDefinition[] = [
  text('firstname', 'First Name', 'contactinformation'),
  text('lastname', 'Last Name', 'contactinformation'),
  { ...text('email', 'Email', 'contactinformation'), hasUniqueValue: true },
  { ...text('phone', 'Phone Number', 'contactinformation', 'phonenumber'), type: 'phone_number' },
  {
    ...text('mobilephone', 'Mobile Phone Number', 'contactinformation', 'phonenumber'),
    type: 'phone_number',
  },
  text('company', 'Company Name', 'contactinformation'),
  text('jobtitle', 'Job Title', 'contactinformation'),
  text('website', 'Website URL', 'contactinformation'),
  text('address', 'Street Address', 'contactinformation'),
  text('city', 'City', 'contactinformation'),
  text('state', 'State/Region', 'contactinformation'),
  text('zip', 'Postal Code', 'contactinformation'),
  text('country', 'Country/Region', 'contactinformation'),
  enumeration('lifecyclestage', 'Lifecycle Stage', 'contactinformation', LIFECYCLE_STAGES, 'radio'),
  enumeration('hs_lead_status', 'Lead Status', 'sales_properties', LEAD_STATUSES, 'radio'),
  OWNER,
  text('notes_last_contacted', 'Last Contacted', 'sales_properties'),
  datetime('createdate', 'Create Date', 'contactinformation'),
  datetime('lastmodifieddate', 'Last Modified Date', 'contactinformation', true),
  OBJECT_ID,
];

const COMPANY_PROPERTIES: PropertyDefinition[] = [
  text('name', 'Company name', 'companyinformation'),
  text('domain', 'Company Domain Name', 'companyinformation'),
  text('website', 'Website URL', 'companyinformation'),
  enumeration('industry', 'Industry', 'companyinformation', INDUSTRIES),
  { ...text('phone', 'Phone Number', 'companyinformation', 'phonenumber'), type: 'phone_number' },
  text('address', 'Street Address', 'companyinformation'),
  text('city', 'City', 'companyinformation'),
  text('state', 'State/Region', 'companyinformation'),
  text('zip', 'Postal Code', 'companyinformation'),
  text('country', 'Country/Region', 'companyinformation'),
  number('numberofemployees', 'Number of Employees', 'companyinformation'),
  number('annualrevenue', 'Annual Revenue', 'companyinformation'),
  text('description', 'Description', 'companyinformation', 'textarea'),
  enumeration('lifecyclestage', 'Lifecycle Stage', 'companyinformation', LIFECYCLE_STAGES, 'radio'),
  OWNER,
  datetime('createdate', 'Create Date', 'companyinformation'),
  datetime('hs_lastmodifieddate', 'Last Modified Date', 'companyinformation', true),
  OBJECT_ID,
];

const DEAL_PROPERTIES: PropertyDefinition[] = [
  text('dealname', 'Deal Name', 'dealinformation'),
  number('amount', 'Amount', 'dealinformation'),
  enumeration('dealstage', 'Deal Stage', 'dealinformation', DEAL_STAGES, 'radio'),
  enumeration('pipeline', 'Pipeline', 'dealinformation', [['default', 'Sales Pipeline']]),
  datetime('closedate', 'Close Date', 'dealinformation'),
  enumeration('dealtype', 'Deal Type', 'dealinformation', [
    ['newbusiness', 'New Business'],
    ['existingbusiness', 'Existing Business'],
  ]),
  enumeration('hs_priority', 'Priority', 'dealinformation', [
    ['low', 'Low'],
    ['medium', 'Medium'],
    ['high', 'High'],
  ]),
  text('description', 'Deal Description', 'dealinformation', 'textarea'),
  OWNER,
  {
    name: 'good_deal',
    label: 'Good deal',
    type: 'bool',
    fieldType: 'booleancheckbox',
    groupName: 'dealinformation',
    options: options([
      ['true', 'Yes'],
      ['false', 'No'],
    ]),
    custom: true,
  },
  datetime('createdate', 'Create Date', 'dealinformation'),
  datetime('hs_lastmodifieddate', 'Last Modified Date', 'dealinformation', true),
  OBJECT_ID,
];

export const PROPERTY_DEFINITIONS: Record<ObjectTypeName, PropertyDefinition[]> = {
  contacts: CONTACT_PROPERTIES,
  companies: COMPANY_PROPERTIES,
  deals: DEAL_PROPERTIES,
};

const DEFINITION_INDEX: Record<ObjectTypeName, Map<string, PropertyDefinition>> = {
  contacts: new Map(CONTACT_PROPERTIES.map((p) => [p.name, p])),
  companies: new Map(COMPANY_PROPERTIES.map((p) => [p.name, p])),
  deals: new Map(DEAL_PROPERTIES.map((p) => [p.name, p])),
};

export function propertyDefinition(type: ObjectTypeName, name: string): PropertyDefinition | undefined {
  return DEFINITION_INDEX[type].get(name);
}

/** The last-modified property differs: contacts keep the legacy name. */
export const LAST_MODIFIED_PROPERTY: Record<ObjectTypeName, string> = {
  contacts: 'lastmodifieddate',
  companies: 'hs_lastmodifieddate',
  deals: 'hs_lastmodifieddate',
};

/** What HubSpot returns when the request names no properties. */
export const DEFAULT_PROPERTIES: Record<ObjectTypeName, string[]> = {
  contacts: ['createdate', 'email', 'firstname', 'hs_object_id', 'lastmodifieddate', 'lastname'],
  companies: ['createdate', 'domain', 'hs_lastmodifieddate', 'hs_object_id', 'name'],
  deals: [
    'amount',
    'closedate',
    'createdate',
    'dealname',
    'dealstage',
    'hs_lastmodifieddate',
    'hs_object_id',
    'pipeline',
  ],
};

/** Properties the search `query` parameter looks in (HubSpot's "default searchable properties"). */
export const SEARCHABLE_PROPERTIES: Record<ObjectTypeName, string[]> = {
  contacts: ['firstname', 'lastname', 'email', 'phone', 'mobilephone', 'company', 'hs_object_id'],
  companies: ['name', 'domain', 'website', 'phone', 'hs_object_id'],
  deals: ['dealname', 'pipeline', 'dealstage', 'description', 'dealtype', 'hs_object_id'],
};

/** Scopes HubSpot requires per object type; any one of the listed read scopes grants reading. */
export const REQUIRED_SCOPES: Record<ObjectTypeName, { read: string[]; write: string[] }> = {
  contacts: { read: ['crm.objects.contacts.read'], write: ['crm.objects.contacts.write'] },
  companies: { read: ['crm.objects.companies.read'], write: ['crm.objects.companies.write'] },
  deals: { read: ['crm.objects.deals.read'], write: ['crm.objects.deals.write'] },
};
