export { Portico, type PorticoOptions, type RequestInput } from './client.js';
export { isProblemCode, PROBLEM_CODES, type ProblemCode } from './errors/codes.js';
export * from './errors/errors.js';
export { PageList } from './http/pages.js';
export { PorticoResponse } from './http/response.js';
export type { BodyInput, QueryParams } from './http/transport.js';
export type { AuditEntry, AuditFilters, ListAuditOptions } from './resources/audit.js';
export type {
  AccountWithLink,
  AuthorizationLinkInput,
  ListAccountsOptions,
  VerifyUserInput,
  VerifyUserResult,
} from './resources/connected-accounts.js';
export type { ListExecutionsOptions } from './resources/executions.js';
export type {
  Approval,
  ApprovalStatus,
  Policy,
  PolicyConstraint,
  PolicyInput,
} from './resources/guardrails.js';
export type { McpToken, MintMcpTokenInput } from './resources/mcp-tokens.js';
export type {
  ExecuteToolInput,
  ExecuteToolResult,
  RawToolFormat,
  SearchToolsOptions,
  ToolFilters,
} from './resources/tools.js';
export type { Toolset, ToolsetChange, ToolsetInput, ToolsetSelectors } from './resources/toolsets.js';
export type {
  CreateTriggerInput,
  ListTriggersOptions,
  Trigger,
  TriggerState,
  TriggerType,
} from './resources/triggers.js';
export type {
  CreateWebhookInput,
  PorticoEvent,
  UpdateWebhookInput,
  Webhook,
  WebhookDelivery,
} from './resources/webhooks.js';
export {
  AUTHORIZE_TOOL,
  type AuthorizationRequired,
  type AuthorizationSubject,
  authorizationRequired,
  authorizationText,
} from './tools/authorization.js';
export type { ToolContext, ToolFramework, ToolOutcome, ToolsForOptions } from './tools/framework.js';
export { dataText, type ProblemContext, problemText } from './tools/outcome.js';
export * from './types.js';
