import { ErrorCode, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/** A POST body that is not JSON at all, kept for the endpoint to answer in JSON-RPC. */
export class UnparseableBody {
  constructor(readonly reason: string) {}
}

/**
 * A JSON-RPC error for a request handler to throw: the SDK answers its code, message and data as
 * they are. (The SDK's McpError puts "MCP error <code>: " before the message, on the wire too, and
 * the client's McpError adds its own, so a model read "MCP error -32602: MCP error -32602: …".)
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** A JSON-RPC error answered before the MCP server sees the message, with its HTTP status. */
export interface JsonRpcFault {
  status: number;
  body: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };
}

const fault = (id: string | number | null, code: number, message: string): JsonRpcFault => ({
  status: 400,
  body: { jsonrpc: '2.0', id, error: { code, message } },
});

/**
 * What JSON-RPC 2.0 (§5.1) answers a body the protocol cannot route: unparseable JSON is -32700
 * (parse error); JSON that is not a request, notification or response object (or a batch of them)
 * is -32600 (invalid request), with the request's id when it has a usable one. Both stay JSON-RPC
 * answers: an MCP client reads the error object, not an HTTP problem document.
 */
export function jsonRpcFault(body: unknown): JsonRpcFault | undefined {
  if (body instanceof UnparseableBody) {
    return fault(null, ErrorCode.ParseError, `Parse error: the body is not valid JSON (${body.reason}).`);
  }
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return fault(null, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch.');
  for (const message of messages) {
    if (JSONRPCMessageSchema.safeParse(message).success) continue;
    const id = (message as { id?: unknown } | null)?.id;
    const usable = typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
    return fault(
      usable && !Array.isArray(body) ? (id as string | number) : null,
      ErrorCode.InvalidRequest,
      'Invalid Request: send a JSON-RPC 2.0 object with "jsonrpc": "2.0", a string "method", an optional string or integer "id" and an optional object "params".',
    );
  }
  return undefined;
}
