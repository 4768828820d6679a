/**
 * Every problem `code` the gateway answers, with its HTTP status and whether it is worth retrying.
 * The SDK cannot import the gateway at run time, so the list is repeated here; a test compares it
 * with the gateway's own list, so the two cannot drift apart.
 */
export const PROBLEM_CODES = {
  invalid_input: { status: 400, retryable: false },
  invalid_json: { status: 400, retryable: false },
  invalid_path: { status: 400, retryable: false },
  malformed_request: { status: 400, retryable: false },
  request_timeout: { status: 408, retryable: false },
  headers_too_large: { status: 431, retryable: false },
  missing_header: { status: 400, retryable: false },
  unsupported_media_type: { status: 415, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  unauthenticated: { status: 401, retryable: false },
  invalid_client: { status: 401, retryable: false },
  unsupported_grant_type: { status: 400, retryable: false },
  invalid_credentials: { status: 401, retryable: false },
  csrf_failed: { status: 403, retryable: false },
  admin_exists: { status: 409, retryable: false },
  client_not_found: { status: 404, retryable: false },
  not_found: { status: 404, retryable: false },
  method_not_allowed: { status: 405, retryable: false },
  connection_not_found: { status: 404, retryable: false },
  connection_exists: { status: 409, retryable: false },
  provider_not_found: { status: 404, retryable: false },
  provider_exists: { status: 409, retryable: false },
  provider_in_use: { status: 409, retryable: false },
  provider_built_in: { status: 409, retryable: false },
  credentials_invalid: { status: 400, retryable: false },
  account_exists: { status: 409, retryable: false },
  account_not_found: { status: 404, retryable: false },
  account_not_active: { status: 409, retryable: false },
  ambiguous_account: { status: 409, retryable: false },
  unknown_tool: { status: 404, retryable: false },
  execution_not_found: { status: 404, retryable: false },
  mcp_token_not_found: { status: 404, retryable: false },
  tool_not_allowed: { status: 403, retryable: false },
  webhook_not_found: { status: 404, retryable: false },
  webhook_disabled: { status: 409, retryable: false },
  event_not_found: { status: 404, retryable: false },
  link_invalid: { status: 400, retryable: false },
  verification_not_found: { status: 404, retryable: false },
  verification_expired: { status: 410, retryable: false },
  verification_failed: { status: 403, retryable: false },
  not_implemented: { status: 501, retryable: false },
  tls_required: { status: 400, retryable: false },
  rate_limited: { status: 429, retryable: true },
  upstream_unauthorized: { status: 502, retryable: false },
  upstream_not_found: { status: 404, retryable: false },
  upstream_validation: { status: 400, retryable: false },
  upstream_conflict: { status: 409, retryable: false },
  upstream_forbidden: { status: 403, retryable: false },
  upstream_rate_limited: { status: 429, retryable: true },
  upstream_error: { status: 502, retryable: true },
  upstream_timeout: { status: 504, retryable: true },
  upstream_unavailable: { status: 503, retryable: true },
  service_unavailable: { status: 503, retryable: true },
  internal_error: { status: 500, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

export function isProblemCode(code: unknown): code is ProblemCode {
  return typeof code === 'string' && Object.hasOwn(PROBLEM_CODES, code);
}
