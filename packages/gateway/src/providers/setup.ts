import type { ProviderKey } from './types.js';

/**
 * What an operator does at the provider before a connection works, and the common scopes with what
 * they allow: shown by the dashboard next to the connection's redirect URI (GET /api/v1/providers).
 * `{redirect_uri}` in a step is replaced by the connection's redirect URI.
 */
export interface ProviderSetup {
  console: { name: string; url: string };
  steps: string[];
  scopes: Array<{ scope: string; description: string }>;
}

const googleSteps = (api: string): string[] => [
  'In the Google Cloud console, select or create a project.',
  `Under "APIs & Services" → "Library", enable the ${api}.`,
  'Under "OAuth consent screen", choose the user type (External for users outside your Workspace), fill in the app name and support e-mail, and add the scopes below.',
  'Under "Credentials", choose "Create credentials" → "OAuth client ID" → "Web application".',
  'Add {redirect_uri} to "Authorized redirect URIs" and create the client.',
  'Copy the client ID and client secret into this connection and save it.',
  'While the app is in "Testing", add your test users on the consent screen page; publish it for everyone else.',
];

const G = 'https://www.googleapis.com/auth/';

export const PROVIDER_SETUP: Record<ProviderKey, ProviderSetup> = {
  notion: {
    console: { name: 'Notion integrations', url: 'https://www.notion.so/my-integrations' },
    steps: [
      'At notion.so/my-integrations, create a new integration and make it Public (OAuth).',
      'Fill in the company name, website, privacy policy and terms of use Notion asks for.',
      'Add {redirect_uri} as a redirect URI.',
      'Under "Capabilities", tick what the tools need: read, update and insert content, read comments, insert comments, read user information.',
      'Copy the OAuth client ID and client secret into this connection and save it. Notion has no scopes: leave permissions empty.',
    ],
    scopes: [],
  },
  google_calendar: {
    console: { name: 'Google Cloud console', url: 'https://console.cloud.google.com/apis/credentials' },
    steps: googleSteps('Google Calendar API'),
    scopes: [
      {
        scope: `${G}calendar`,
        description: 'Read and change every calendar of the user (all calendar_ tools).',
      },
      {
        scope: `${G}calendar.events`,
        description: 'Read and change events only; calendar_list_calendars fails.',
      },
      {
        scope: `${G}calendar.readonly`,
        description: 'Read calendars and events; no creating, changing or deleting.',
      },
    ],
  },
  google_drive: {
    console: { name: 'Google Cloud console', url: 'https://console.cloud.google.com/apis/credentials' },
    steps: googleSteps('Google Drive API'),
    scopes: [
      { scope: `${G}drive.readonly`, description: 'Read every file and its metadata (the drive_ tools).' },
      {
        scope: `${G}drive.file`,
        description: 'Create files and change the ones this app created (uploads through the proxy).',
      },
      {
        scope: `${G}drive`,
        description: 'Read and change any file: only if the app must edit files it did not create.',
      },
    ],
  },
  google_sheets: {
    console: { name: 'Google Cloud console', url: 'https://console.cloud.google.com/apis/credentials' },
    steps: googleSteps('Google Sheets API'),
    scopes: [
      { scope: `${G}spreadsheets`, description: 'Read, create and change spreadsheets (all sheets_ tools).' },
      { scope: `${G}spreadsheets.readonly`, description: 'Read spreadsheets only.' },
    ],
  },
  google_docs: {
    console: { name: 'Google Cloud console', url: 'https://console.cloud.google.com/apis/credentials' },
    steps: googleSteps('Google Docs API'),
    scopes: [
      { scope: `${G}documents`, description: 'Read, create and change documents (all docs_ tools).' },
      { scope: `${G}documents.readonly`, description: 'Read documents only.' },
    ],
  },
  hubspot: {
    console: { name: 'HubSpot developer account', url: 'https://developers.hubspot.com/' },
    steps: [
      'In a HubSpot developer account, create an app (Apps → Create app).',
      'On the "Auth" tab, add {redirect_uri} as a redirect URL.',
      'Add the scopes below that the tools need (the app must request exactly what it lists).',
      'Copy the client ID and client secret into this connection and save it.',
    ],
    scopes: [
      { scope: 'oauth', description: 'Required by HubSpot for every OAuth app.' },
      { scope: 'crm.objects.contacts.read', description: 'Read contacts.' },
      { scope: 'crm.objects.contacts.write', description: 'Create and change contacts.' },
      { scope: 'crm.objects.companies.read', description: 'Read companies.' },
      { scope: 'crm.objects.companies.write', description: 'Create and change companies.' },
      { scope: 'crm.objects.deals.read', description: 'Read deals.' },
      { scope: 'crm.objects.deals.write', description: 'Create and change deals.' },
    ],
  },
  sharepoint: {
    console: { name: 'Microsoft Entra admin center', url: 'https://entra.microsoft.com/' },
    steps: [
      'In the Microsoft Entra admin center, go to "App registrations" → "New registration".',
      'Choose who may sign in (this directory only, or any organisation) and add {redirect_uri} as a "Web" redirect URI.',
      'Under "Certificates & secrets", create a client secret and copy its value (shown once).',
      'Under "API permissions", add the Microsoft Graph delegated permissions below; grant admin consent where your directory requires it.',
      'Copy the application (client) ID and the secret into this connection; set the tenant for a single-directory app.',
    ],
    scopes: [
      { scope: 'offline_access', description: 'A refresh token (always requested by Portico).' },
      { scope: 'User.Read', description: 'Sign the user in and read their profile.' },
      {
        scope: 'Sites.ReadWrite.All',
        description: 'Read and change items in every site the user can reach.',
      },
      { scope: 'Files.ReadWrite.All', description: 'Read and change every file the user can reach.' },
      {
        scope: 'Sites.Read.All',
        description: 'Read items in every site the user can reach (read-only apps).',
      },
    ],
  },
};
