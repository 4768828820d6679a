import { Code, ConnectError } from '@connectrpc/connect';
import { ERROR_CODES, type ErrorCode, Problem } from '../errors/problem.js';
import { ErrorInfoSchema } from './descriptors.js';

/**
 * Problems as gRPC statuses, in the one place. The SDK's exception classes and retries key on the
 * status: UNAUTHENTICATED makes it fetch a new gateway token and retry once, UNAVAILABLE retries
 * with backoff, NOT_FOUND drives its get-or-create, and an `ErrorInfo` whose `error_code` is
 * `TOOL_ERROR` is never retried and comes out as its Tool* exception classes.
 */
const BY_STATUS: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  408: Code.DeadlineExceeded,
  409: Code.AlreadyExists,
  413: Code.ResourceExhausted,
  415: Code.InvalidArgument,
  429: Code.ResourceExhausted,
  431: Code.ResourceExhausted,
  500: Code.Internal,
  501: Code.Unimplemented,
  502: Code.Unavailable,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

/** Codes whose HTTP status says less than gRPC can. */
const BY_CODE: Partial<Record<ErrorCode, Code>> = {
  // 409 over REST, but nothing already exists: the account must be authorized (again) first.
  account_not_active: Code.FailedPrecondition,
  ambiguous_account: Code.FailedPrecondition,
  // The provider refused the user's credential (a 502 over REST); only ever a tool error, so the
  // SDK does not take it for its own token and re-authenticate.
  upstream_unauthorized: Code.Unauthenticated,
  upstream_conflict: Code.Aborted,
  // 410 over REST: the user must authorize again; retrying the call cannot help.
  verification_expired: Code.FailedPrecondition,
  // A person must decide first (or decided, or the decision lapsed): no retry of the SDK helps.
  approval_required: Code.FailedPrecondition,
  approval_pending: Code.FailedPrecondition,
  approval_expired: Code.FailedPrecondition,
};

export function grpcCode(code: ErrorCode): Code {
  return BY_CODE[code] ?? BY_STATUS[ERROR_CODES[code].status] ?? Code.Unknown;
}

/** What a tool's provider (or the user's account there) did, as opposed to a bad call. */
export function isToolFailure(code: ErrorCode): boolean {
  return code.startsWith('upstream_') || code === 'account_not_active';
}

/**
 * The gRPC error for a problem: the status by code, the problem's detail as the message, and an
 * ErrorInfo carrying the stable code, the field violations, the request id, and for a tool's
 * provider failure `TOOL_ERROR` with the execution id (in `grpc-status-details-bin`).
 */
export function problemToConnectError(problem: Problem, requestId: string, tool: boolean): ConnectError {
  const toolError = tool && isToolFailure(problem.code);
  const extensions = problem.options.extensions ?? {};
  const link = (extensions.authorization_link as { link?: string } | undefined)?.link;
  const executionId = typeof extensions.execution_id === 'string' ? extensions.execution_id : '';
  const errors = problem.options.errors ?? [];
  return new ConnectError(problem.detail, grpcCode(problem.code), undefined, [
    {
      desc: ErrorInfoSchema,
      value: {
        errorCode: toolError ? 'TOOL_ERROR' : problem.code,
        requestInfo: { requestId, servingData: problem.code },
        ...(errors.length
          ? {
              validationErrorInfo: {
                fieldViolations: errors.map((e) => ({
                  field: e.path,
                  description: e.message,
                  constraint: '',
                })),
              },
            }
          : {}),
        ...(toolError
          ? { toolErrorInfo: { executionId, toolErrorCode: problem.code, toolErrorMessage: problem.detail } }
          : {}),
        ...(link ? { helpInfo: { links: [{ description: 'authorization_link', url: link }] } } : {}),
      },
    },
  ]);
}

/** Any error thrown by a handler, as what the caller may see (never a stack or a secret). */
export function toConnectError(error: unknown, requestId: string, tool: boolean): ConnectError {
  if (error instanceof Problem) return problemToConnectError(error, requestId, tool);
  if (error instanceof ConnectError) return error;
  return problemToConnectError(
    new Problem('internal_error', `Portico failed unexpectedly; report request ${requestId} if it persists.`),
    requestId,
    false,
  );
}
