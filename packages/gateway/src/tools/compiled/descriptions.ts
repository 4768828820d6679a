/**
 * Which API description each provider's compiled tools come from. `file` is under the package's
 * `descriptions/` folder (third-party data kept with its licence, see descriptions/SOURCE.md) or,
 * with `package`, inside a published npm package.
 */
export interface DescriptionSource {
  provider: string;
  format: 'openapi' | 'discovery';
  file: string;
  package?: string;
  /** The words its tools start with after the provider's key, for a provider of several documents. */
  prefix?: string;
  /**
   * The API version its calls send in the provider's version header, for a description that does
   * not say (one that does, as a header parameter, is sent at its own).
   */
  apiVersion?: string;
  /**
   * Only the operations the provider's earlier descriptions lack (same method and path): an older
   * API version kept for what the newer one dropped.
   */
  supplement?: boolean;
}

/**
 * HubSpot's APIs, one document each, rebuilt from its published client by
 * scripts/hubspot-description-from-client.js (descriptions/SOURCE.md): file and tool prefix.
 */
const HUBSPOT: readonly [file: string, prefix: string][] = [
  ['crm-contacts', 'contacts'],
  ['crm-companies', 'companies'],
  ['crm-deals', 'deals'],
  ['crm-tickets', 'tickets'],
  ['crm-line-items', 'line_items'],
  ['crm-products', 'products'],
  ['crm-quotes', 'quotes'],
  ['crm-objects', 'objects'],
  ['crm-calls', 'calls'],
  ['crm-emails', 'emails'],
  ['crm-meetings', 'meetings'],
  ['crm-notes', 'notes'],
  ['crm-tasks', 'tasks'],
  ['crm-communications', 'communications'],
  ['crm-postal-mail', 'postal_mail'],
  ['crm-associations-v3', 'associations_v3'],
  ['crm-associations-v3-types', 'associations_v3'],
  ['crm-associations-v4', 'associations_v4'],
  ['crm-associations-v4-schema', 'associations_v4'],
  ['crm-owners', 'owners'],
  ['crm-properties', 'properties'],
  ['crm-pipelines', 'pipelines'],
  ['files', 'files'],
];

export const DESCRIPTIONS: readonly DescriptionSource[] = [
  { provider: 'google_calendar', format: 'discovery', file: 'google/calendar-v3.json' },
  { provider: 'google_drive', format: 'discovery', file: 'google/drive-v3.json' },
  { provider: 'google_sheets', format: 'discovery', file: 'google/sheets-v4.json' },
  { provider: 'google_docs', format: 'discovery', file: 'google/docs-v1.json' },
  { provider: 'gmail', format: 'discovery', file: 'google/gmail-v1.json' },
  { provider: 'notion', format: 'openapi', file: 'notion/notion-openapi-2025-09-03.json' },
  // 2022-06-28 queries, creates and updates databases themselves, where 2025-09-03 has data sources.
  {
    provider: 'notion',
    format: 'openapi',
    file: 'notion/notion-openapi-2022-06-28.json',
    apiVersion: '2022-06-28',
    supplement: true,
  },
  { provider: 'sharepoint', format: 'openapi', file: 'microsoft/graph-v1.0-sharepoint.json' },
  { provider: 'outlook', format: 'openapi', file: 'microsoft/graph-v1.0-outlook.json' },
  { provider: 'microsoft_teams', format: 'openapi', file: 'microsoft/graph-v1.0-microsoft-teams.json' },
  {
    provider: 'github',
    format: 'openapi',
    package: '@octokit/openapi',
    file: 'generated/api.github.com.json',
  },
  ...HUBSPOT.map(([file, prefix]) => ({
    provider: 'hubspot',
    format: 'openapi' as const,
    file: `hubspot/${file}.json`,
    prefix,
  })),
];

/** The providers with compiled tools (a provider may have several descriptions). */
export const COMPILED_PROVIDERS: readonly string[] = [...new Set(DESCRIPTIONS.map((d) => d.provider))];

/**
 * Lines written by hand for the operations agents use most; they open the generated description.
 */
export const CURATED: Record<string, string> = {
  gmail_users_messages_list:
    'Finds messages in the mailbox; use q with Gmail search syntax (from:, subject:, is:unread, newer_than:7d) and userId "me".',
  gmail_users_messages_get:
    'Reads one message by id; format "metadata" gives headers only, "full" the parsed body.',
  gmail_users_messages_send:
    'Sends an email: body.raw is the whole RFC 2822 message, base64url-encoded; userId "me".',
  gmail_users_drafts_create: 'Saves a draft: body.message.raw is the RFC 2822 message, base64url-encoded.',
  gmail_users_labels_list: 'Lists the mailbox labels with their ids, for filtering or modifying messages.',
  gmail_users_messages_modify: 'Adds or removes labels on one message (e.g. remove UNREAD to mark it read).',
  gmail_users_threads_list: 'Finds conversations; the same q search syntax as messages.',
  google_calendar_events_list:
    'Lists events of a calendar ("primary" is the user\'s own); give timeMin/timeMax as RFC 3339 and singleEvents true to expand recurrences.',
  google_calendar_events_insert:
    'Creates an event; body.start and body.end take dateTime (with timeZone) or date.',
  google_calendar_events_patch:
    'Changes some fields of an event; to answer an invitation set body.attendees with your responseStatus.',
  google_calendar_calendar_list_list: 'Lists the calendars the user has, with their ids.',
  google_calendar_freebusy_query: 'Tells when the given calendars are busy between timeMin and timeMax.',
  google_drive_files_list:
    "Finds files; q uses Drive query syntax (name contains 'x', mimeType = '…', trashed = false).",
  google_drive_files_get: "Reads one file's metadata; pass fields to choose which.",
  google_drive_permissions_create:
    'Shares a file: body.role (reader, writer…) and body.type (user, group, anyone).',
  google_sheets_spreadsheets_values_get: 'Reads the cells of a range in A1 notation (Sheet1!A1:C10).',
  google_sheets_spreadsheets_values_update:
    'Writes cells of a range; valueInputOption USER_ENTERED parses them as typed.',
  google_sheets_spreadsheets_values_append: 'Appends rows after the last row of a table in the range.',
  google_docs_documents_get: "Reads a document's whole structure (body content, styles).",
  google_docs_documents_batch_update:
    'Edits a document with a list of requests (insertText, replaceAllText, …).',
  github_repos_get: 'Reads a repository: its default branch, visibility, counts.',
  github_issues_create:
    'Opens an issue in owner/repo with body.title and optional body.body, labels and assignees.',
  github_issues_list_for_repo: 'Lists issues (and pull requests) of owner/repo; state open, closed or all.',
  github_issues_create_comment: 'Comments on an issue or pull request by its number.',
  github_pulls_list: 'Lists pull requests of owner/repo.',
  github_pulls_create: 'Opens a pull request from body.head into body.base.',
  github_repos_get_content: 'Reads a file or folder of a repository at a path (file content is base64).',
  github_search_issues_and_pull_requests: 'Searches issues and pull requests with GitHub search syntax in q.',
  github_users_get_authenticated: 'Reads the signed-in user.',
  notion_post_search: 'Searches pages and data sources the integration can see, by title.',
  notion_retrieve_a_page: "Reads one page's properties (its content is its block children).",
  notion_get_block_children: 'Reads the blocks inside a page or block, a page at a time.',
  notion_query_data_source: "Queries a data source's rows with a filter and sorts.",
  hubspot_contacts_search:
    'Finds contacts: body.filterGroups (groups are OR-ed, filters in a group AND-ed) of {propertyName, operator (EQ, CONTAINS_TOKEN, GT…), value}, or body.query for a text search; body.properties picks the columns.',
  hubspot_companies_search:
    'Finds companies with the same body.filterGroups, query and properties as the contact search.',
  hubspot_deals_search:
    'Finds deals with the same body.filterGroups, query and properties as the contact search.',
  hubspot_objects_search:
    'Searches any object type (objectType "contacts", "0-1", a custom object…) with the filterGroups of the contact search.',
  hubspot_contacts_get_by_id:
    'Reads one contact; name the properties you need in properties and the linked object types in associations.',
  hubspot_contacts_create:
    'Creates a contact from body.properties (email, firstname, lastname…); body.associations links it to other records by associationTypeId.',
  hubspot_contacts_update: "Changes some of a contact's body.properties; an empty string clears one.",
  hubspot_companies_create: 'Creates a company from body.properties (name, domain…).',
  hubspot_deals_create:
    'Creates a deal from body.properties (dealname, amount, dealstage, pipeline, closedate) and optional body.associations.',
  hubspot_deals_update:
    "Changes some of a deal's body.properties, e.g. dealstage to move it along its pipeline.",
  hubspot_notes_create:
    'Logs a note: body.properties.hs_note_body and hs_timestamp, with body.associations to the records it is about.',
  hubspot_calls_create:
    'Logs a call: body.properties (hs_call_body, hs_call_direction, hs_call_duration, hs_timestamp) and body.associations.',
  hubspot_emails_create:
    'Logs an email on the timeline: body.properties (hs_email_subject, hs_email_text, hs_timestamp) and body.associations.',
  hubspot_meetings_create:
    'Logs a meeting: body.properties (hs_meeting_title, hs_meeting_start_time, hs_meeting_end_time) and body.associations.',
  hubspot_tasks_create:
    'Creates a task: body.properties (hs_task_subject, hs_timestamp as its due time, hs_task_status) and body.associations.',
  hubspot_associations_v4_create_default:
    "Links two records with HubSpot's default association for their object types (a contact to a company, a deal to a contact).",
  hubspot_associations_v4_create:
    'Links two records with the association types in body (a list of {associationCategory, associationTypeId}).',
  hubspot_associations_v4_get_page:
    'Lists the records of toObjectType linked to one record, with the types of each link.',
  hubspot_owners_get_page: "Lists the account's owners (the users records are assigned to); email finds one.",
  hubspot_properties_get_all:
    "Lists an object type's properties with their internal names, types and options.",
  hubspot_pipelines_get_all:
    "Lists an object type's pipelines with their stages (deal stages, ticket statuses).",
};
