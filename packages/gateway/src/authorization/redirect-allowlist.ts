import { Problem } from '../errors/problem.js';
import type { Database } from '../store/db.js';
import { findEnvironment, setRedirectUrlAllowlist } from '../store/environments.js';

/** An environment's settings as the API shows them. */
export interface EnvironmentView {
  id: string;
  name: string;
  /** This environment's own entries, editable through the API. */
  redirect_url_allowlist: string[];
  /** PORTICO_REDIRECT_URL_ALLOWLIST: applies to every environment, set by the operator. */
  global_redirect_url_allowlist: string[];
}

export const MAX_ALLOWLIST_ENTRIES = 50;

/**
 * What is wrong with `value` as a place to send a browser, or undefined when it is an absolute
 * http(s) URL with a valid host and port. A JSON-schema `uri` accepts hosts such as `a%2fb.example`
 * or `app.example.com%40evil.example` and ports above 65535, which no browser can follow; a
 * user name or password in the authority is how a URL is made to look like another site's.
 */
function redirectUrlFault(value: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value)) return 'must not contain spaces or control characters';
  const scheme = /^https?:\/\//i.exec(value);
  if (!scheme) return 'must be an absolute URL starting with http:// or https://';
  // The authority as written (WHATWG URL also ends it at a backslash), before any decoding.
  const authority = /^[^/\\?#]*/.exec(value.slice(scheme[0].length))![0];
  // WHATWG URL would read `https:///x` as https://x/: the host must be written where it belongs.
  if (!authority) return 'must have a host';
  if (authority.includes('@')) return 'must not contain a user name or password (nothing before an "@")';
  if (authority.includes('%')) return 'must have a host without percent-escapes';
  const port = /^(?:\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(authority)?.[1];
  if (port && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535))
    return 'must have a port from 1 to 65535';
  try {
    if (!new URL(value).hostname) return 'must have a host';
  } catch {
    return 'must have a valid host name (letters, digits, "-" and "." only, or an IP address)';
  }
  return undefined;
}

/** Throws `invalid_input` naming `field` unless `value` is a valid http(s) URL (redirectUrlFault). */
function checkRedirectUrl(field: string, value: string): void {
  const fault = redirectUrlFault(value);
  if (!fault) return;
  throw new Problem(
    'invalid_input',
    `${field} ${fault}: give the absolute http(s) URL your application receives the browser at, e.g. https://app.example.com/connected.`,
    { errors: [{ path: `/${field}`, message: fault }] },
  );
}

/**
 * An entry as it is compared: an origin alone stays an origin (`https://app.example.com`), anything
 * longer is a prefix of origin + path. Undefined when it is not an http(s) URL.
 */
export function normalizeAllowlistEntry(entry: string): string | undefined {
  if (redirectUrlFault(entry)) return undefined;
  const url = new URL(entry);
  if (url.search || url.hash) return undefined;
  return /^https?:\/\/[^/]+\/?$/i.test(entry) ? url.origin : `${url.origin}${url.pathname}`;
}

function allows(entries: string[], target: string): boolean {
  const url = new URL(target);
  const place = `${url.origin}${url.pathname}`;
  return entries.some((entry) =>
    /^https?:\/\/[^/]+$/.test(entry) ? url.origin === entry : place.startsWith(entry),
  );
}

/**
 * Where an environment's authorization links may send the browser (`redirect_url`,
 * `user_verify_url`): the operator's global list plus the environment's own. With neither set,
 * any http(s) URL is accepted; once either has entries, only their places are.
 */
export class RedirectAllowlist {
  constructor(
    private readonly db: Database,
    private readonly global: string[],
  ) {}

  async view(environmentId: string): Promise<EnvironmentView> {
    const env = await findEnvironment(this.db, environmentId);
    if (!env) throw new Problem('not_found', `Environment ${environmentId} no longer exists.`);
    return {
      id: env.id,
      name: env.name,
      redirect_url_allowlist: env.redirect_url_allowlist ?? [],
      global_redirect_url_allowlist: this.global,
    };
  }

  async update(environmentId: string, entries: string[]): Promise<EnvironmentView> {
    const normalized: string[] = [];
    entries.forEach((entry, i) => {
      const value = normalizeAllowlistEntry(entry);
      if (!value)
        throw new Problem(
          'invalid_input',
          `redirect_url_allowlist entry "${entry}" is not an http(s) origin or URL prefix; use e.g. https://app.example.com or https://app.example.com/oauth/.`,
          {
            errors: [
              {
                path: `/redirect_url_allowlist/${i}`,
                message: 'must be an http(s) URL without query, fragment or credentials',
              },
            ],
          },
        );
      if (!normalized.includes(value)) normalized.push(value);
    });
    await setRedirectUrlAllowlist(this.db, environmentId, normalized);
    return this.view(environmentId);
  }

  /**
   * Throws `invalid_input` naming `field` when `url` is not a valid http(s) URL or is outside the
   * environment's places.
   */
  async check(environmentId: string, field: string, url: string): Promise<void> {
    checkRedirectUrl(field, url);
    const entries = await this.entries(environmentId);
    // An open redirect is a phishing tool: once the operator or the environment names places,
    // only those are accepted.
    if (!entries.length || allows(entries, url)) return;
    const { origin, pathname } = new URL(url);
    throw new Problem(
      'invalid_input',
      `${field} ${origin}${pathname} is not allowed in this environment; use a URL under ${entries.join(', ')}, or add its origin to the environment's redirect_url_allowlist (PATCH /api/v1/environment).`,
      { errors: [{ path: `/${field}`, message: `must start with one of: ${entries.join(', ')}` }] },
    );
  }

  /**
   * Whether the browser may be sent to `url` now: checked again when a link is used, because the
   * lists may have been tightened since it was made (and a link stored before URLs were checked
   * may hold one that is not valid).
   */
  async permits(environmentId: string, url: string): Promise<boolean> {
    if (redirectUrlFault(url)) return false;
    const entries = await this.entries(environmentId);
    return !entries.length || allows(entries, url);
  }

  private async entries(environmentId: string): Promise<string[]> {
    const own = (await findEnvironment(this.db, environmentId))?.redirect_url_allowlist ?? [];
    return [...this.global, ...own];
  }
}
