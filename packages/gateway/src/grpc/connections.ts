import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { listFilter, reachesConnection } from '../auth/access.js';
import { ListConnectionsQuery } from '../connections/schemas.js';
import type { ConnectionService as Connections } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import type { ConnectionRow } from '../store/connections.js';
import { compileValidator } from '../validation/validator.js';
import { environmentOf, grantOf } from './authenticate.js';
import {
  type ConnectionService,
  ConnectionStatus,
  ConnectionType,
  type ListConnectionSchema,
} from './descriptors.js';
import { present, refuseUnsafe } from './requests.js';

const checkListQuery = compileValidator<ListConnectionsQuery>(ListConnectionsQuery);

/** A Portico connection in Scalekit's list shape: key_id is the connection name, provider_key Portico's provider. */
function listed(row: ConnectionRow): MessageInitShape<typeof ListConnectionSchema> {
  return {
    id: row.id,
    type: ConnectionType.OAUTH,
    status: ConnectionStatus.COMPLETED,
    enabled: true,
    providerKey: row.provider,
    keyId: row.name,
    uiButtonTitle: row.display_name ?? '',
    createdAt: timestampFromDate(row.created_at),
  };
}

const SSO_ONLY = 'Portico connections are OAuth connections to providers, not organizations’ SSO connections';

/** scalekit.v1.connections.ConnectionService: Portico's connections, read-only. */
export function connectionMethods(connections: Connections): Partial<ServiceImpl<typeof ConnectionService>> {
  return {
    async listAppConnections(req, ctx) {
      if (req.query) {
        throw new Problem(
          'not_implemented',
          'Portico does not search connections by free text; remove query and filter by provider.',
          {
            errors: [{ path: '/query', message: 'is not supported by Portico' }],
          },
        );
      }
      const query = present({
        provider: req.provider?.toLowerCase(),
        page_token: req.pageToken,
        page_size: req.pageSize,
      });
      refuseUnsafe(query);
      const page = await connections.list(environmentOf(ctx), {
        ...checkListQuery(query),
        names: listFilter(grantOf(ctx)),
      });
      return {
        connections: page.rows.map(listed),
        nextPageToken: page.nextPageToken ?? '',
        totalSize: page.rows.length,
      };
    },

    async listConnections(req, ctx) {
      if (req.organizationId || req.domain) {
        throw new Problem('not_implemented', `${SSO_ONLY}: list them without organization_id or domain.`, {
          errors: [
            {
              path: req.organizationId ? '/organization_id' : '/domain',
              message: 'is not supported by Portico',
            },
          ],
        });
      }
      const page = await connections.list(environmentOf(ctx), {
        page_size: 100,
        names: listFilter(grantOf(ctx)),
      });
      return { connections: page.rows.map(listed) };
    },

    async getConnection(req, ctx) {
      if (req.organizationId) {
        throw new Problem('not_implemented', `${SSO_ONLY}: send the connection id without organization_id.`, {
          errors: [{ path: '/organization_id', message: 'is not supported by Portico' }],
        });
      }
      refuseUnsafe({ id: req.id });
      const row = /^conn_[0-9A-Za-z]{1,60}$/.test(req.id)
        ? await connections.getById(req.id).catch(() => undefined)
        : undefined;
      if (!row || row.environment_id !== environmentOf(ctx) || !reachesConnection(grantOf(ctx), row.name)) {
        throw new Problem(
          'connection_not_found',
          `No connection has id "${req.id}"; list them with ListAppConnections.`,
        );
      }
      return {
        connection: {
          id: row.id,
          type: ConnectionType.OAUTH,
          status: ConnectionStatus.COMPLETED,
          enabled: true,
          uiButtonTitle: row.display_name ?? '',
          createTime: timestampFromDate(row.created_at),
          updateTime: timestampFromDate(row.updated_at),
        },
      };
    },
  };
}
