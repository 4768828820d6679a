import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { ImportAccountBody } from '../accounts/schemas.js';
import { ListAccountsQuery } from '../accounts/schemas.js';
import type { AccountService } from '../accounts/service.js';
import { listFilter, reachOf, requireConnection, requireRecord } from '../auth/access.js';
import type { AuthorizationService } from '../authorization/service.js';
import { Problem } from '../errors/problem.js';
import { findBuiltInProvider } from '../providers/catalog.js';
import type { AccountListing, AccountStatus } from '../store/accounts.js';
import { compileValidator } from '../validation/validator.js';
import { environmentOf, grantOf } from './authenticate.js';
import {
  type ConnectedAccountService,
  ConnectorStatus,
  ConnectorType,
  type CreateConnectedAccount,
} from './descriptors.js';
import {
  type AccountRefFields,
  accountRef,
  checkLinkOptions,
  checkProvider,
  checkVerify,
  present,
  refuseScopes,
  refuseUnsafe,
} from './requests.js';

const STATUS: Record<AccountStatus, ConnectorStatus> = {
  PENDING_AUTH: ConnectorStatus.PENDING_AUTH,
  ACTIVE: ConnectorStatus.ACTIVE,
  EXPIRED: ConnectorStatus.EXPIRED,
  DISCONNECTED: ConnectorStatus.DISCONNECTED,
};

const CONNECTOR_TYPE = {
  oauth2: ConnectorType.OAUTH,
  api_key: ConnectorType.API_KEY,
  basic: ConnectorType.BASIC_AUTH,
} as const;

const checkListQuery = compileValidator<ListAccountsQuery>(ListAccountsQuery);

const stamp = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

/**
 * A Portico account in Scalekit's shape: connector is the connection name, the provider is
 * Portico's key. Provider tokens never leave Portico: the authorization details carry the granted
 * scopes only.
 */
export function accountMessage(row: AccountListing) {
  return {
    id: row.id,
    identifier: row.identifier,
    connector: row.connection_name,
    connectionId: row.connection_id,
    provider: row.provider,
    status: STATUS[row.status],
    authorizationType: CONNECTOR_TYPE[findBuiltInProvider(row.provider)?.auth ?? 'oauth2'],
    authorizationDetails: { details: { case: 'oauthToken' as const, value: { scopes: row.scopes } } },
    tokenExpiresAt: stamp(row.token_expires_at),
    updatedAt: stamp(row.updated_at),
    lastUsedAt: stamp(row.last_used_at),
  };
}

/**
 * The credential a Create/UpdateConnectedAccount carries, as an import: an OAuth token (access
 * and/or refresh token, scopes) or static auth (`api_key`, or `username` and `password`);
 * api_config becomes provider facts kept with the account. Undefined when the message carries no
 * credential (the SDK's get-or-create sends an empty OAuth token): the account then waits for the
 * user's consent through a link.
 */
function importedCredential(
  account: Pick<CreateConnectedAccount, 'authorizationDetails' | 'apiConfig'> | undefined,
): Omit<ImportAccountBody, 'connection_name' | 'identifier'> | undefined {
  const details = account?.authorizationDetails?.details;
  const metadata =
    account?.apiConfig && Object.keys(account.apiConfig).length ? { ...account.apiConfig } : undefined;
  if (details?.case === 'oauthToken') {
    const { accessToken, refreshToken, scopes, domain } = details.value;
    if (!accessToken && !refreshToken) return metadata ? refuseConfigOnly() : undefined;
    return {
      ...(accessToken ? { access_token: accessToken } : {}),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      ...(scopes.length ? { scopes } : {}),
      ...(metadata || domain ? { metadata: { ...metadata, ...(domain ? { domain } : {}) } } : {}),
    };
  }
  if (details?.case === 'staticAuth') {
    const fields = (details.value.details ?? {}) as Record<string, unknown>;
    const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined);
    const apiKey = text('api_key') ?? text('apiKey') ?? text('token');
    return {
      ...(apiKey ? { api_key: apiKey } : {}),
      ...(text('username') ? { username: text('username') } : {}),
      ...(text('password') ? { password: text('password') } : {}),
      ...(metadata ? { metadata } : {}),
    };
  }
  if (details?.case !== undefined) {
    throw new Problem(
      'not_implemented',
      `authorization_details.${details.case} is not supported by Portico; send an oauth_token or static_auth.`,
      {
        errors: [
          { path: '/connected_account/authorization_details', message: 'is not supported by Portico' },
        ],
      },
    );
  }
  return metadata ? refuseConfigOnly() : undefined;
}

function refuseConfigOnly(): never {
  throw new Problem(
    'invalid_input',
    'api_config without a credential: send it together with authorization_details (an oauth_token or static_auth).',
    { errors: [{ path: '/connected_account/api_config', message: 'needs authorization_details' }] },
  );
}

export interface ConnectedAccountDeps {
  accounts: AccountService;
  authorization: AuthorizationService;
}

/** scalekit.v1.connected_accounts.ConnectedAccountService over AccountService and AuthorizationService. */
export function connectedAccountMethods(
  deps: ConnectedAccountDeps,
): Partial<ServiceImpl<typeof ConnectedAccountService>> {
  const { accounts, authorization } = deps;
  /** The account a request names, by id or by connector and identifier, within the client's reach. */
  const find = async (ctx: HandlerContext, ref: AccountRefFields) => {
    if ('id' in ref) {
      return requireRecord(grantOf(ctx), await accounts.get(environmentOf(ctx), ref.id), () =>
        accounts.notFound(ref.id),
      );
    }
    requireConnection(grantOf(ctx), ref.connector);
    return accounts.getByRef(environmentOf(ctx), ref.connector, ref.identifier);
  };

  return {
    async listConnectedAccounts(req, ctx) {
      refuseScopes(req);
      if (req.query) {
        throw new Problem(
          'not_implemented',
          'Portico does not search accounts by free text; remove query and filter by connector or identifier.',
          {
            errors: [{ path: '/query', message: 'is not supported by Portico' }],
          },
        );
      }
      if (req.connectionNames.length > 1) {
        throw new Problem(
          'not_implemented',
          'Portico filters by one connection at a time; send one name in connection_names, or connector.',
          {
            errors: [{ path: '/connection_names', message: 'must hold at most one name' }],
          },
        );
      }
      const filter = present({
        connection_name: req.connector || req.connectionNames[0],
        identifier: req.identifier,
        page_token: req.pageToken,
        page_size: req.pageSize,
      });
      refuseUnsafe({ ...filter, provider: req.provider });
      const query = checkListQuery(filter);
      const page = await accounts.listRows(environmentOf(ctx), {
        ...query,
        connection_names: listFilter(grantOf(ctx), query.connection_name),
        ...(req.provider ? { provider: checkProvider(req.provider, '/provider') } : {}),
      });
      return {
        connectedAccounts: page.rows.map(accountMessage),
        nextPageToken: page.nextPageToken ?? '',
        // Portico pages by cursor and does not count: the size of this page.
        totalSize: page.rows.length,
      };
    },

    async getConnectedAccountAuth(req, ctx) {
      return { connectedAccount: accountMessage(await find(ctx, accountRef(req))) };
    },

    async createConnectedAccount(req, ctx) {
      const ref = accountRef(req);
      if ('id' in ref)
        throw new Problem('invalid_input', 'Send connector and identifier; an id is assigned by Portico.');
      requireConnection(grantOf(ctx), ref.connector);
      const credential = importedCredential(req.connectedAccount);
      const row = credential
        ? await accounts.importCredentials(environmentOf(ctx), {
            ...credential,
            connection_name: ref.connector,
            identifier: ref.identifier,
          })
        : await accounts.create(environmentOf(ctx), ref.connector, ref.identifier);
      return { connectedAccount: accountMessage(row) };
    },

    async updateConnectedAccount(req, ctx) {
      const row = await find(ctx, accountRef(req));
      const credential = importedCredential(req.connectedAccount);
      if (!credential) return { connectedAccount: accountMessage(row) };
      const updated = await accounts.importCredentials(environmentOf(ctx), {
        ...credential,
        connection_name: row.connection_name,
        identifier: row.identifier,
      });
      return { connectedAccount: accountMessage(updated) };
    },

    async deleteConnectedAccount(req, ctx) {
      const row = await find(ctx, accountRef(req));
      await accounts.disconnect(environmentOf(ctx), row.id);
      return {};
    },

    async getMagicLinkForConnectedAccount(req, ctx) {
      const ref = accountRef(req);
      const options = present({ state: req.state, user_verify_url: req.userVerifyUrl });
      refuseUnsafe(options);
      checkLinkOptions(options);
      const named = 'id' in ref ? await find(ctx, ref) : undefined;
      if (!named) requireConnection(grantOf(ctx), (ref as { connector: string }).connector);
      const link = await authorization.createLink(environmentOf(ctx), {
        connection_name: named?.connection_name ?? (ref as { connector: string }).connector,
        identifier: named?.identifier ?? (ref as { identifier: string }).identifier,
        // After consent the browser goes to user_verify_url; the account waits for VerifyConnectedAccountUser.
        ...(options.user_verify_url ? { user_verify_url: options.user_verify_url } : {}),
        ...(options.state ? { state: options.state } : {}),
      });
      return { link: link.link, expiry: timestampFromDate(new Date(link.expires_at)) };
    },

    async verifyConnectedAccountUser(req, ctx) {
      const fields = { auth_request_id: req.authRequestId, identifier: req.identifier };
      refuseUnsafe(fields);
      const result = await authorization.verify(
        environmentOf(ctx),
        checkVerify(fields),
        reachOf(grantOf(ctx)),
      );
      return { postUserVerifyRedirectUrl: result.redirect_url ?? '' };
    },
  };
}
