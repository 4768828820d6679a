import { isProblemCode, PROBLEM_CODES, type ProblemCode } from './codes.js';

export interface FieldError {
  /** JSON path of the offending field, e.g. `/tool_input/page_size`. */
  path: string;
  message: string;
}

export interface AuthorizationLink {
  link: string;
  expiresAt: string | undefined;
}

/** An RFC 9457 problem body as the gateway sends it. */
export interface ProblemBody {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
  request_id?: string;
  retryable?: boolean;
  errors?: FieldError[];
  retry_after_ms?: number;
  upstream?: { status: number; body: unknown };
  authorization_link?: { link: string; expires_at?: string };
  [extension: string]: unknown;
}

export interface HeldApproval {
  id: string;
  /** Where the approval is shown (GET with the gateway token). */
  url: string;
  status: string;
  expiresAt: string;
  /** The policy that holds the call. */
  policy: string;
}

/** A gateway answer that is a problem (`application/problem+json`): every SDK error is one of these. */
export class PorticoError extends Error {
  readonly status: number;
  readonly code: ProblemCode | (string & {});
  readonly title: string;
  readonly detail: string;
  /** Field errors of an `invalid_input` (empty otherwise). */
  readonly errors: FieldError[];
  readonly requestId: string | undefined;
  readonly retryable: boolean;
  /** How long the gateway or provider asked to wait, when it said. */
  readonly retryAfterMs: number | undefined;
  /** A fresh link for the end user when an account is not active. */
  readonly authorizationLink: AuthorizationLink | undefined;
  /** The provider's status and body, for errors that came from the provider. */
  readonly upstream: { status: number; body: unknown } | undefined;
  /**
   * The approval a policy holds the call for (`approval_required`, and the `approval_*` problems of
   * a retry): once approved, execute again with `approvalId: approval.id`.
   */
  readonly approval: HeldApproval | undefined;
  /** The problem body as received. */
  readonly problem: ProblemBody;

  constructor(status: number, problem: ProblemBody, retryAfterHeader?: string | null) {
    const detail = typeof problem.detail === 'string' ? problem.detail : `The gateway answered ${status}.`;
    super(detail);
    this.name = new.target.name;
    this.status = status;
    this.code = typeof problem.code === 'string' ? problem.code : 'unexpected_response';
    this.title = typeof problem.title === 'string' ? problem.title : '';
    this.detail = detail;
    this.errors = Array.isArray(problem.errors) ? problem.errors : [];
    this.requestId = typeof problem.request_id === 'string' ? problem.request_id : undefined;
    this.retryable =
      typeof problem.retryable === 'boolean'
        ? problem.retryable
        : isProblemCode(problem.code) && PROBLEM_CODES[problem.code].retryable;
    this.retryAfterMs =
      typeof problem.retry_after_ms === 'number' ? problem.retry_after_ms : retryAfterMs(retryAfterHeader);
    const link = problem.authorization_link;
    this.authorizationLink =
      link && typeof link.link === 'string' ? { link: link.link, expiresAt: link.expires_at } : undefined;
    this.upstream = problem.upstream;
    this.approval =
      typeof problem.approval_id === 'string'
        ? {
            id: problem.approval_id,
            url: String(problem.approval_url ?? ''),
            status: String(problem.approval_status ?? ''),
            expiresAt: String(problem.expires_at ?? ''),
            policy: String(problem.policy ?? ''),
          }
        : undefined;
    this.problem = problem;
  }
}

/** The network failed before the gateway answered (refused, reset, DNS, aborted). */
export class PorticoConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PorticoConnectionError';
  }
}

function retryAfterMs(header: string | null | undefined): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

type PascalCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Capitalize<Head>}${PascalCase<Tail>}`
  : Capitalize<S>;
/** `invalid_input` → `InvalidInputError`; a code that already ends in `_error` keeps one `Error`. */
export type ErrorClassName<C extends ProblemCode> = C extends `${infer Base}_error`
  ? `${PascalCase<Base>}Error`
  : `${PascalCase<C>}Error`;

export type ProblemErrorClass<C extends ProblemCode> = new (
  status: number,
  problem: ProblemBody,
  retryAfterHeader?: string | null,
) => PorticoError & { readonly code: C };

export function errorClassName<C extends ProblemCode>(code: C): ErrorClassName<C> {
  return `${code
    .replace(/_error$/, '')
    .split('_')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')}Error` as ErrorClassName<C>;
}

function problemClass<C extends ProblemCode>(code: C): ProblemErrorClass<C> {
  const name = errorClassName(code);
  // A computed key gives the class its own name (stack traces, `err.name`).
  return { [name]: class extends PorticoError {} }[name] as unknown as ProblemErrorClass<C>;
}

/** One class per problem code, generated from the list. */
export const ERROR_CLASSES = Object.fromEntries(
  (Object.keys(PROBLEM_CODES) as ProblemCode[]).map((code) => [code, problemClass(code)]),
) as { [C in ProblemCode]: ProblemErrorClass<C> };

/** Builds the error for a problem answer: the class of its code, or `PorticoError` for a code this SDK predates. */
export function problemError(status: number, problem: ProblemBody, retryAfterHeader?: string | null) {
  const Class = isProblemCode(problem.code) ? ERROR_CLASSES[problem.code] : PorticoError;
  return new Class(status, problem, retryAfterHeader);
}

type Instance<C extends ProblemCode> = InstanceType<ProblemErrorClass<C>>;

export const InvalidInputError = ERROR_CLASSES.invalid_input;
export type InvalidInputError = Instance<'invalid_input'>;
export const InvalidJsonError = ERROR_CLASSES.invalid_json;
export type InvalidJsonError = Instance<'invalid_json'>;
export const InvalidPathError = ERROR_CLASSES.invalid_path;
export type InvalidPathError = Instance<'invalid_path'>;
export const MalformedRequestError = ERROR_CLASSES.malformed_request;
export type MalformedRequestError = Instance<'malformed_request'>;
export const RequestTimeoutError = ERROR_CLASSES.request_timeout;
export type RequestTimeoutError = Instance<'request_timeout'>;
export const HeadersTooLargeError = ERROR_CLASSES.headers_too_large;
export type HeadersTooLargeError = Instance<'headers_too_large'>;
export const MissingHeaderError = ERROR_CLASSES.missing_header;
export type MissingHeaderError = Instance<'missing_header'>;
export const UnsupportedMediaTypeError = ERROR_CLASSES.unsupported_media_type;
export type UnsupportedMediaTypeError = Instance<'unsupported_media_type'>;
export const PayloadTooLargeError = ERROR_CLASSES.payload_too_large;
export type PayloadTooLargeError = Instance<'payload_too_large'>;
export const UnauthenticatedError = ERROR_CLASSES.unauthenticated;
export type UnauthenticatedError = Instance<'unauthenticated'>;
export const InvalidClientError = ERROR_CLASSES.invalid_client;
export type InvalidClientError = Instance<'invalid_client'>;
export const UnsupportedGrantTypeError = ERROR_CLASSES.unsupported_grant_type;
export type UnsupportedGrantTypeError = Instance<'unsupported_grant_type'>;
export const NotFoundError = ERROR_CLASSES.not_found;
export type NotFoundError = Instance<'not_found'>;
export const MethodNotAllowedError = ERROR_CLASSES.method_not_allowed;
export type MethodNotAllowedError = Instance<'method_not_allowed'>;
export const ConnectionNotFoundError = ERROR_CLASSES.connection_not_found;
export type ConnectionNotFoundError = Instance<'connection_not_found'>;
export const ConnectionExistsError = ERROR_CLASSES.connection_exists;
export type ConnectionExistsError = Instance<'connection_exists'>;
export const ProviderNotFoundError = ERROR_CLASSES.provider_not_found;
export type ProviderNotFoundError = Instance<'provider_not_found'>;
export const ProviderExistsError = ERROR_CLASSES.provider_exists;
export type ProviderExistsError = Instance<'provider_exists'>;
export const ProviderInUseError = ERROR_CLASSES.provider_in_use;
export type ProviderInUseError = Instance<'provider_in_use'>;
export const ProviderBuiltInError = ERROR_CLASSES.provider_built_in;
export type ProviderBuiltInError = Instance<'provider_built_in'>;
export const LimitReachedError = ERROR_CLASSES.limit_reached;
export type LimitReachedError = Instance<'limit_reached'>;
export const CredentialsInvalidError = ERROR_CLASSES.credentials_invalid;
export type CredentialsInvalidError = Instance<'credentials_invalid'>;
export const AccountNotFoundError = ERROR_CLASSES.account_not_found;
export type AccountNotFoundError = Instance<'account_not_found'>;
export const AccountNotActiveError = ERROR_CLASSES.account_not_active;
export type AccountNotActiveError = Instance<'account_not_active'>;
export const AccountNotFoundLinksRequiredError = ERROR_CLASSES.account_not_found_links_required;
export type AccountNotFoundLinksRequiredError = Instance<'account_not_found_links_required'>;
export const AmbiguousAccountError = ERROR_CLASSES.ambiguous_account;
export type AmbiguousAccountError = Instance<'ambiguous_account'>;
export const UnknownToolError = ERROR_CLASSES.unknown_tool;
export type UnknownToolError = Instance<'unknown_tool'>;
export const ExecutionNotFoundError = ERROR_CLASSES.execution_not_found;
export type ExecutionNotFoundError = Instance<'execution_not_found'>;
export const LinkInvalidError = ERROR_CLASSES.link_invalid;
export type LinkInvalidError = Instance<'link_invalid'>;
export const VerificationNotFoundError = ERROR_CLASSES.verification_not_found;
export type VerificationNotFoundError = Instance<'verification_not_found'>;
export const VerificationExpiredError = ERROR_CLASSES.verification_expired;
export type VerificationExpiredError = Instance<'verification_expired'>;
export const VerificationFailedError = ERROR_CLASSES.verification_failed;
export type VerificationFailedError = Instance<'verification_failed'>;
export const RateLimitedError = ERROR_CLASSES.rate_limited;
export type RateLimitedError = Instance<'rate_limited'>;
export const UpstreamUnauthorizedError = ERROR_CLASSES.upstream_unauthorized;
export type UpstreamUnauthorizedError = Instance<'upstream_unauthorized'>;
export const UpstreamNotFoundError = ERROR_CLASSES.upstream_not_found;
export type UpstreamNotFoundError = Instance<'upstream_not_found'>;
export const UpstreamValidationError = ERROR_CLASSES.upstream_validation;
export type UpstreamValidationError = Instance<'upstream_validation'>;
export const UpstreamConflictError = ERROR_CLASSES.upstream_conflict;
export type UpstreamConflictError = Instance<'upstream_conflict'>;
export const UpstreamForbiddenError = ERROR_CLASSES.upstream_forbidden;
export type UpstreamForbiddenError = Instance<'upstream_forbidden'>;
export const UpstreamRateLimitedError = ERROR_CLASSES.upstream_rate_limited;
export type UpstreamRateLimitedError = Instance<'upstream_rate_limited'>;
export const UpstreamError = ERROR_CLASSES.upstream_error;
export type UpstreamError = Instance<'upstream_error'>;
export const UpstreamTimeoutError = ERROR_CLASSES.upstream_timeout;
export type UpstreamTimeoutError = Instance<'upstream_timeout'>;
export const UpstreamUnavailableError = ERROR_CLASSES.upstream_unavailable;
export type UpstreamUnavailableError = Instance<'upstream_unavailable'>;
export const ServiceUnavailableError = ERROR_CLASSES.service_unavailable;
export type ServiceUnavailableError = Instance<'service_unavailable'>;
export const InternalError = ERROR_CLASSES.internal_error;
export type InternalError = Instance<'internal_error'>;
export const AccountExistsError = ERROR_CLASSES.account_exists;
export type AccountExistsError = Instance<'account_exists'>;
export const McpTokenNotFoundError = ERROR_CLASSES.mcp_token_not_found;
export type McpTokenNotFoundError = Instance<'mcp_token_not_found'>;
export const McpAuthRequestNotFoundError = ERROR_CLASSES.mcp_auth_request_not_found;
export type McpAuthRequestNotFoundError = Instance<'mcp_auth_request_not_found'>;
export const McpAuthRequestExpiredError = ERROR_CLASSES.mcp_auth_request_expired;
export type McpAuthRequestExpiredError = Instance<'mcp_auth_request_expired'>;
export const McpAuthRequestUsedError = ERROR_CLASSES.mcp_auth_request_used;
export type McpAuthRequestUsedError = Instance<'mcp_auth_request_used'>;
export const ToolNotAllowedError = ERROR_CLASSES.tool_not_allowed;
export type ToolNotAllowedError = Instance<'tool_not_allowed'>;
export const InsufficientScopeError = ERROR_CLASSES.insufficient_scope;
export type InsufficientScopeError = Instance<'insufficient_scope'>;
export const ProxyTokenNotFoundError = ERROR_CLASSES.proxy_token_not_found;
export type ProxyTokenNotFoundError = Instance<'proxy_token_not_found'>;
export const ProxyTokenScopeError = ERROR_CLASSES.proxy_token_scope;
export type ProxyTokenScopeError = Instance<'proxy_token_scope'>;
export const PolicyNotFoundError = ERROR_CLASSES.policy_not_found;
export type PolicyNotFoundError = Instance<'policy_not_found'>;
export const ToolsetNotFoundError = ERROR_CLASSES.toolset_not_found;
export type ToolsetNotFoundError = Instance<'toolset_not_found'>;
export const ToolsetExistsError = ERROR_CLASSES.toolset_exists;
export type ToolsetExistsError = Instance<'toolset_exists'>;
export const PolicyExistsError = ERROR_CLASSES.policy_exists;
export type PolicyExistsError = Instance<'policy_exists'>;
export const PolicyDeniedError = ERROR_CLASSES.policy_denied;
export type PolicyDeniedError = Instance<'policy_denied'>;
export const PolicyConstraintError = ERROR_CLASSES.policy_constraint;
export type PolicyConstraintError = Instance<'policy_constraint'>;
export const PolicyBudgetExceededError = ERROR_CLASSES.policy_budget_exceeded;
export type PolicyBudgetExceededError = Instance<'policy_budget_exceeded'>;
export const ApprovalRequiredError = ERROR_CLASSES.approval_required;
export type ApprovalRequiredError = Instance<'approval_required'>;
export const ApprovalPendingError = ERROR_CLASSES.approval_pending;
export type ApprovalPendingError = Instance<'approval_pending'>;
export const ApprovalDeniedError = ERROR_CLASSES.approval_denied;
export type ApprovalDeniedError = Instance<'approval_denied'>;
export const ApprovalExpiredError = ERROR_CLASSES.approval_expired;
export type ApprovalExpiredError = Instance<'approval_expired'>;
export const ApprovalUsedError = ERROR_CLASSES.approval_used;
export type ApprovalUsedError = Instance<'approval_used'>;
export const ApprovalMismatchError = ERROR_CLASSES.approval_mismatch;
export type ApprovalMismatchError = Instance<'approval_mismatch'>;
export const ApprovalNotFoundError = ERROR_CLASSES.approval_not_found;
export type ApprovalNotFoundError = Instance<'approval_not_found'>;
export const WebhookNotFoundError = ERROR_CLASSES.webhook_not_found;
export type WebhookNotFoundError = Instance<'webhook_not_found'>;
export const WebhookDisabledError = ERROR_CLASSES.webhook_disabled;
export type WebhookDisabledError = Instance<'webhook_disabled'>;
export const EventNotFoundError = ERROR_CLASSES.event_not_found;
export type EventNotFoundError = Instance<'event_not_found'>;
export const TriggerNotFoundError = ERROR_CLASSES.trigger_not_found;
export type TriggerNotFoundError = Instance<'trigger_not_found'>;
export const TriggerTypeUnknownError = ERROR_CLASSES.trigger_type_unknown;
export type TriggerTypeUnknownError = Instance<'trigger_type_unknown'>;
export const TriggerExistsError = ERROR_CLASSES.trigger_exists;
export type TriggerExistsError = Instance<'trigger_exists'>;
export const NotImplementedError = ERROR_CLASSES.not_implemented;
export type NotImplementedError = Instance<'not_implemented'>;
export const TlsRequiredError = ERROR_CLASSES.tls_required;
export type TlsRequiredError = Instance<'tls_required'>;
export const InvalidCredentialsError = ERROR_CLASSES.invalid_credentials;
export type InvalidCredentialsError = Instance<'invalid_credentials'>;
export const CsrfFailedError = ERROR_CLASSES.csrf_failed;
export type CsrfFailedError = Instance<'csrf_failed'>;
export const OriginNotAllowedError = ERROR_CLASSES.origin_not_allowed;
export type OriginNotAllowedError = Instance<'origin_not_allowed'>;
export const AdminExistsError = ERROR_CLASSES.admin_exists;
export type AdminExistsError = Instance<'admin_exists'>;
export const LastAdminError = ERROR_CLASSES.last_admin;
export type LastAdminError = Instance<'last_admin'>;
export const ClientNotFoundError = ERROR_CLASSES.client_not_found;
export type ClientNotFoundError = Instance<'client_not_found'>;
