import { createHash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import type { Observation, PollResult, TriggerType } from '../definition.js';
import { changesParam, epochOf } from './shared.js';

const OPERATORS = [
  'EQ',
  'NEQ',
  'LT',
  'LTE',
  'GT',
  'GTE',
  'HAS_PROPERTY',
  'NOT_HAS_PROPERTY',
  'CONTAINS_TOKEN',
  'IN',
  'NOT_IN',
] as const;
const propertyName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_]+$' });

const Config = Type.Object(
  {
    filters: Type.Optional(
      Type.Array(
        Type.Object(
          {
            property: propertyName,
            operator: Type.Union(OPERATORS.map((o) => Type.Literal(o))),
            value: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Number()])),
            values: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 100 })),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 5,
          description:
            'Only records that match every filter (HubSpot search filters), e.g. [{"property":"dealstage","operator":"EQ","value":"closedwon"}].',
        },
      ),
    ),
    properties: Type.Optional(
      Type.Array(propertyName, {
        maxItems: 50,
        uniqueItems: true,
        description: 'Properties the event carries (HubSpot’s default ones when left out).',
      }),
    ),
    watch_properties: Type.Optional(
      Type.Array(propertyName, {
        minItems: 1,
        maxItems: 20,
        uniqueItems: true,
        description:
          'Report an update only when one of these properties changed (any change to the record otherwise).',
      }),
    ),
    changes: changesParam(['created', 'updated']),
  },
  { additionalProperties: false },
);
type Config = Static<typeof Config>;

interface CrmRecord {
  id: string;
  properties: Record<string, string | null>;
  createdAt?: string;
  updatedAt?: string;
  archived?: boolean;
}

interface SearchPage {
  results?: CrmRecord[];
  paging?: { next?: { after?: string } };
}

/**
 * HubSpot's search is eventually consistent (a change reaches it within seconds): each poll reads
 * again from this far before the newest modification it saw, and the versions already seen keep
 * the overlap from being reported twice.
 */
const OVERLAP_MS = 60_000;
const PAGE_SIZE = 100;
/** HubSpot stops a search at 10,000 results; a poll reads at most this many and goes on next time. */
const MAX_RESULTS = 10_000;

/** CRM records of one object type created or changed, read with a search on the last-modified date. */
function crmRecords(
  name: string,
  objectType: 'contacts' | 'companies' | 'deals',
  modifiedProperty: string,
): TriggerType<Config> {
  const singular = { contacts: 'contact', companies: 'company', deals: 'deal' }[objectType];
  return {
    name,
    provider: 'hubspot',
    description: `A ${singular} was created or changed (optionally: only ${singular}s matching filters, only changes to some properties). The event carries the CRM record (id, properties, createdAt, updatedAt).`,
    config: Config,
    changes: ['created', 'updated'],
    mechanism: `CRM search on ${modifiedProperty} (POST /crm/v3/objects/${objectType}/search, sorted by it)`,
    async baseline() {
      return { cursor: { modified_after: Date.now() }, observations: [] };
    },
    async poll({ client, config }, cursor) {
      const after = typeof cursor.modified_after === 'number' ? cursor.modified_after : Date.now();
      return search(client, objectType, modifiedProperty, config, after);
    },
    // contact.creation, contact.propertyChange, …: the search then reads what changed.
    webhook: {
      route: 'hubspot',
      concerns: (_config, event) =>
        typeof event.subscriptionType === 'string' && event.subscriptionType.startsWith(`${singular}.`),
    },
  };
}

async function search(
  client: ProviderClient,
  objectType: string,
  modifiedProperty: string,
  config: Config,
  modifiedAfter: number,
): Promise<PollResult> {
  const filters = [
    { propertyName: modifiedProperty, operator: 'GTE', value: String(modifiedAfter - OVERLAP_MS) },
    ...(config.filters ?? []).map((f) => ({
      propertyName: f.property,
      operator: f.operator,
      ...(f.value !== undefined ? { value: String(f.value) } : {}),
      ...(f.values ? { values: f.values } : {}),
    })),
  ];
  const properties = [
    ...new Set([
      ...(config.properties ?? []),
      ...(config.watch_properties ?? []),
      modifiedProperty,
      'createdate',
    ]),
  ];
  const observations: Observation[] = [];
  let newest = modifiedAfter;
  let offset: string | undefined;
  for (let read = 0; read < MAX_RESULTS; read += PAGE_SIZE) {
    const res = await client.request<SearchPage>({
      method: 'POST',
      path: `/crm/v3/objects/${objectType}/search`,
      json: {
        filterGroups: [{ filters }],
        sorts: [{ propertyName: modifiedProperty, direction: 'ASCENDING' }],
        properties,
        limit: PAGE_SIZE,
        ...(offset ? { after: offset } : {}),
      },
    });
    for (const record of res.data.results ?? []) {
      const modified = epochOf(record.properties[modifiedProperty] ?? record.updatedAt) ?? modifiedAfter;
      newest = Math.max(newest, modified);
      observations.push(observe(record, modifiedProperty, config.watch_properties));
    }
    offset = res.data.paging?.next?.after;
    if (!offset) break;
  }
  return { cursor: { modified_after: newest }, observations };
}

function observe(record: CrmRecord, modifiedProperty: string, watched: string[] | undefined): Observation {
  const createdAt = epochOf(record.properties.createdate ?? record.createdAt);
  const version = watched
    ? createHash('sha256')
        .update(JSON.stringify(watched.map((p) => record.properties[p] ?? null)))
        .digest('base64url')
    : (record.properties[modifiedProperty] ?? record.updatedAt ?? '');
  return { id: record.id, version, ...(createdAt === undefined ? {} : { createdAt }), item: { ...record } };
}

export const crmContacts = crmRecords('crm_contacts', 'contacts', 'lastmodifieddate');
export const crmCompanies = crmRecords('crm_companies', 'companies', 'hs_lastmodifieddate');
export const crmDeals = crmRecords('crm_deals', 'deals', 'hs_lastmodifieddate');
