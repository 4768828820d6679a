import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { AccountService } from '../accounts/service.js';
import { newAccountRefusal, requireConnection, requireRecord } from '../auth/access.js';
import { Problem } from '../errors/problem.js';
import type { AccountListing } from '../store/accounts.js';
import type { ToolEngine } from '../tools/engine.js';
import type { AnyTool } from '../tools/types.js';
import { clientOf, environmentOf, grantOf } from './authenticate.js';
import type { ToolSchema, ToolService } from './descriptors.js';
import {
  checkExecute,
  checkIdentifier,
  checkProvider,
  pageOf,
  present,
  refuseScopes,
  refuseUnsafe,
} from './requests.js';

export interface ToolDeps {
  engine: ToolEngine;
  accounts: AccountService;
}

/** gRPC metadata naming the approval an approved call's retry spends (see the approval_required detail). */
export const APPROVAL_ID_HEADER = 'x-portico-approval-id';

/** Struct fields hold JSON only (no undefined, no Dates): a tool's result, as JSON reads it. */
const asStruct = (value: unknown): JsonObject => JSON.parse(JSON.stringify(value ?? {})) as JsonObject;

/** A tool in Scalekit's shape: its definition is Portico's json_schema format of it. */
function toolMessage(
  engine: ToolEngine,
  tool: AnyTool,
  environmentId: string,
): MessageInitShape<typeof ToolSchema> {
  return {
    id: tool.name,
    provider: tool.provider,
    definition: asStruct(engine.describe(tool.name, 'json_schema', environmentId)),
    metadata: asStruct({ annotations: tool.annotations }),
    tags: [tool.provider],
  };
}

/** scalekit.v1.tools.ToolService over the ToolEngine (same validation, accounts and execution records as REST). */
export function toolMethods(deps: ToolDeps): Partial<ServiceImpl<typeof ToolService>> {
  const { engine, accounts } = deps;

  /** The identifier's ACTIVE accounts (at most 100), optionally on the named connections only. */
  const activeAccounts = async (ctx: HandlerContext, identifier: string, connections: string[] = []) => {
    for (const name of connections) requireConnection(grantOf(ctx), name);
    const page = await accounts.listRows(environmentOf(ctx), {
      identifier,
      status: 'ACTIVE',
      page_size: 100,
      connection_names: grantOf(ctx).connectionNames,
    });
    return page.rows.filter((row) => !connections.length || connections.includes(row.connection_name));
  };
  /** The environment's tools (its remote MCP servers' made current first): the registry's listing. */
  const listed = async (ctx: HandlerContext, filter: { provider?: string } = {}) => {
    const environmentId = environmentOf(ctx);
    await engine.prepare(environmentId);
    return engine.list({ ...filter, environmentId });
  };
  const toolsOf = async (ctx: HandlerContext, rows: AccountListing[]) => {
    const providers = new Set(rows.map((r) => r.provider));
    return (await listed(ctx)).filter((t) => providers.has(t.provider));
  };

  return {
    async executeTool(req, ctx) {
      refuseScopes(req);
      const fields = present({
        tool_name: req.toolName,
        identifier: req.identifier,
        connector: req.connector,
        connected_account_id: req.connectedAccountId,
      });
      refuseUnsafe(fields);
      const call = checkExecute(fields);
      let identifier = call.identifier;
      let connectionName = call.connector;
      if (call.connected_account_id) {
        const account = requireRecord(
          grantOf(ctx),
          await accounts.get(environmentOf(ctx), call.connected_account_id),
          () => accounts.notFound(call.connected_account_id!),
        );
        if (
          (identifier && identifier !== account.identifier) ||
          (connectionName && connectionName !== account.connection_name)
        ) {
          throw new Problem(
            'invalid_input',
            `Connected account ${account.id} belongs to identifier "${account.identifier}" on connection "${account.connection_name}"; send connected_account_id alone or matching identifier and connector.`,
            {
              errors: [{ path: '/connected_account_id', message: 'does not match identifier or connector' }],
            },
          );
        }
        identifier = account.identifier;
        connectionName = account.connection_name;
      }
      if (!identifier) {
        throw new Problem(
          'invalid_input',
          'Name the end user: send identifier (optionally with connector), or connected_account_id.',
          {
            errors: [{ path: '/identifier', message: 'is required when connected_account_id is not given' }],
          },
        );
      }
      // The SDK's request has no field for it: an approved call's retry names its approval in metadata.
      const approvalId = ctx.requestHeader.get(APPROVAL_ID_HEADER)?.trim();
      const result = await engine.execute(
        environmentOf(ctx),
        {
          ...(approvalId ? { approval_id: approvalId } : {}),
          tool_name: call.tool_name,
          identifier,
          ...(connectionName ? { connection_name: connectionName } : {}),
          ...(req.params ? { tool_input: req.params as Record<string, unknown> } : {}),
        },
        {
          id: `client:${clientOf(ctx)}`,
          connectionNames: grantOf(ctx).connectionNames,
          refuseNewAccount: newAccountRefusal(grantOf(ctx)),
        },
      );
      return { data: asStruct(result.data), executionId: result.execution_id };
    },

    async listTools(req, ctx) {
      const filter = req.filter;
      if (filter) refuseScopes(filter);
      let tools = await listed(
        ctx,
        filter?.provider ? { provider: checkProvider(filter.provider, '/filter/provider') } : {},
      );
      if (filter?.toolName.length) tools = tools.filter((t) => filter.toolName.includes(t.name));
      if (filter?.query) {
        const words = filter.query.toLowerCase().split(/\s+/).filter(Boolean);
        tools = tools.filter((t) =>
          words.every((w) => `${t.name} ${t.description}`.toLowerCase().includes(w)),
        );
      }
      if (filter?.identifier || filter?.connector || filter?.connectedAccountId) {
        // Only the tools the named end user can run now (an ACTIVE account for their provider).
        let rows: AccountListing[];
        if (filter.connectedAccountId) {
          const id = filter.connectedAccountId;
          const account = requireRecord(grantOf(ctx), await accounts.get(environmentOf(ctx), id), () =>
            accounts.notFound(id),
          );
          rows = account.status === 'ACTIVE' ? [account] : [];
        } else {
          const { identifier } = checkIdentifier({ identifier: filter.identifier });
          rows = await activeAccounts(ctx, identifier, filter.connector ? [filter.connector] : []);
        }
        const allowed = new Set((await toolsOf(ctx, rows)).map((t) => t.name));
        tools = tools.filter((t) => allowed.has(t.name));
      }
      const { page, next } = pageOf(tools, req.pageSize, req.pageToken);
      return {
        ...(filter?.summary
          ? { toolNames: page.map((t) => t.name) }
          : { tools: page.map((t) => toolMessage(engine, t, environmentOf(ctx))) }),
        nextPageToken: next,
        totalSize: tools.length,
      };
    },

    async listScopedTools(req, ctx) {
      const { identifier } = checkIdentifier({ identifier: req.identifier });
      const providers = (req.filter?.providers ?? []).map((p, i) =>
        checkProvider(p, `/filter/providers/${i}`),
      );
      const toolNames = req.filter?.toolNames ?? [];
      const all = await listed(ctx);
      const scoped = (await activeAccounts(ctx, identifier, req.filter?.connectionNames)).flatMap((account) =>
        all
          .filter((t) => t.provider === account.provider)
          .filter(
            (t) =>
              (!providers.length || providers.includes(t.provider)) &&
              (!toolNames.length || toolNames.includes(t.name)),
          )
          .map((tool) => ({
            tool: toolMessage(engine, tool, environmentOf(ctx)),
            identifier,
            connectedAccountId: account.id,
          })),
      );
      const { page, next } = pageOf(scoped, req.pageSize, req.pageToken);
      return { tools: page, nextPageToken: next, totalSize: scoped.length };
    },

    async listAvailableTools(req, ctx) {
      const { identifier } = checkIdentifier({ identifier: req.identifier });
      const tools = await toolsOf(ctx, await activeAccounts(ctx, identifier));
      const { page, next } = pageOf(tools, req.pageSize, req.pageToken);
      return {
        tools: page.map((t) => toolMessage(engine, t, environmentOf(ctx))),
        nextPageToken: next,
        totalSize: tools.length,
      };
    },
  };
}
