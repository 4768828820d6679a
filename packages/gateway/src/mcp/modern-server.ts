import {
  type CallToolResult,
  createMcpHandler,
  type ListToolsResult,
  type McpHttpHandler,
  Server,
} from '@modelcontextprotocol/server';
import type { McpScope } from '../auth/mcp-tokens.js';
import { type McpServerDeps, type McpSession, mcpHandlers } from './server.js';

/** The revisions the v2 SDK serves here (its per-request era, without initialize). */
export const MODERN_REVISIONS = ['2026-07-28'] as const;

/**
 * One end user's MCP server for the 2026-07-28 revision, on the v2 SDK: the same tools and calls
 * as the 2025-era server (mcpHandlers), carried by the SDK's per-request handler. The handler is
 * built per HTTP request, like the server, and is modern-only: 2025-era requests never reach it
 * (the endpoint routes them to the v1 server, which also keeps their GET event stream).
 *
 * Its `notify` reaches only the subscriptions/listen stream this request opens, if it is one:
 * so list changes go to the one user (and toolset) whose stream it is, never to everyone's.
 */
export function createModernMcpHandler(
  deps: McpServerDeps,
  scope: McpScope,
  requestId: string,
  session: McpSession = {},
): McpHttpHandler {
  return createMcpHandler(
    () => {
      const handlers = mcpHandlers(deps, scope, requestId, session);
      const server = new Server(handlers.info, {
        capabilities: { tools: { listChanged: true } },
        instructions: handlers.instructions,
      });
      // The shared handlers are typed by the v1 SDK, whose JSON Schema type is looser than v2's
      // JSON value type; the objects themselves are the same JSON.
      server.setRequestHandler(
        'tools/list',
        async (request) => (await handlers.listTools(request.params?.cursor)) as ListToolsResult,
      );
      server.setRequestHandler(
        'tools/call',
        async (request) => (await handlers.callTool(request.params)) as CallToolResult,
      );
      return server;
    },
    {
      legacy: 'reject',
      onerror: (error) => deps.logger.debug({ err: error }, 'MCP (2026-07-28) request refused or failed'),
    },
  );
}

export { isLegacyRequest } from '@modelcontextprotocol/server';
