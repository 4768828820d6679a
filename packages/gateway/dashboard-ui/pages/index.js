// Every page of the dashboard, in the navigation's order. A new page is a module in this folder
// exporting `routes` (and `nav` to be listed) plus a line here.
import * as accounts from './accounts.js';
import * as admins from './admins.js';
import * as approvals from './approvals.js';
import * as audit from './audit.js';
import * as clients from './clients.js';
import * as connections from './connections.js';
import * as events from './events.js';
import * as executions from './executions.js';
import * as overview from './overview.js';
import * as policies from './policies.js';
import * as providers from './providers.js';
import * as settings from './settings.js';
import * as tokens from './tokens.js';
import * as tools from './tools.js';
import * as toolsets from './toolsets.js';
import * as triggers from './triggers.js';
import * as webhooks from './webhooks.js';

export const PAGES = [
  overview,
  connections,
  providers,
  accounts,
  tools,
  toolsets,
  executions,
  events,
  webhooks,
  triggers,
  policies,
  approvals,
  clients,
  tokens,
  settings,
  audit,
  admins,
];
