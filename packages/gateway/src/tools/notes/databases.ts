import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { type FieldError, Problem } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { blockList, checkBlocks } from './block-content.js';
import {
  databaseSchema,
  firstDataSourceId,
  isVersionMismatch,
  queryDatabaseRows,
  rowParent,
} from './data-sources.js';
import { idSegment, normalizeId, notionId } from './ids.js';
import {
  allNotionForm,
  type Column,
  findColumn,
  PropertyValuesSchema,
  toNotionProperties,
} from './properties.js';
import { richText, richTextArray } from './rich-text.js';
import {
  CoverSchema,
  createPage,
  exactlyOne,
  IconSchema,
  listResult,
  PageSizeSchema,
  StartCursorSchema,
  stringEnum,
  toCover,
  toIcon,
  withoutRequestId,
} from './shared.js';

/** Column types Notion databases have. */
export const COLUMN_TYPES = [
  'title',
  'rich_text',
  'number',
  'select',
  'multi_select',
  'status',
  'date',
  'people',
  'files',
  'checkbox',
  'url',
  'email',
  'phone_number',
  'formula',
  'relation',
  'rollup',
  'created_time',
  'created_by',
  'last_edited_time',
  'last_edited_by',
] as const;
const COLUMN_TYPE_SET = new Set<string>(COLUMN_TYPES);

const ColumnTypeName = stringEnum(
  COLUMN_TYPES,
  'A column type with its default configuration, e.g. "rich_text".',
);

const ColumnConfig = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'One column as {type: configuration}, e.g. {"title": {}}, {"number": {"format": "dollar"}}, {"select": {"options": [{"name": "High", "color": "red"}]}}, {"relation": {"database_id": "…", "single_property": {}}}.',
  },
);

const SchemaShape = Type.Record(
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.Union([ColumnTypeName, ColumnConfig]),
  {
    minProperties: 1,
    description:
      'The columns, keyed by column name: {column: {type: config}} or {column: "type"}. Exactly one column must be of type "title". Example: {"Name": {"title": {}}, "Priority": {"select": {"options": [{"name": "High"}, {"name": "Low"}]}}, "Estimate": "number"}.',
  },
);

const SchemaChange = Type.Record(
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.Union([ColumnTypeName, ColumnConfig, Type.Null()]),
  {
    minProperties: 1,
    description:
      'Column changes keyed by existing column name (or property id): a new name adds a column ({"Owner": "people"}); {"name": "New name"} renames; {type: config} reconfigures or changes the type ({"Priority": {"select": {"options": [{"name": "Urgent"}]}}}); both may be combined; null removes the column.',
  },
);

function pointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The type keys of one column definition and the keys that are not allowed there. */
function columnKeys(def: Record<string, unknown>, extra: string[]) {
  const keys = Object.keys(def);
  return {
    types: keys.filter((k) => COLUMN_TYPE_SET.has(k)),
    unknown: keys.filter((k) => !COLUMN_TYPE_SET.has(k) && !extra.includes(k)),
  };
}

/** Rules of a schema given at create: one type per column, exactly one title column. */
function checkSchema(properties: Static<typeof SchemaShape>): FieldError[] {
  const errors: FieldError[] = [];
  let titles = 0;
  for (const [name, raw] of Object.entries(properties)) {
    const at = `/properties/${pointer(name)}`;
    const def = raw as string | Record<string, unknown>;
    if (typeof def === 'string') {
      if (def === 'title') titles++;
      continue;
    }
    const { types, unknown } = columnKeys(def, ['description']);
    if (types.length !== 1) {
      errors.push({
        path: at,
        message: `must name exactly one column type, e.g. {"rich_text": {}} (rule: a column is {type: config}; types: ${COLUMN_TYPES.join(', ')})`,
      });
    }
    for (const key of unknown) {
      errors.push({
        path: `${at}/${pointer(key)}`,
        message: `is not a column type; remove it (types: ${COLUMN_TYPES.join(', ')})`,
      });
    }
    if (types[0] === 'title') titles++;
    for (const type of types) {
      const config = def[type];
      if (typeof config !== 'object' || config === null || Array.isArray(config)) {
        errors.push({
          path: `${at}/${type}`,
          message: 'must be an object with the column configuration ({} for defaults)',
        });
      }
    }
  }
  if (titles !== 1) {
    errors.push({
      path: '/properties',
      message: `must have exactly one column of type "title" (rule: a database has exactly one title column; found ${titles})`,
    });
  }
  return errors;
}

/** Rules of schema changes: each change names at most one type, or renames, or is null. */
function checkSchemaChange(properties: Static<typeof SchemaChange>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    if (raw === null || typeof raw === 'string') continue;
    const def = raw as Record<string, unknown>;
    const at = `/properties/${pointer(name)}`;
    const { types, unknown } = columnKeys(def, ['name', 'description']);
    if (types.length > 1) {
      errors.push({ path: at, message: 'must name at most one column type (rule: a column has one type)' });
    }
    if (types.length === 0 && def.name === undefined && def.description === undefined) {
      errors.push({
        path: at,
        message: 'must rename ({"name": "…"}), reconfigure ({type: config}) or be null to remove the column',
      });
    }
    if (def.name !== undefined && (typeof def.name !== 'string' || def.name.trim() === '')) {
      errors.push({ path: `${at}/name`, message: 'must be a non-empty string' });
    }
    for (const key of unknown) {
      errors.push({ path: `${at}/${pointer(key)}`, message: `is not a column type or "name"; remove it` });
    }
  }
  return errors;
}

/** Columns as Notion takes them: `"number"` becomes `{"number": {}}`. */
function toNotionSchema(properties: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(properties).map(([name, def]) => [name, typeof def === 'string' ? { [def]: {} } : def]),
  );
}

/** The spec's rich_text title, or plain text (a wider type) that becomes one text run. */
const DatabaseTitleSchema = Type.Union(
  [
    richTextArray('The title as a rich_text array: [{"type": "text", "text": {"content": "Bugs"}}].'),
    Type.String({ minLength: 1, maxLength: 2000, description: 'The title as plain text.' }),
  ],
  {
    description:
      'The database title: a rich_text array [{"type": "text", "text": {"content": "Bugs"}}], or plain text.',
  },
);

export const notesDatabaseCreate = defineTool({
  name: 'notes_database_create',
  provider: 'notion',
  description: `Create a Notion database (a table) inside a page. "parent" is {"page_id": "…"}; "title" is a rich_text array ([{"type": "text", "text": {"content": "…"}}]; plain text is accepted too); "properties" is the schema (rule 7): {<column name>: {<type>: <config>}}, e.g. a title column {"title": {}} or a select {"select": {"options": [{"name": "High"}]}} ({column: "type"} for defaults). Rule: exactly one column of type "title" (the row name). Optional "description" (plain text), "icon" and "cover" (rule 8 shapes). Returns the database with its id and the columns' property ids.
Alias: "parent_page_id": "…" for "parent": {"page_id": "…"}.
Example: {"parent": {"page_id": "6042b18c-8264-48b6-99d8-01794faa2b55"}, "title": [{"type": "text", "text": {"content": "Bugs"}}], "properties": {"Name": {"title": {}}, "Severity": {"select": {"options": [{"name": "High", "color": "red"}, {"name": "Low"}]}}, "Reported": {"date": {}}}}`,
  input: Type.Object(
    {
      parent: Type.Object(
        {
          page_id: notionId('The page the database is created in.'),
          type: Type.Optional(stringEnum(['page_id'], 'Optional, as Notion writes it: "page_id".')),
        },
        { additionalProperties: false, description: 'Where the database goes: {"page_id": "…"}.' },
      ),
      title: DatabaseTitleSchema,
      properties: SchemaShape,
      description: Type.Optional(
        Type.String({ maxLength: 2000, description: 'The database description (plain text).' }),
      ),
      is_inline: Type.Optional(
        Type.Boolean({
          description: 'Show the database inline in the parent page (default false: a full-page database).',
        }),
      ),
      icon: Type.Optional(IconSchema),
      cover: Type.Optional(CoverSchema),
    },
    { additionalProperties: false },
  ),
  aliases: { parent_page_id: { to: 'parent', convert: (page_id) => ({ page_id }) } },
  annotations: { read_only: false, destructive: false, idempotent: false },
  check: (input) => checkSchema(input.properties),
  async run(input, { client }) {
    const json = {
      parent: { type: 'page_id', page_id: normalizeId(input.parent.page_id) },
      title: typeof input.title === 'string' ? richText(input.title) : input.title,
      ...(input.description !== undefined ? { description: richText(input.description) } : {}),
      ...(input.is_inline !== undefined ? { is_inline: input.is_inline } : {}),
      ...(input.icon !== undefined ? { icon: toIcon(input.icon) } : {}),
      ...(input.cover !== undefined ? { cover: toCover(input.cover) } : {}),
    };
    const properties = toNotionSchema(input.properties);
    try {
      const res = await client.request({
        method: 'POST',
        path: '/v1/databases',
        json: { ...json, properties },
      });
      return withoutRequestId(res.data);
    } catch (error) {
      // From 2025-09-03 the schema is the initial data source's.
      if (!isVersionMismatch(error, /properties/)) throw error;
      const res = await client.request({
        method: 'POST',
        path: '/v1/databases',
        json: { ...json, initial_data_source: { properties } },
      });
      return withoutRequestId(res.data);
    }
  },
});

export const notesDatabaseFetch = defineTool({
  name: 'notes_database_fetch',
  provider: 'notion',
  description: `Get a Notion database: its title, description, parent and schema (every column's name, property id, type and configuration such as select options). Use it before inserting or querying rows to learn the column names and types.
Example: {"database_id": "39fbdf12-08c0-4b0b-95e8-06be30a24a4a"}`,
  input: Type.Object(
    { database_id: notionId('The database to get.', '39fbdf12-08c0-4b0b-95e8-06be30a24a4a') },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const { database, dataSource } = await databaseSchema(client, normalizeId(input.database_id));
    // From 2025-09-03 the schema is the data source's: shown here as the database's, as before.
    return withoutRequestId(dataSource ? { ...database, properties: dataSource.properties } : database);
  },
});

export const notesDatabaseInsertRow = defineTool({
  name: 'notes_database_insert_row',
  provider: 'notion',
  description: `Insert a row (a page) into a Notion database ("database_id"). "properties" (rules 5 and 6): provider value shapes keyed by exact column name, the title column keyed "title", e.g. {"title": {"title": [{"text": {"content": "…"}}]}, "Priority": {"select": {"name": "High"}}, "Due": {"date": {"start": "2025-02-01"}}}; plain values ("High", 3, true) are converted by column type. Call notes_database_fetch first to see exact names. Unknown select options are added to the column. Optional "child_blocks" ({type, text, language?}), "icon" and "cover" (rule 8: {"type": "emoji", "emoji": "🐛"}, {"type": "external", "external": {"url": "…"}}). "_parent" is computed from database_id; never supply it. Returns the new row with its id.
Alias: "blocks" for "child_blocks".
Example: {"database_id": "39fbdf12-08c0-4b0b-95e8-06be30a24a4a", "properties": {"title": {"title": [{"text": {"content": "Fix login bug"}}]}, "Priority": {"select": {"name": "High"}}, "Due": {"date": {"start": "2025-02-01"}}}}`,
  input: Type.Object(
    {
      database_id: notionId('The database to insert into.', '39fbdf12-08c0-4b0b-95e8-06be30a24a4a'),
      properties: PropertyValuesSchema,
      child_blocks: Type.Optional(
        blockList(
          'Content of the row page: blocks {type, text, language?} as notes_page_content_append takes them (1-100).',
        ),
      ),
      icon: Type.Optional(IconSchema),
      cover: Type.Optional(CoverSchema),
    },
    { additionalProperties: false },
  ),
  aliases: { blocks: { to: 'child_blocks' } },
  annotations: { read_only: false, destructive: false, idempotent: false },
  check: (input) => checkBlocks(input.child_blocks, 'child_blocks'),
  async run(input, { client }) {
    const databaseId = normalizeId(input.database_id);
    if (allNotionForm(input.properties)) {
      return createPage(client, rowParent(databaseId, null), input.properties, input);
    }
    const schema = await databaseSchema(client, databaseId);
    const properties = toNotionProperties(input.properties, schema.columns);
    return createPage(client, rowParent(databaseId, schema.dataSourceId), properties, input);
  },
});

/** The columns named by property_id (ids or names, rule 6); an unknown one is reported as not found. */
function wantedColumns(databaseId: string, columns: Column[], propertyId: string | string[]): Column[] {
  const wanted = Array.isArray(propertyId) ? propertyId : [propertyId];
  const found = wanted.map((key) => findColumn(columns, key));
  const missing = wanted.flatMap((key, i) => (found[i] ? [] : [{ key, i }]));
  if (missing.length) {
    throw new Problem(
      'upstream_not_found',
      `Database ${databaseId} has no property ${missing.map((m) => `"${m.key}"`).join(', ')}. Its properties: ${columns.map((c) => `"${c.name}" (id "${c.id}")`).join(', ')}.`,
      {
        errors: missing.map((m) => ({
          path: Array.isArray(propertyId) ? `/tool_input/property_id/${m.i}` : '/tool_input/property_id',
          message: 'is not a property id or column name of this database',
        })),
      },
    );
  }
  return found as Column[];
}

export const notesDatabasePropertyRetrieve = defineTool({
  name: 'notes_database_property_retrieve',
  provider: 'notion',
  description: `Read the rows of a Notion database ("database_id") limited to one property ("property_id": a property ID such as "title", or the exact column name; an array of them is accepted too). Without property_id the rows carry all their properties. Also returns the definition of each property asked for (id, name, type, configuration such as select options; all of them without property_id). Returns {database_id, properties: [definitions], results: [rows], has_more, next_page}. Paginated ("page_size" 1-100, "start_cursor"): when has_more is true, call again with next_page merged into the input.
Example: {"database_id": "39fbdf12-08c0-4b0b-95e8-06be30a24a4a", "property_id": "title"}`,
  input: Type.Object(
    {
      database_id: notionId('The database.', '39fbdf12-08c0-4b0b-95e8-06be30a24a4a'),
      property_id: Type.Optional(
        Type.Union(
          [
            Type.String({ minLength: 1, maxLength: 200 }),
            Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 }),
          ],
          {
            description:
              'The property whose values the rows carry: a property ID (e.g. "title") or the exact column name; or an array of them. Omit for all properties.',
          },
        ),
      ),
      page_size: Type.Optional(PageSizeSchema),
      start_cursor: Type.Optional(StartCursorSchema),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const databaseId = normalizeId(input.database_id);
    const { columns, dataSourceId } = await databaseSchema(client, databaseId);
    const asked =
      input.property_id === undefined ? undefined : wantedColumns(databaseId, columns, input.property_id);
    // Notion's filter_properties limits each row to the properties with these ids.
    const rows = await queryDatabaseRows(
      client,
      databaseId,
      {
        ...(input.page_size !== undefined ? { page_size: input.page_size } : {}),
        ...(input.start_cursor !== undefined ? { start_cursor: input.start_cursor } : {}),
      },
      { dataSourceId, filterProperties: asked?.map((c) => c.id) },
    );
    return { database_id: databaseId, properties: asked ?? columns, ...listResult(rows) };
  },
});

/** Rule 3 of the specification (invalid condition 3), quoted in refusals. */
const SORT_RULE =
  'each sort item holds exactly one of property or timestamp (last_edited_time or created_time), plus direction';

const SortItem = Type.Object(
  {
    property: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Sort by this column (name or property id).',
      }),
    ),
    timestamp: Type.Optional(
      stringEnum(
        ['created_time', 'last_edited_time'] as const,
        'Sort by when rows were created or last edited.',
      ),
    ),
    direction: stringEnum(['ascending', 'descending'] as const, 'Sort direction.'),
  },
  {
    additionalProperties: false,
    description: `One sort (rule 3: ${SORT_RULE}): {"property": "Due", "direction": "ascending"} or {"timestamp": "created_time", "direction": "descending"}.`,
  },
);

export const notesDatabaseQuery = defineTool({
  name: 'notes_database_query',
  provider: 'notion',
  description: `Query the rows (pages) of a Notion database ("database_id"), optionally sorted and filtered. "sorts" is a list; rule 3: each sort item holds exactly one of "property" (column name) or "timestamp" ("last_edited_time" or "created_time"), plus "direction" ("ascending" or "descending"). "filter" is Notion's filter object (e.g. {"property": "Status", "status": {"equals": "Done"}}, or {"and": [...]}/{"or": [...]}). Without sorts Notion returns newest rows first. Paginated ("page_size" 1-100, "start_cursor"): when has_more is true, call again with next_page merged into the input.
Example: {"database_id": "39fbdf12-08c0-4b0b-95e8-06be30a24a4a", "sorts": [{"property": "Due", "direction": "ascending"}], "page_size": 25, "filter": {"property": "Done", "checkbox": {"equals": false}}}`,
  input: Type.Object(
    {
      database_id: notionId('The database to query.', '39fbdf12-08c0-4b0b-95e8-06be30a24a4a'),
      page_size: Type.Optional(PageSizeSchema),
      start_cursor: Type.Optional(StartCursorSchema),
      sorts: Type.Optional(
        Type.Array(SortItem, { maxItems: 100, description: 'Sort order, most significant first.' }),
      ),
      filter: Type.Optional(
        Type.Object(
          {},
          {
            additionalProperties: true,
            description:
              'Notion filter object: {"property": "<column>", "<type>": {"<condition>": value}}, or {"and": [...]} / {"or": [...]}; timestamp filters {"timestamp": "created_time", "created_time": {"after": "2025-01-01"}}.',
          },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  check: (input) =>
    (input.sorts ?? []).flatMap((sort, i) =>
      exactlyOne(sort, 'property', 'timestamp', SORT_RULE).map((e) => ({
        ...e,
        path: `/sorts/${i}${e.path === '/' ? '' : e.path}`,
      })),
    ),
  async run(input, { client }) {
    const rows = await queryDatabaseRows(client, normalizeId(input.database_id), {
      ...(input.filter ? { filter: input.filter } : {}),
      ...(input.sorts
        ? {
            sorts: input.sorts.map((s) => ({
              ...(s.property !== undefined ? { property: s.property } : { timestamp: s.timestamp }),
              direction: s.direction,
            })),
          }
        : {}),
      ...(input.page_size !== undefined ? { page_size: input.page_size } : {}),
      ...(input.start_cursor !== undefined ? { start_cursor: input.start_cursor } : {}),
    });
    return listResult(rows);
  },
});

export const notesDatabaseUpdate = defineTool({
  name: 'notes_database_update',
  provider: 'notion',
  description: `Update a Notion database: its title and description (plain strings) and its columns. "properties" adds columns (a new name with {type: config} or "type"), renames ({"Old": {"name": "New"}}), reconfigures ({"Priority": {"select": {"options": [...]}}}) or removes (null) them. Rule: give at least one of title, description, properties. Returns the updated database.
Example: {"database_id": "39fbdf12-08c0-4b0b-95e8-06be30a24a4a", "title": "Tasks 2025", "properties": {"Estimate": {"name": "Points"}, "Owner": "people"}}`,
  input: Type.Object(
    {
      database_id: notionId('The database to update.', '39fbdf12-08c0-4b0b-95e8-06be30a24a4a'),
      title: Type.Optional(
        Type.String({ minLength: 1, maxLength: 2000, description: 'New title (plain text).' }),
      ),
      description: Type.Optional(
        Type.String({ maxLength: 2000, description: 'New description (plain text; "" clears it).' }),
      ),
      properties: Type.Optional(SchemaChange),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: false, destructive: true, idempotent: true },
  check(input) {
    if (input.title === undefined && input.description === undefined && input.properties === undefined) {
      return [
        {
          path: '/',
          message:
            'Provide at least one of "title", "description" or "properties" (rule: an update must change something).',
        },
      ];
    }
    return input.properties ? checkSchemaChange(input.properties) : [];
  },
  async run(input, { client }) {
    const json = {
      ...(input.title !== undefined ? { title: richText(input.title) } : {}),
      ...(input.description !== undefined
        ? { description: input.description === '' ? [] : richText(input.description) }
        : {}),
    };
    const properties = input.properties ? toNotionSchema(input.properties) : undefined;
    const path = `/v1/databases/${idSegment(input.database_id)}`;
    try {
      const res = await client.request({
        method: 'PATCH',
        path,
        json: { ...json, ...(properties ? { properties } : {}) },
      });
      return withoutRequestId(res.data);
    } catch (error) {
      if (!properties || !isVersionMismatch(error, /properties/)) throw error;
      return updateThroughDataSource(client, path, json, properties);
    }
  },
});

/**
 * From 2025-09-03 the columns are the data source's: the database takes the title and description,
 * its data source the column changes. Answers the database with its schema, as under 2022-06-28.
 */
async function updateThroughDataSource(
  client: ProviderClient,
  path: string,
  json: Record<string, unknown>,
  properties: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const database =
    Object.keys(json).length > 0
      ? (await client.request<Record<string, unknown>>({ method: 'PATCH', path, json })).data
      : (await client.request<Record<string, unknown>>({ method: 'GET', path })).data;
  const dataSourceId = firstDataSourceId(database);
  if (!dataSourceId) throw new Problem('upstream_error', 'Notion answered a database without a data source.');
  const source = await client.request<Record<string, unknown>>({
    method: 'PATCH',
    path: `/v1/data_sources/${encodeURIComponent(dataSourceId)}`,
    json: { properties },
  });
  return withoutRequestId({ ...database, properties: source.data.properties });
}
