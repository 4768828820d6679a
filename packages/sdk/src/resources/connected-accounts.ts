import { camelKeys, snakeKeys } from '../http/case.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import type {
  AccountStatus,
  AuthorizationLinkResult,
  ConnectedAccount,
  ImportAccountInput,
} from '../types.js';
import { segment } from './connections.js';

type Raw = Record<string, unknown>;

export interface AuthorizationLinkInput {
  connectionName: string;
  identifier: string;
  /** Where the browser goes after the consent (`?status=success&connected_account_id=…&state=…`). */
  redirectUrl?: string;
  state?: string;
  /**
   * Opt-in user verification: after the consent the browser goes here with `auth_request_id`
   * (and `connected_account_id`, `state`); the account becomes ACTIVE once you call `verify`.
   */
  userVerifyUrl?: string;
}

export interface VerifyUserInput {
  /** The `auth_request_id` your `userVerifyUrl` received. */
  authRequestId: string;
  /** The identifier of the user your application has signed in. */
  identifier: string;
}

export interface VerifyUserResult {
  connectedAccount: ConnectedAccount;
  /** Where to send the browser next (the link's redirectUrl with the outcome), or null. */
  redirectUrl: string | null;
}

export interface ListAccountsOptions {
  connectionName?: string;
  identifier?: string;
  status?: AccountStatus;
  pageSize?: number;
}

export interface AccountWithLink {
  account: ConnectedAccount;
  /** A link for the end user to authorize, when the account is not ACTIVE. */
  authorizationLink: AuthorizationLinkResult | undefined;
}

export class ConnectedAccounts {
  constructor(private readonly transport: Transport) {}

  async authorizationLink(input: AuthorizationLinkInput): Promise<AuthorizationLinkResult> {
    const raw = await this.transport.json<Raw>({
      method: 'POST',
      path: '/api/v1/connected-accounts/authorization-link',
      json: {
        connection_name: input.connectionName,
        identifier: input.identifier,
        redirect_url: input.redirectUrl,
        state: input.state,
        user_verify_url: input.userVerifyUrl,
      },
    });
    return camelKeys(raw);
  }

  /**
   * Confirms who completed a consent made with `userVerifyUrl`: when `identifier` is the one the
   * link was made for, the account becomes ACTIVE. A mismatch throws `VerificationFailedError` and
   * connects nothing; a late call `VerificationExpiredError`.
   */
  async verify(input: VerifyUserInput): Promise<VerifyUserResult> {
    const raw = await this.transport.json<{ connected_account: Raw; redirect_url: string | null }>({
      method: 'POST',
      path: '/api/v1/connected-accounts/verify',
      json: { auth_request_id: input.authRequestId, identifier: input.identifier },
    });
    return {
      connectedAccount: camelKeys<ConnectedAccount>(raw.connected_account),
      redirectUrl: raw.redirect_url,
    };
  }

  /**
   * Creates (or updates) the end user's account from a credential the application already holds,
   * ACTIVE at once. Unless `verify` is false, the gateway first checks it with the provider's
   * user-info request where there is one: a refused credential throws `CredentialsInvalidError`.
   */
  async import(input: ImportAccountInput): Promise<ConnectedAccount> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'POST',
        path: '/api/v1/connected-accounts/import',
        // Top-level keys only: metadata goes as given.
        json: snakeKeys(input),
      }),
    );
  }

  list(options: ListAccountsOptions = {}): PageList<ConnectedAccount> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: Raw[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/connected-accounts',
        query: {
          connection_name: options.connectionName,
          identifier: options.identifier,
          status: options.status,
          page_size: options.pageSize,
          page_token: pageToken,
        },
      });
      return {
        data: raw.data.map((a) => camelKeys<ConnectedAccount>(a)),
        nextPageToken: raw.next_page_token,
      };
    });
  }

  async get(id: string): Promise<ConnectedAccount> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/connected-accounts/${segment(id)}` }),
    );
  }

  /** Revokes the grant at the provider where it can and wipes the tokens: the account becomes DISCONNECTED. */
  async delete(id: string): Promise<ConnectedAccount> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'DELETE', path: `/api/v1/connected-accounts/${segment(id)}` }),
    );
  }

  /**
   * The end user's account on a connection, created (PENDING_AUTH) if there is none yet; when it
   * is not ACTIVE, a fresh authorization link comes with it to send to the user.
   */
  async getOrCreate(input: AuthorizationLinkInput): Promise<AccountWithLink> {
    const { data } = await this.list({
      connectionName: input.connectionName,
      identifier: input.identifier,
      pageSize: 1,
    });
    const existing = data[0];
    if (existing?.status === 'ACTIVE') return { account: existing, authorizationLink: undefined };
    // Making a link creates the account when it is missing, and never changes an existing one's status.
    const link = await this.authorizationLink(input);
    return { account: await this.get(link.connectedAccountId), authorizationLink: link };
  }
}
