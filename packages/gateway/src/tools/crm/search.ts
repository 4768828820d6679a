import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { parseFilterGroups } from './filters.js';
import { type SearchInput, SORT_PATTERN, searchRecords } from './records.js';
import { type CrmObjectType, limitParam, propertiesParam, READ_ONLY } from './shared.js';

interface SearchSpec {
  name: string;
  type: CrmObjectType;
  noun: string;
  /** What the free-text query looks in (HubSpot's default searchable properties). */
  searchable: string;
  defaults: string;
  example: Record<string, unknown>;
}

function searchTool(spec: SearchSpec) {
  const input = Type.Object(
    {
      query: Type.Optional(
        Type.String({
          minLength: 1,
          description: `Free text: every word must prefix-match ${spec.searchable}. Combine with filterGroups to narrow further.`,
        }),
      ),
      filterGroups: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            'HubSpot filter groups as JSON TEXT (a string holding a JSON array): [{"filters":[{"propertyName":"…","operator":"EQ","value":"…"}]}]. Groups are ORed, filters inside a group are ANDed; at most 5 groups, 6 filters per group, 18 filters in all. Operators: EQ, NEQ, LT, LTE, GT, GTE, BETWEEN (value + highValue), IN / NOT_IN (values array), HAS_PROPERTY, NOT_HAS_PROPERTY, CONTAINS_TOKEN, NOT_CONTAINS_TOKEN (value may use * wildcards). Dates compare as epoch milliseconds or ISO dates.',
        }),
      ),
      properties: Type.Optional(propertiesParam(spec.defaults)),
      limit: Type.Optional(limitParam('Results')),
      after: Type.Optional(
        Type.String({
          pattern: '^[0-9]+$',
          description:
            'Paging offset: pass next_page.after of the previous result (an integer as text, e.g. "10") to get the next page.',
        }),
      ),
      sort: Type.Optional(
        Type.String({
          pattern: SORT_PATTERN,
          description:
            'One property to sort by, ascending; prefix with "-" for descending (e.g. "-createdate"). Omitted: HubSpot\'s relevance order.',
        }),
      ),
    },
    { additionalProperties: false },
  );
  return defineTool({
    name: spec.name,
    provider: 'hubspot',
    description: `Searches the HubSpot CRM ${spec.noun} by free text and/or property filters and returns the matching records with the requested properties, plus the total and how to get the next page (next_page: pass it back as is). Use it to find ${spec.noun} when you do not know their ids; to read one record by id use the matching get tool. Rules: filterGroups must be valid JSON text of an array of filter groups (at most 5 groups, 6 filters each, 18 in all); limit is 1–100 (a fraction is rounded down); after is the offset into the results, from next_page. Example: ${JSON.stringify(spec.example)}`,
    input,
    annotations: READ_ONLY,
    check(value): FieldError[] {
      if (value.filterGroups === undefined) return [];
      const parsed = parseFilterGroups(value.filterGroups);
      return parsed.ok ? [] : [{ path: '/filterGroups', message: parsed.message }];
    },
    run: (value, { client }) => searchRecords(client, spec.type, value as SearchInput),
  });
}

export const crmCompaniesSearch = searchTool({
  name: 'crm_companies_search',
  type: 'companies',
  noun: 'companies',
  searchable: 'the company name, domain, website or phone',
  defaults: 'name, domain, createdate, hs_lastmodifieddate, hs_object_id',
  example: {
    query: 'engineering',
    filterGroups: '[{"filters":[{"propertyName":"country","operator":"EQ","value":"United Kingdom"}]}]',
    properties: 'name,domain,industry,numberofemployees',
    limit: 20,
  },
});

export const crmContactsSearch = searchTool({
  name: 'crm_contacts_search',
  type: 'contacts',
  noun: 'contacts',
  searchable: 'the first name, last name, email, phone or company name',
  defaults: 'firstname, lastname, email, createdate, lastmodifieddate, hs_object_id',
  example: {
    query: 'hopper',
    filterGroups: '[{"filters":[{"propertyName":"hs_lead_status","operator":"EQ","value":"OPEN_DEAL"}]}]',
    properties: 'firstname,lastname,email,hs_lead_status',
    limit: 10,
  },
});

export const crmDealsSearch = searchTool({
  name: 'crm_deals_search',
  type: 'deals',
  noun: 'deals',
  searchable: 'the deal name, pipeline, stage, type or description',
  defaults: 'dealname, amount, dealstage, pipeline, closedate, createdate, hs_lastmodifieddate, hs_object_id',
  example: {
    filterGroups:
      '[{"filters":[{"propertyName":"amount","operator":"GTE","value":"50000"},{"propertyName":"dealstage","operator":"NEQ","value":"closedlost"}]}]',
    properties: 'dealname,amount,dealstage,closedate,hs_priority,good_deal',
    limit: 20,
    after: '20',
  },
});
