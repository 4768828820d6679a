import { api } from './api.js';
import { externalLink, h } from './dom.js';

// The provider catalog, fetched once per page load, and what the connection and provider pages
// both show of a provider.

let providers = null;

/** One provider with its definition (e.g. the labels of its credential form), fetched once. */
const definitions = new Map();

export async function providerList() {
  providers ??= (await api('/providers')).data;
  return providers;
}

export function providerDetail(key) {
  if (!definitions.has(key))
    definitions.set(
      key,
      api(`/providers/${encodeURIComponent(key)}`).catch((error) => {
        definitions.delete(key);
        throw error;
      }),
    );
  return definitions.get(key);
}

/** After a custom provider was created, replaced or deleted. */
export function forgetProviders() {
  providers = null;
  definitions.clear();
}

const AUTH_NAMES = { oauth2: 'OAuth 2.0', api_key: 'API key', basic: 'User name and password' };
export const authName = (auth) => AUTH_NAMES[auth] ?? auth;
/** What the end user brings for a provider that is not OAuth. */
export const credentialName = (p) => (p.auth === 'basic' ? 'user name and password' : 'API key');

/** The redirect URI a connection gets, before it exists: the public URL, then its id. */
export const redirectPattern = () => `${location.origin}/sso/v1/oauth/{connection_id}/callback`;

/**
 * A provider's setup steps as the docs have them. `redirect` is what stands for {redirect_uri}:
 * the connection's URI (a string) or, before there is a connection, a marked placeholder.
 */
export function setupSteps(p, redirect, id) {
  const placeholder = () => h('code', { class: 'placeholder' }, '{redirect_uri}');
  return h(
    'ol',
    { class: 'steps', id },
    p.setup.steps.map((s) =>
      h(
        'li',
        {},
        s
          .split('{redirect_uri}')
          .flatMap((part, i) => (i === 0 ? [part] : [redirect ?? placeholder(), part])),
      ),
    ),
  );
}

export function redirectNote(id) {
  return h(
    'p',
    { class: 'hint', id },
    h('code', {}, '{redirect_uri}'),
    ' is the connection’s own redirect URI: ',
    h('code', {}, redirectPattern()),
    ' (PORTICO_PUBLIC_URL, when it names another address, instead of this one). The connection’s id exists only once it is created: create the connection, then register the exact URI its page shows.',
  );
}

export function consoleLinks(p) {
  const links = [
    p.setup.console ? externalLink(p.setup.console.url, `Open the ${p.setup.console.name}`) : null,
    p.docs_url ? externalLink(p.docs_url, `${p.display_name} documentation`) : null,
  ].filter(Boolean);
  return links.length ? h('p', { class: 'actions' }, links) : null;
}
