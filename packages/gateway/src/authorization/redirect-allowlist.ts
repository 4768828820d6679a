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
 * An entry as it is compared: an origin alone stays an origin (`https://app.example.com`), anything
 * longer is a prefix of origin + path. Undefined when it is not an http(s) URL.
 */
export function normalizeAllowlistEntry(entry: string): string | undefined {
  try {
    const url = new URL(entry);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || url.search || url.hash) return undefined;
    return /^https?:\/\/[^/]+\/?$/i.test(entry) ? url.origin : `${url.origin}${url.pathname}`;
  } catch {
    return undefined;
  }
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

  /** Throws `invalid_input` naming `field` when `url` is outside the environment's places. */
  async check(environmentId: string, field: string, url: string): Promise<void> {
    const own = (await findEnvironment(this.db, environmentId))?.redirect_url_allowlist ?? [];
    const entries = [...this.global, ...own];
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
}
