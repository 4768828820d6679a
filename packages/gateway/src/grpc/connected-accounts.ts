import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { ListAccountsQuery } from '../accounts/schemas.js';
import type { AccountService } from '../accounts/service.js';
import type { AuthorizationService } from '../authorization/service.js';
import { Problem } from '../errors/problem.js';
import type { AccountStatus, AccountWithConnection } from '../store/accounts.js';
import { compileValidator } from '../validation/validator.js';
import { environmentOf } from './authenticate.js';
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

const checkListQuery = compileValidator<ListAccountsQuery>(ListAccountsQuery);

const stamp = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

/**
 * A Portico account in Scalekit's shape: connector is the connection name, the provider is
 * Portico's key. Provider tokens never leave Portico: the authorization details carry the granted
 * scopes only.
 */
export function accountMessage(row: AccountWithConnection) {
  return {
    id: row.id,
    identifier: row.identifier,
    connector: row.connection_name,
    connectionId: row.connection_id,
    provider: row.provider,
    status: STATUS[row.status],
    authorizationType: ConnectorType.OAUTH,
    authorizationDetails: { details: { case: 'oauthToken' as const, value: { scopes: row.scopes } } },
    tokenExpiresAt: stamp(row.token_expires_at),
    updatedAt: stamp(row.updated_at),
    lastUsedAt: stamp(row.last_used_at),
  };
}

/**
 * Portico obtains provider credentials only from the user's consent; an empty OAuth token (what
 * the SDK's get-or-create sends) is fine, credentials to import are not.
 */
function refuseImportedCredentials(
  account: Pick<CreateConnectedAccount, 'authorizationDetails' | 'apiConfig'> | undefined,
  method: string,
): void {
  const details = account?.authorizationDetails?.details;
  const oauth = details?.case === 'oauthToken' ? details.value : undefined;
  const carriesCredentials =
    (details?.case !== undefined && details.case !== 'oauthToken') ||
    Boolean(oauth?.accessToken || oauth?.refreshToken || oauth?.domain);
  const apiConfig = account?.apiConfig && Object.keys(account.apiConfig).length > 0;
  if (carriesCredentials || apiConfig) {
    throw new Problem(
      'not_implemented',
      `${method}: Portico does not import provider credentials or api_config; the user connects through an authorization link (GetMagicLinkForConnectedAccount). Send the account without authorization_details tokens.`,
      {
        errors: [
          {
            path: carriesCredentials
              ? '/connected_account/authorization_details'
              : '/connected_account/api_config',
            message: 'is not supported by Portico',
          },
        ],
      },
    );
  }
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
  const find = (ctx: HandlerContext, ref: AccountRefFields) =>
    'id' in ref
      ? accounts.get(environmentOf(ctx), ref.id)
      : accounts.getByRef(environmentOf(ctx), ref.connector, ref.identifier);

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
      const page = await accounts.listRows(environmentOf(ctx), {
        ...checkListQuery(filter),
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
      refuseImportedCredentials(req.connectedAccount, 'CreateConnectedAccount');
      const row = await accounts.create(environmentOf(ctx), ref.connector, ref.identifier);
      return { connectedAccount: accountMessage(row) };
    },

    async updateConnectedAccount(req, ctx) {
      const row = await find(ctx, accountRef(req));
      refuseImportedCredentials(req.connectedAccount, 'UpdateConnectedAccount');
      return { connectedAccount: accountMessage(row) };
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
      const named = 'id' in ref ? await accounts.get(environmentOf(ctx), ref.id) : undefined;
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
      const result = await authorization.verify(environmentOf(ctx), checkVerify(fields));
      return { postUserVerifyRedirectUrl: result.redirect_url ?? '' };
    },
  };
}
