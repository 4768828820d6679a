/**
 * The one place where Portico's error codes live. Every error response is RFC 9457
 * `application/problem+json`, built from a `Problem` thrown anywhere in the service.
 */

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

interface CodeInfo {
  status: number;
  title: string;
  retryable?: boolean;
}

export const ERROR_CODES = {
  invalid_input: { status: 400, title: 'Invalid input' },
  invalid_json: { status: 400, title: 'Malformed JSON body' },
  invalid_path: { status: 400, title: 'Invalid proxy path' },
  malformed_request: { status: 400, title: 'Malformed HTTP request' },
  request_timeout: { status: 408, title: 'Request not received in time' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  missing_header: { status: 400, title: 'Missing required header' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  invalid_client: { status: 401, title: 'Invalid client credentials' },
  unsupported_grant_type: { status: 400, title: 'Unsupported grant type' },
  invalid_credentials: { status: 401, title: 'Wrong username or password' },
  csrf_failed: { status: 403, title: 'CSRF token missing or wrong' },
  origin_not_allowed: { status: 403, title: 'Origin not allowed' },
  admin_exists: { status: 409, title: 'Admin account already exists' },
  last_admin: { status: 409, title: 'The last admin cannot be removed' },
  client_not_found: { status: 404, title: 'Gateway client not found' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  connection_not_found: { status: 404, title: 'Connection not found' },
  connection_exists: { status: 409, title: 'Connection already exists' },
  provider_not_found: { status: 404, title: 'Provider not found' },
  provider_exists: { status: 409, title: 'Provider already exists' },
  provider_in_use: { status: 409, title: 'Provider is used by connections' },
  provider_built_in: { status: 409, title: 'Built-in providers cannot be changed' },
  limit_reached: { status: 409, title: 'The environment holds as many as it may' },
  credentials_invalid: { status: 400, title: 'The provider refused the credentials' },
  account_exists: { status: 409, title: 'Connected account already exists' },
  account_not_found: { status: 404, title: 'Connected account not found' },
  account_not_active: { status: 409, title: 'Connected account is not active' },
  account_not_found_links_required: {
    status: 403,
    title: 'No connected account, and creating one needs the links scope',
  },
  ambiguous_account: { status: 409, title: 'Several connected accounts match' },
  unknown_tool: { status: 404, title: 'Unknown tool' },
  execution_not_found: { status: 404, title: 'Execution not found' },
  mcp_token_not_found: { status: 404, title: 'MCP token not found' },
  mcp_auth_request_not_found: { status: 404, title: 'MCP authorization request not found' },
  mcp_auth_request_expired: { status: 410, title: 'MCP authorization request expired' },
  mcp_auth_request_used: { status: 409, title: 'MCP authorization request already answered' },
  tool_not_allowed: { status: 403, title: 'Tool not allowed for this token' },
  insufficient_scope: { status: 403, title: 'The client lacks the scope this needs' },
  proxy_token_not_found: { status: 404, title: 'Proxy token not found' },
  proxy_token_scope: { status: 403, title: 'Outside the proxy token’s connection and identifier' },
  policy_not_found: { status: 404, title: 'Policy not found' },
  policy_exists: { status: 409, title: 'Policy already exists' },
  toolset_not_found: { status: 404, title: 'Toolset not found' },
  toolset_exists: { status: 409, title: 'Toolset already exists' },
  policy_denied: { status: 403, title: 'A policy does not allow this tool' },
  policy_constraint: { status: 403, title: 'A policy does not allow this input' },
  policy_budget_exceeded: { status: 429, title: 'A policy’s call budget is spent', retryable: true },
  approval_required: { status: 403, title: 'The call waits for approval' },
  approval_pending: { status: 409, title: 'The approval is not decided yet', retryable: true },
  approval_denied: { status: 403, title: 'The approval was denied' },
  approval_expired: { status: 410, title: 'The approval expired' },
  approval_used: { status: 409, title: 'The approved call has already run' },
  approval_mismatch: { status: 409, title: 'The approval is for another call' },
  approval_not_found: { status: 404, title: 'Approval not found' },
  webhook_not_found: { status: 404, title: 'Webhook endpoint not found' },
  webhook_disabled: { status: 409, title: 'Webhook endpoint is disabled' },
  event_not_found: { status: 404, title: 'Event not found' },
  trigger_not_found: { status: 404, title: 'Trigger not found' },
  trigger_type_unknown: { status: 400, title: 'Unknown trigger type' },
  trigger_exists: { status: 409, title: 'Trigger already exists' },
  link_invalid: { status: 400, title: 'Authorization link is invalid, used or expired' },
  verification_not_found: { status: 404, title: 'No authorization awaits this verification' },
  verification_expired: { status: 410, title: 'The verification window has passed' },
  verification_failed: { status: 403, title: 'The identifier does not match the authorization' },
  not_implemented: { status: 501, title: 'Not implemented by Portico' },
  tls_required: { status: 400, title: 'This port speaks TLS' },
  rate_limited: { status: 429, title: 'Too many requests', retryable: true },
  upstream_unauthorized: { status: 502, title: 'Provider rejected the credential' },
  upstream_not_found: { status: 404, title: 'Provider could not find the resource' },
  upstream_validation: { status: 400, title: 'Provider rejected the request' },
  upstream_conflict: { status: 409, title: 'Provider reported a conflict' },
  upstream_forbidden: { status: 403, title: 'Provider refused the operation' },
  upstream_rate_limited: { status: 429, title: 'Provider rate limit reached', retryable: true },
  upstream_error: { status: 502, title: 'Provider error', retryable: true },
  upstream_timeout: { status: 504, title: 'Provider timed out', retryable: true },
  upstream_unavailable: { status: 503, title: 'Provider unreachable', retryable: true },
  service_unavailable: { status: 503, title: 'Service unavailable', retryable: true },
  internal_error: { status: 500, title: 'Internal error', retryable: true },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  /** JSON path of the offending field, e.g. `/tool_input/page_size`. */
  path: string;
  message: string;
}

export interface ProblemOptions {
  errors?: FieldError[];
  retryable?: boolean;
  retryAfterMs?: number;
  upstream?: { status: number; body: unknown };
  /** Overrides the code's default HTTP status (e.g. an upstream 4xx passed through as is). */
  status?: number;
  headers?: Record<string, string>;
  /** Extra members of the problem body (e.g. `authorization_link`). */
  extensions?: Record<string, unknown>;
  /** The error behind it, for the log (never shown to the caller). */
  cause?: unknown;
}

export class Problem extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string;
  readonly options: ProblemOptions;

  constructor(code: ErrorCode, detail: string, options: ProblemOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'Problem';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.detail = detail;
    this.options = options;
  }

  toBody(requestId: string): ProblemBody {
    const info: CodeInfo = ERROR_CODES[this.code];
    const body: ProblemBody = {
      type: problemType(this.code),
      title: info.title,
      status: this.status,
      code: this.code,
      detail: this.detail,
      request_id: requestId,
      retryable: this.options.retryable ?? info.retryable ?? false,
    };
    if (this.options.errors?.length) body.errors = this.options.errors;
    if (this.options.retryAfterMs !== undefined) body.retry_after_ms = this.options.retryAfterMs;
    if (this.options.upstream) body.upstream = this.options.upstream;
    return { ...body, ...this.options.extensions };
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  request_id: string;
  retryable: boolean;
  errors?: FieldError[];
  retry_after_ms?: number;
  upstream?: { status: number; body: unknown };
  [extension: string]: unknown;
}

export function problemType(code: ErrorCode): string {
  return `https://portico.dev/problems/${code.replaceAll('_', '-')}`;
}

export function invalidInput(detail: string, errors?: FieldError[]): Problem {
  return new Problem('invalid_input', detail, errors ? { errors } : {});
}
