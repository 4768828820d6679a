import type { Logger } from 'pino';
import type { AccountTokens } from '../accounts/account-tokens.js';
import { sealTokens } from '../accounts/sealed-tokens.js';
import { accountView } from '../accounts/view.js';
import type { ProviderCatalogService } from '../connections/providers.js';
import type { ConnectionService } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import { recordEvent } from '../events/outbox.js';
import {
  buildAuthorizationUrl,
  exchangeAuthorizationCode,
  generatePkce,
  generateState,
  requestedScopes,
  TokenEndpointError,
} from '../oauth/client.js';
import type { ConnectionPlace, ProviderEndpoints } from '../oauth/endpoints.js';
import { fetchUserInfo } from '../oauth/user-info.js';
import type { ProviderDefinition } from '../providers/catalog.js';
import type { Keyring } from '../secrets/keyring.js';
import { REQUEST_CODE_VERIFIER, REQUEST_PENDING_TOKENS } from '../secrets/sealed-columns.js';
import {
  type AccountWithConnection,
  findAccount,
  storeTokens,
  upsertPendingAccount,
} from '../store/accounts.js';
import {
  type AuthorizationRequestRow,
  consumeAuthorizationRequest,
  consumeLink,
  countCredentialEntry,
  endLinkResume,
  findAuthorizationRequest,
  findLink,
  finishVerification,
  holdForVerification,
  insertAuthorizationRequest,
  lockAuthorizationRequest,
  lockLinkTrip,
  wipeUnverifiedTokens,
} from '../store/authorization.js';
import type { ConnectionRow } from '../store/connections.js';
import type { Database } from '../store/db.js';
import { newId, randomBase62 } from '../store/ids.js';
import type { OutboundFetch } from '../upstream/http.js';
import { PATTERN_MAX_INPUT, testPattern } from '../validation/linear-pattern.js';
import type { Branding, BrandingService } from './branding.js';
import { type AuthorizationLink, type AuthorizationLinks, hashToken } from './links.js';
import { type CredentialFormPage, FlowError, type LandingPage } from './pages.js';
import { RedirectAllowlist } from './redirect-allowlist.js';

export type { AuthorizationLink } from './links.js';

export interface CreateLinkInput {
  connection_name: string;
  identifier: string;
  redirect_url?: string;
  state?: string;
  /**
   * Opt-in user verification: after consent the browser goes here with `auth_request_id`, and the
   * account becomes ACTIVE only once the application confirms the identifier (`verify`).
   */
  user_verify_url?: string;
}

export interface VerifyInput {
  auth_request_id: string;
  identifier: string;
}

export interface VerifyResult {
  connected_account: ReturnType<typeof accountView>;
  /** Where the application sends the browser next: the link's redirect_url with the outcome, if any. */
  redirect_url: string | null;
}

/** The token set from the code exchange, kept sealed while the application verifies its user. */
interface HeldTokens {
  accessToken: string;
  refreshToken?: string;
  expiresAt: string | null;
  scopes: string[];
  metadata?: Record<string, unknown>;
}

/** Where the callback sends the browser: the app's redirect_url, a result page, or the credential form again. */
export type CallbackOutcome =
  | { kind: 'redirect'; url: string }
  | { kind: 'form'; form: CredentialFormPage }
  | {
      kind: 'page';
      outcome: 'success' | 'error';
      status: number;
      title: string;
      message: string;
      code?: string;
      branding?: Branding;
    };

export interface AuthorizationDeps {
  db: Database;
  keyring: Keyring;
  logger: Logger;
  connections: ConnectionService;
  accountTokens: AccountTokens;
  links: AuthorizationLinks;
  requestTtlSeconds: number;
  /**
   * Where the callback may send the browser: origins (`https://app.example.com`) or URL prefixes
   * (`https://app.example.com/oauth/`). Empty: any http(s) URL.
   */
  redirectUrlAllowlist: string[];
  endpoints(
    provider: ProviderDefinition,
    connection: ConnectionPlace,
    accountMetadata?: Record<string, unknown>,
  ): ProviderEndpoints;
  providers: ProviderCatalogService;
  branding: BrandingService;
  /** How token, revocation and user-info requests reach the provider (upstream/http.ts OutboundFetch). */
  outboundFetch: OutboundFetch;
  /** Makes sure a sandbox connection's OAuth client (and definition) is registered at its emulator. */
  prepareSandbox(
    connection: ConnectionRow,
    provider: ProviderDefinition,
    clientSecret: string,
  ): Promise<void>;
}

interface FinishOutcome {
  status: 'success' | 'error';
  error?: string;
  message: string;
  title: string;
}

/** What a link opens: the provider's consent screen, or Portico's form for a key or password. */
/**
 * The cookie by which the browser that pressed a link's "Continue" may open it again (say after
 * stopping at the provider's consent page), until it expires or succeeds; scoped to the link's
 * own path, so it names that link only.
 */
export const RESUME_COOKIE = 'portico_link';

export type StartOutcome =
  | { kind: 'redirect'; location: string; bindings: BrowserBinding[] }
  | { kind: 'form'; form: CredentialFormPage; bindings: BrowserBinding[] };

/** What the end user typed into the credential form. */
export interface CredentialSubmission {
  state?: string;
  api_key?: string;
  username?: string;
  password?: string;
}

/** A cookie that binds one trip to the provider (or the link) to the browser that opened the link. */
export interface BrowserBinding {
  name: string;
  value: string;
  /** The callback's path (or the link's): the cookie goes nowhere else. */
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

export function bindingCookieName(requestId: string): string {
  return `portico_auth_${requestId}`;
}

/**
 * The hosted authorization flow: links (single use, expiring, stored hashed), the trip to the
 * provider (state hashed, PKCE verifier sealed) and the callback that exchanges the code and stores
 * the account's tokens.
 */
export class AuthorizationService {
  /** Where links may send the browser: the operator's list plus each environment's own. */
  readonly redirects: RedirectAllowlist;
  /** The application's name and look on the pages end users see, per environment. */
  readonly branding: BrandingService;

  constructor(private readonly deps: AuthorizationDeps) {
    this.redirects = new RedirectAllowlist(deps.db, deps.redirectUrlAllowlist);
    this.branding = deps.branding;
  }

  /** `within`: the connections the caller may reach, for the suggestion when the name is unknown. */
  async createLink(
    environmentId: string,
    input: CreateLinkInput,
    within?: readonly string[] | null,
  ): Promise<AuthorizationLink> {
    if (input.redirect_url !== undefined)
      await this.redirects.check(environmentId, 'redirect_url', input.redirect_url);
    if (input.user_verify_url !== undefined)
      await this.redirects.check(environmentId, 'user_verify_url', input.user_verify_url);
    const connection = await this.deps.connections.get(environmentId, input.connection_name, within);
    const { db } = this.deps;
    return db.transaction(async (tx) => {
      const account = await upsertPendingAccount(tx, environmentId, connection.id, input.identifier);
      const link = await this.deps.links.linkFor(
        account,
        input.redirect_url,
        input.state,
        tx,
        input.user_verify_url,
      );
      if (account.inserted) {
        await recordEvent(db, tx, {
          environmentId,
          type: 'connected_account.created',
          subject: account.id,
          data: accountView(account, connection),
        });
      }
      return link;
    });
  }

  /**
   * GET /connect/{token}: claims the link and returns the provider's authorize URL, with the cookie
   * that binds the trip to this browser (checked at the callback).
   */
  async start(token: string, resumeCookie?: string): Promise<StartOutcome> {
    const tokenHash = hashToken(token);
    const resume = randomBase62(32);
    const link = await consumeLink(this.deps.db, tokenHash, {
      fresh: hashToken(resume),
      presented: resumeCookie ? hashToken(resumeCookie) : undefined,
    });
    if (!link) throw await this.unusableLink(tokenHash);
    const account = await findAccount(this.deps.db, link.account_id);
    if (!account)
      throw new FlowError('link_invalid', 'This link is not valid', 'Its account no longer exists.', 404);
    const connection = await this.deps.connections.getById(account.connection_id);
    const clientSecret = this.deps.connections.clientSecret(connection);
    const provider = await this.deps.providers.resolve(connection.environment_id, connection.provider);
    if (connection.sandbox) await this.deps.prepareSandbox(connection, provider, clientSecret);
    const state = generateState();
    const pkce = provider.oauth?.pkce ? generatePkce() : undefined;
    const requestId = newId('areq');
    const binding = randomBase62(32);
    await insertAuthorizationRequest(this.deps.db, {
      id: requestId,
      state_hash: hashToken(state),
      account_id: account.id,
      connection_id: connection.id,
      code_verifier: pkce
        ? this.deps.keyring.seal(pkce.verifier, { ...REQUEST_CODE_VERIFIER, rowId: requestId })
        : null,
      redirect_url: link.redirect_url,
      caller_state: link.caller_state,
      browser_hash: hashToken(binding),
      user_verify_url: link.user_verify_url,
      expires_at: new Date(Date.now() + this.deps.requestTtlSeconds * 1000),
      link_hash: tokenHash,
    });
    const redirectUri = this.deps.connections.redirectUri(connection.id);
    const browser: BrowserBinding = {
      name: bindingCookieName(requestId),
      value: binding,
      path: new URL(redirectUri).pathname,
      maxAgeSeconds: this.deps.requestTtlSeconds,
      secure: redirectUri.startsWith('https:'),
    };
    // A resuming browser keeps the cookie it has; the first one gets the link's binding.
    const linkBinding: BrowserBinding | undefined =
      link.resume_hash === hashToken(resume)
        ? {
            name: RESUME_COOKIE,
            value: resume,
            path: `/connect/${encodeURIComponent(token)}`,
            maxAgeSeconds: Math.max(1, Math.ceil((link.expires_at.getTime() - Date.now()) / 1000)),
            secure: browser.secure,
          }
        : undefined;
    const bindings = linkBinding ? [browser, linkBinding] : [browser];
    if (!provider.oauth) {
      return {
        kind: 'form',
        form: await this.credentialForm(provider, connection, state),
        bindings,
      };
    }
    if (connection.mcp_server?.registration === 'none') {
      // A server that asks for no authorization: nothing to consent to, so the trip goes straight
      // to the callback, which connects the account (still bound to this browser by its cookie).
      const done = new URL(redirectUri);
      done.searchParams.set('state', state);
      return { kind: 'redirect', location: done.href, bindings };
    }
    const location = buildAuthorizationUrl(provider, this.deps.endpoints(provider, connection), {
      clientId: connection.client_id,
      redirectUri,
      scopes: requestedScopes(provider, connection.scopes),
      state,
      ...(pkce ? { codeChallenge: pkce.challenge } : {}),
    });
    return { kind: 'redirect', location, bindings };
  }

  /**
   * GET (or HEAD) /connect/{token}: what the link will do, spending nothing, so that link previews,
   * mail scanners and prefetches leave it for its person; the page's button (a POST) starts the
   * trip. `formTarget` is the origin the trip continues to (for the page's form-action policy).
   */
  async landing(
    token: string,
    action: string,
    resumeCookie?: string,
  ): Promise<{ page: LandingPage; formTarget: string | undefined }> {
    const tokenHash = hashToken(token);
    const link = await findLink(this.deps.db, tokenHash);
    const resumable =
      link?.resume_hash != null && resumeCookie !== undefined && hashToken(resumeCookie) === link.resume_hash;
    if (!link || (link.used_at && !resumable) || link.expires_at.getTime() <= Date.now())
      throw await this.unusableLink(tokenHash);
    const account = await findAccount(this.deps.db, link.account_id);
    if (!account)
      throw new FlowError('link_invalid', 'This link is not valid', 'Its account no longer exists.', 404);
    const connection = await this.deps.connections.getById(account.connection_id);
    const provider = await this.deps.providers.resolve(connection.environment_id, connection.provider);
    const branding = await this.deps.branding.get(connection.environment_id);
    const formTarget =
      provider.oauth && connection.mcp_server?.registration !== 'none'
        ? new URL(this.deps.endpoints(provider, connection).authorizeUrl).origin
        : undefined;
    return {
      page: {
        providerName: provider.displayName,
        appName: connection.display_name,
        action,
        oauth: Boolean(provider.oauth),
        expiresAt: link.expires_at,
        branding,
      },
      formTarget,
    };
  }

  /** Why a link cannot be used, with what to do next, in its environment's look when known. */
  private async unusableLink(tokenHash: string): Promise<FlowError> {
    const known = await findLink(this.deps.db, tokenHash);
    if (!known)
      return new FlowError(
        'link_invalid',
        'This link is not valid',
        'Ask the application for a new authorization link: copy it whole, links are long.',
        404,
      );
    if (known.credential_entries >= MAX_CREDENTIAL_ENTRIES) return this.lockedLink(known.account_id);
    const error = new FlowError(
      'link_invalid',
      'This link can no longer be used',
      known.used_at
        ? 'It has already been used. Only the browser that first pressed Continue can open it again, until the connection succeeds; if you did not finish connecting, go back to the application and ask it for a new link.'
        : 'It has expired. Go back to the application and ask it for a new authorization link.',
      410,
    );
    const account = await findAccount(this.deps.db, known.account_id);
    if (account) error.branding = await this.deps.branding.get(account.environment_id);
    return error;
  }

  private async credentialForm(
    provider: ProviderDefinition,
    connection: ConnectionRow,
    state: string,
    error?: string,
  ): Promise<CredentialFormPage> {
    const form = provider.form!;
    return {
      branding: await this.deps.branding.get(connection.environment_id),
      status: error ? 400 : 200,
      providerName: provider.displayName,
      appName: connection.display_name,
      kind: provider.auth === 'basic' ? 'basic' : 'api_key',
      labels: { key: form.label, username: form.usernameLabel, password: form.passwordLabel },
      ...(form.help ? { help: form.help } : {}),
      action: new URL(this.deps.connections.redirectUri(connection.id)).pathname,
      state,
      ...(error ? { error } : {}),
      ...(connection.sandbox ? { sandboxHint: sandboxHint(provider) } : {}),
    };
  }

  /**
   * POST to the callback: the end user's API key (or user name and password) from the hosted form.
   * It is checked with the provider's user-info request before anything is stored; a refused entry
   * shows the form again and keeps the trip open until it expires.
   */
  async submitCredentials(
    connectionId: string,
    input: CredentialSubmission,
    cookies: Record<string, string> = {},
  ): Promise<CallbackOutcome> {
    if (!input.state)
      throw new FlowError(
        'state_missing',
        'Authorization failed',
        'The form sent no state. Open the link again.',
      );
    const stateHash = hashToken(input.state);
    const pending = await findAuthorizationRequest(this.deps.db, stateHash);
    if (
      !pending ||
      pending.connection_id !== connectionId ||
      pending.used_at ||
      pending.expires_at.getTime() < Date.now()
    ) {
      const link = pending?.link_hash ? await findLink(this.deps.db, pending.link_hash) : undefined;
      if (link && link.credential_entries >= MAX_CREDENTIAL_ENTRIES)
        throw await this.lockedLink(link.account_id);
      throw new FlowError(
        'state_invalid',
        'Authorization failed',
        'This form has expired or was already used. Start again from the application.',
      );
    }
    this.checkBrowser(pending, cookies);
    const connection = await this.deps.connections.getById(connectionId);
    const provider = await this.deps.providers.resolve(connection.environment_id, connection.provider);
    if (provider.oauth)
      throw new FlowError('state_invalid', 'Authorization failed', 'This connection uses OAuth.');
    const again = async (error: string): Promise<CallbackOutcome> => ({
      kind: 'form',
      form: await this.credentialForm(provider, connection, input.state!, error),
    });
    const form = provider.form!;
    let secret: string;
    if (provider.auth === 'basic') {
      const username = input.username?.trim() ?? '';
      const password = input.password ?? '';
      if (!username || !password)
        return again(`Enter both the ${form.usernameLabel} and the ${form.passwordLabel}.`);
      if (username.includes(':')) return again(`The ${form.usernameLabel} cannot contain ":".`);
      secret = `${username}:${password}`;
    } else {
      secret = input.api_key?.trim() ?? '';
      if (!secret) return again(`Enter the ${form.label}.`);
    }
    // Length and characters first: the format's pattern then runs on bounded text only.
    if (secret.length > PATTERN_MAX_INPUT || [...secret].some((c) => c.charCodeAt(0) < 0x20))
      return again(`That ${form.label} is not valid.`);
    // Each entry is counted on its link before it is checked (the check may ask the provider): past
    // MAX_CREDENTIAL_ENTRIES the link is locked, so one link cannot be used to try keys or to make
    // the provider answer without end.
    const entries = pending.link_hash
      ? await countCredentialEntry(this.deps.db, pending.link_hash, MAX_CREDENTIAL_ENTRIES)
      : 0;
    if (entries === undefined) throw await this.lockTrip(pending, connection);
    const refused = async (error: string): Promise<CallbackOutcome> => {
      if (entries >= MAX_CREDENTIAL_ENTRIES) throw await this.lockTrip(pending, connection);
      return again(error);
    };
    if (provider.auth !== 'basic' && form.pattern && !testPattern(form.pattern, secret))
      return refused(
        `That does not look like a ${provider.displayName} ${form.label}; check it and try again.`,
      );
    const endpoints = this.deps.endpoints(provider, connection);
    let metadata: Record<string, unknown> = {};
    if (endpoints.userInfoUrl) {
      const checked = await fetchUserInfo(provider, endpoints.userInfoUrl, secret, this.deps.outboundFetch);
      if (!checked.ok) {
        this.deps.logger.info(
          { account_id: pending.account_id, provider: provider.key, refused: checked.refused },
          'credentials not accepted',
        );
        return refused(
          checked.refused
            ? `${provider.displayName} did not accept these credentials (${checked.message}). Check them and try again.`
            : `${provider.displayName} could not be asked to check these credentials (${checked.message}). Try again shortly.`,
        );
      }
      metadata = {
        user_info: {
          ...(checked.id ? { id: checked.id } : {}),
          ...(checked.label ? { label: checked.label } : {}),
        },
      };
    }
    const request = await consumeAuthorizationRequest(this.deps.db, stateHash, connectionId);
    if (!request)
      throw new FlowError(
        'state_invalid',
        'Authorization failed',
        'This form was already used. Start again from the application.',
      );
    const account = await findAccount(this.deps.db, request.account_id);
    if (!account)
      throw new FlowError('account_not_found', 'Authorization failed', 'The account no longer exists.', 404);
    return this.authorized(request, account, connection, provider, { accessToken: secret, metadata });
  }

  /** Ends a trip whose link has had its entries: the page that says so. */
  private async lockTrip(request: AuthorizationRequestRow, connection: ConnectionRow): Promise<FlowError> {
    if (request.link_hash) await lockLinkTrip(this.deps.db, request.link_hash, request.id);
    this.deps.logger.warn({ account_id: request.account_id }, 'authorization link locked: too many entries');
    return this.lockedLink(request.account_id, connection.environment_id);
  }

  private async lockedLink(accountId: string, environmentId?: string): Promise<FlowError> {
    const error = new FlowError(
      'link_locked',
      'This link is locked',
      `${MAX_CREDENTIAL_ENTRIES} entries were refused on this link, so it can no longer be used. Go back to the application and ask it for a new authorization link.`,
      429,
    );
    const environment = environmentId ?? (await findAccount(this.deps.db, accountId))?.environment_id;
    if (environment) error.branding = await this.deps.branding.get(environment);
    return error;
  }

  /** A trip finished in another browser than the one that opened the link is someone else's. */
  private checkBrowser(request: AuthorizationRequestRow, cookies: Record<string, string>): void {
    const binding = cookies[bindingCookieName(request.id)];
    if (request.browser_hash !== null && (!binding || hashToken(binding) !== request.browser_hash)) {
      this.deps.logger.warn({ account_id: request.account_id }, 'authorization finished in another browser');
      throw new FlowError(
        'browser_mismatch',
        'Authorization failed',
        'This authorization was started in another browser, so nothing was connected. Open the authorization link again in this browser.',
      );
    }
  }

  /**
   * GET /sso/v1/oauth/{connection_id}/callback; `cookies` are the browser's, to check that the trip
   * ends in the browser that started it.
   */
  async complete(
    connectionId: string,
    query: Record<string, string | undefined>,
    cookies: Record<string, string> = {},
  ): Promise<CallbackOutcome> {
    const { state, code, error } = query;
    if (!state)
      throw new FlowError(
        'state_missing',
        'Authorization failed',
        'The provider sent no state. Start again from the application.',
      );
    const stateHash = hashToken(state);
    const request = await consumeAuthorizationRequest(this.deps.db, stateHash, connectionId);
    if (!request) {
      const known = await findAuthorizationRequest(this.deps.db, stateHash);
      const reason = !known
        ? 'The authorization state is unknown.'
        : known.connection_id !== connectionId
          ? 'The authorization state belongs to another connection.'
          : known.used_at
            ? 'This authorization was already completed.'
            : 'The authorization took too long and expired.';
      throw new FlowError(
        'state_invalid',
        'Authorization failed',
        `${reason} Start again from the application.`,
      );
    }
    // A consent finished in another browser than the one that opened the link is someone else's:
    // an attacker could otherwise have a victim connect their account to the attacker's identifier.
    this.checkBrowser(request, cookies);
    const account = await findAccount(this.deps.db, request.account_id);
    if (!account)
      throw new FlowError('account_not_found', 'Authorization failed', 'The account no longer exists.', 404);
    const connection = await this.deps.connections.getById(connectionId);
    const provider = await this.deps.providers.resolve(connection.environment_id, connection.provider);
    const finish = (outcome: FinishOutcome) => this.finish(request, account, outcome);
    const failed = (code: string, message: string) => this.failed(account, connection, code, message);

    if (error) {
      const denied = error === 'access_denied';
      await failed(
        error,
        denied
          ? 'The user declined access on the consent screen.'
          : `${provider.displayName} reported an error: ${query.error_description ?? error}.`,
      );
      this.deps.logger.info(
        { account_id: account.id, provider: provider.key, error },
        'authorization not granted',
      );
      return finish({
        status: 'error',
        error,
        title: denied ? 'Access was not granted' : 'Authorization failed',
        message: denied
          ? `You declined access to ${provider.displayName}. Nothing was connected; you can close this window.`
          : `${provider.displayName} reported an error: ${query.error_description ?? error}.`,
      });
    }
    if (connection.mcp_server?.registration === 'none')
      return this.authorized(request, account, connection, provider, { accessToken: '', metadata: {} });
    if (!code)
      throw new FlowError(
        'code_missing',
        'Authorization failed',
        'The provider sent neither a code nor an error.',
      );

    const verifier = request.code_verifier
      ? this.deps.keyring.open(request.code_verifier, { ...REQUEST_CODE_VERIFIER, rowId: request.id })
      : undefined;
    const endpoints = this.deps.endpoints(provider, connection);
    let tokens: Awaited<ReturnType<typeof exchangeAuthorizationCode>>;
    try {
      tokens = await exchangeAuthorizationCode(
        provider,
        endpoints,
        { clientId: connection.client_id, clientSecret: this.deps.connections.clientSecret(connection) },
        {
          code,
          redirectUri: this.deps.connections.redirectUri(connection.id),
          ...(verifier ? { codeVerifier: verifier } : {}),
        },
        this.deps.outboundFetch,
      );
    } catch (err) {
      if (!(err instanceof TokenEndpointError)) throw err;
      this.deps.logger.warn(
        { account_id: account.id, provider: provider.key, kind: err.kind, reason: err.message },
        'code exchange failed',
      );
      await failed(
        err.providerError ?? err.kind,
        `The authorization code exchange failed (${err.kind}): ${err.message}`,
      );
      const message =
        err.kind === 'invalid_client'
          ? `${provider.displayName} rejected the connection's client credentials (${err.message}). The operator must correct client_id / client_secret of connection "${connection.name}"; nothing was connected.`
          : err.kind === 'transient'
            ? `${provider.displayName} could not be reached to finish the authorization (${err.message}). Please try again.`
            : `${provider.displayName} refused to finish the authorization (${err.message}). Please start again.`;
      return finish({
        status: 'error',
        error: err.providerError ?? err.kind,
        title: 'Authorization failed',
        message,
      });
    }

    if (provider.userInfo) {
      // A label the operator recognises the account by; the consent stands without it.
      const info = await fetchUserInfo(
        provider,
        this.deps.endpoints(provider, connection, tokens.metadata).userInfoUrl!,
        tokens.accessToken,
        this.deps.outboundFetch,
      );
      if (info.ok)
        tokens.metadata = {
          ...tokens.metadata,
          user_info: { ...(info.id ? { id: info.id } : {}), ...(info.label ? { label: info.label } : {}) },
        };
    }
    return this.authorized(request, account, connection, provider, tokens);
  }

  /** Where the browser goes with the outcome: the app's redirect_url, or a result page. */
  private async finish(
    request: AuthorizationRequestRow,
    account: AccountWithConnection,
    outcome: FinishOutcome,
  ): Promise<CallbackOutcome> {
    if (outcome.status === 'success' && request.link_hash)
      await endLinkResume(this.deps.db, request.link_hash);
    const url =
      request.redirect_url &&
      (await this.redirectTo(account.environment_id, account.id, request.redirect_url, {
        status: outcome.status,
        connected_account_id: account.id,
        error: outcome.error,
        state: request.caller_state,
      }));
    if (url) return { kind: 'redirect', url };
    return {
      kind: 'page',
      outcome: outcome.status,
      status: outcome.status === 'success' ? 200 : 400,
      title: outcome.title,
      message: outcome.message,
      ...(outcome.error ? { code: outcome.error } : {}),
      branding: await this.deps.branding.get(account.environment_id),
    };
  }

  /** The application learns of a failed authorization as the user sees it (no account changes). */
  private failed(account: AccountWithConnection, connection: ConnectionRow, code: string, message: string) {
    return recordEvent(this.deps.db, this.deps.db, {
      environmentId: account.environment_id,
      type: 'connected_account.authorization_failed',
      subject: account.id,
      data: { ...accountView(account, connection), reason: { code, message } },
    });
  }

  /**
   * The provider granted a credential (a token set from the code exchange, or a key the end user
   * entered): it is held for the application's verification of its user, or stored at once.
   */
  private async authorized(
    request: AuthorizationRequestRow,
    account: AccountWithConnection,
    connection: ConnectionRow,
    provider: ProviderDefinition,
    tokens: {
      accessToken: string;
      refreshToken?: string;
      expiresIn?: number;
      scopes?: string[];
      metadata: Record<string, unknown>;
    },
  ): Promise<CallbackOutcome> {
    const finish = (outcome: FinishOutcome) => this.finish(request, account, outcome);
    const failed = (code: string, message: string) => this.failed(account, connection, code, message);
    const expiresAt = tokens.expiresIn ? new Date(Date.now() + tokens.expiresIn * 1000) : null;
    const scopes = tokens.scopes ?? (provider.oauth ? requestedScopes(provider, connection.scopes) : []);
    if (request.user_verify_url) {
      const verifyUrl = await this.redirectTo(account.environment_id, account.id, request.user_verify_url, {
        auth_request_id: request.id,
        connected_account_id: account.id,
        state: request.caller_state,
      });
      if (!verifyUrl) {
        const message =
          'The application’s page for verifying you is not a place this environment allows any more, so nothing was connected. Ask the application for a new authorization link.';
        await failed('user_verify_url_not_allowed', message);
        return finish({
          status: 'error',
          error: 'user_verify_url_not_allowed',
          title: 'Authorization failed',
          message,
        });
      }
      return this.awaitVerification(request, account.id, verifyUrl, {
        accessToken: tokens.accessToken,
        ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        expiresAt: expiresAt?.toISOString() ?? null,
        scopes,
        ...(tokens.metadata ? { metadata: tokens.metadata } : {}),
      });
    }
    const { db } = this.deps;
    await db.transaction(async (tx) => {
      await storeTokens(
        tx,
        account.id,
        {
          ...sealTokens(this.deps.keyring, account.id, tokens),
          expiresAt,
          scopes,
          metadata: tokens.metadata,
        },
        { refreshed: false },
      );
      const authorized = await findAccount(tx, account.id);
      if (!authorized) return;
      await recordEvent(db, tx, {
        environmentId: authorized.environment_id,
        type: 'connected_account.authorized',
        subject: authorized.id,
        data: accountView(authorized, connection),
      });
    });
    await this.deps.accountTokens.invalidate(account.id);
    this.deps.logger.info({ account_id: account.id, provider: provider.key }, 'account authorized');
    return finish({
      status: 'success',
      title: 'Connected',
      message: `Your ${provider.displayName} account is connected${connection.display_name ? ` to ${connection.display_name}` : ''}. You can close this window and return to ${connection.display_name ?? 'the application'}.`,
    });
  }

  /**
   * The consent succeeded but the application asked to verify its user: the token set is held
   * sealed on the request (never on the account, so nothing can use it yet) and the browser goes to
   * the application's user_verify_url with the request's id.
   */
  private async awaitVerification(
    request: AuthorizationRequestRow,
    accountId: string,
    verifyUrl: string,
    tokens: HeldTokens,
  ): Promise<CallbackOutcome> {
    const sealed = this.deps.keyring.seal(JSON.stringify(tokens), {
      ...REQUEST_PENDING_TOKENS,
      rowId: request.id,
    });
    await holdForVerification(
      this.deps.db,
      request.id,
      sealed,
      new Date(Date.now() + this.deps.requestTtlSeconds * 1000),
    );
    this.deps.logger.info(
      { account_id: accountId, auth_request_id: request.id },
      'awaiting user verification',
    );
    return { kind: 'redirect', url: verifyUrl };
  }

  /**
   * The application has authenticated its user and asserts their identifier: when it is the one
   * the link was made for, the held token set becomes the account's and the account is ACTIVE. A
   * mismatch drops the held tokens (it is what a consent completed by the wrong person looks like)
   * and stores nothing; the user starts again from a new link.
   */
  async verify(
    environmentId: string,
    input: VerifyInput,
    reaches: (connectionName: string) => boolean = () => true,
  ): Promise<VerifyResult> {
    const { db, keyring } = this.deps;
    const notFound = (why: string) =>
      new Problem(
        'verification_not_found',
        `Authorization request ${input.auth_request_id} ${why} Use the auth_request_id your user_verify_url received, with this environment's credentials.`,
        { errors: [{ path: '/auth_request_id', message: why }] },
      );
    const outcome = await db.transaction(async (tx) => {
      const request = await lockAuthorizationRequest(tx, input.auth_request_id);
      if (!request || request.environment_id !== environmentId || !request.user_verify_url)
        throw notFound('does not exist or does not await verification.');
      if (request.verified_at) throw notFound('was already verified.');
      if (!request.used_at) throw notFound('has not been consented to yet.');
      if (!request.pending_tokens && !request.expired)
        throw notFound('was refused (an identifier did not match); the user must authorize again.');
      if (request.expired) {
        await finishVerification(tx, request.id, false);
        return { kind: 'expired' as const };
      }
      const account = await findAccount(tx, request.account_id);
      if (!account) throw notFound('belongs to an account that no longer exists.');
      // A caller limited to some connections (auth/access.ts decides) is told nothing of another's requests.
      if (!reaches(account.connection_name)) throw notFound('does not exist or does not await verification.');
      // Read in this transaction: the embedded store has one connection, held by it.
      const connection = { name: account.connection_name, provider: account.provider };
      await finishVerification(tx, request.id, account.identifier === input.identifier);
      if (account.identifier !== input.identifier) {
        await recordEvent(db, tx, {
          environmentId,
          type: 'connected_account.authorization_failed',
          subject: account.id,
          data: {
            ...accountView(account, connection),
            reason: {
              code: 'verification_failed',
              message: 'The application verified another user than the one the link was made for.',
            },
          },
        });
        return { kind: 'mismatch' as const, accountId: account.id };
      }
      const held = JSON.parse(
        keyring.open(request.pending_tokens!, { ...REQUEST_PENDING_TOKENS, rowId: request.id }),
      ) as HeldTokens;
      await storeTokens(
        tx,
        account.id,
        {
          ...sealTokens(keyring, account.id, held),
          expiresAt: held.expiresAt ? new Date(held.expiresAt) : null,
          scopes: held.scopes,
          ...(held.metadata ? { metadata: held.metadata } : {}),
        },
        { refreshed: false },
      );
      const authorized = (await findAccount(tx, account.id))!;
      const view = accountView(authorized, connection);
      await recordEvent(db, tx, {
        environmentId,
        type: 'connected_account.authorized',
        subject: authorized.id,
        data: view,
      });
      return { kind: 'verified' as const, view, request };
    });
    if (outcome.kind === 'expired')
      throw new Problem(
        'verification_expired',
        `Authorization request ${input.auth_request_id} was not verified within ${this.deps.requestTtlSeconds} s of the consent (PORTICO_AUTH_REQUEST_TTL), so nothing was connected. Send the user a new authorization link.`,
      );
    if (outcome.kind === 'mismatch') {
      this.deps.logger.warn(
        { account_id: outcome.accountId },
        'user verification refused: identifier mismatch',
      );
      throw new Problem(
        'verification_failed',
        `The identifier does not match the one authorization request ${input.auth_request_id} was made for, so nothing was connected and the request is spent. Verify with the identifier of the user your application has signed in; if it is right, that user must open a new authorization link.`,
        { errors: [{ path: '/identifier', message: 'does not match the authorization request' }] },
      );
    }
    await this.deps.accountTokens.invalidate(outcome.view.id);
    this.deps.logger.info({ account_id: outcome.view.id }, 'account authorized after user verification');
    const redirectUrl =
      outcome.request.redirect_url &&
      (await this.redirectTo(environmentId, outcome.view.id, outcome.request.redirect_url, {
        status: 'success',
        connected_account_id: outcome.view.id,
        state: outcome.request.caller_state,
      }));
    return { connected_account: outcome.view, redirect_url: redirectUrl || null };
  }

  /**
   * `target` with the outcome in its query, when the environment still allows it; undefined when it
   * does not (its allow-list was tightened after the link was made, or the link predates the check
   * of URLs) or anything else goes wrong. The caller then shows the result page (or answers
   * redirect_url null): the account's state is settled by then, so it must never become a 500.
   */
  private async redirectTo(
    environmentId: string,
    accountId: string,
    target: string,
    params: Record<string, string | null | undefined>,
  ): Promise<string | undefined> {
    try {
      if (!(await this.redirects.permits(environmentId, target))) {
        this.deps.logger.warn({ account_id: accountId }, 'link redirect no longer allowed; not redirecting');
        return undefined;
      }
      const url = new URL(target);
      for (const [name, value] of Object.entries(params))
        if (value !== null && value !== undefined) url.searchParams.set(name, value);
      return url.toString();
    } catch (error) {
      this.deps.logger.warn({ account_id: accountId, err: error }, 'link redirect failed; not redirecting');
      return undefined;
    }
  }

  /** Wipes held token sets whose verification window has passed; how many. */
  async pruneUnverified(): Promise<number> {
    return wipeUnverifiedTokens(this.deps.db);
  }
}

/** Credentials one link's form may be sent before the link is locked. */
export const MAX_CREDENTIAL_ENTRIES = 10;

/** Keys a provider's key format may take in the sandbox, tried against its pattern in order. */
const SANDBOX_KEY_EXAMPLES = ['sandbox_key', 'sk_test_sandbox1', 'sk-sandbox1', 'key_sandbox1', 'sandbox1'];

/**
 * What the sandbox's emulator accepts on a provider's credential form, as the form says it: a
 * password or key beginning `sandbox_`, or, where the provider's key format forbids that prefix,
 * a key of that format containing "sandbox" (the format is checked first).
 */
function sandboxHint(provider: ProviderDefinition): string {
  const form = provider.form!;
  if (provider.auth === 'basic')
    return `Sandbox: any ${form.usernameLabel}, with a ${form.passwordLabel} beginning sandbox_ (for example sandbox_secret), is accepted.`;
  if (!form.pattern)
    return `Sandbox: any ${form.label} beginning sandbox_ (for example sandbox_key) is accepted.`;
  const pattern = form.pattern;
  const example = SANDBOX_KEY_EXAMPLES.find((k) => testPattern(pattern, k) && /sandbox/i.test(k));
  return `Sandbox: a ${form.label} in ${provider.displayName}'s own format that contains "sandbox"${example ? ` (for example ${example})` : ''} is accepted.`;
}
