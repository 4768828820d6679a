import { ApiError, api, setCsrf } from './api.js';
import { chartExecutions, latencyBars } from './charts.js';
import {
  append,
  clearProblem,
  confirmDialog,
  copy,
  errorList,
  field,
  h,
  showProblem,
  toast,
  when,
} from './dom.js';
import { renderSVG } from './vendor/uqr.mjs';

const view = document.getElementById('view');
const STATUSES = ['PENDING_AUTH', 'ACTIVE', 'EXPIRED', 'DISCONNECTED'];
let providers = null;

/** One provider with its definition (e.g. the labels of its credential form), fetched once. */
const definitions = new Map();

async function providerList() {
  providers ??= (await api('/providers')).data;
  return providers;
}

function providerDetail(key) {
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
function forgetProviders() {
  providers = null;
  definitions.clear();
}

/** Replaces an element's children; arrays are flattened and null, undefined and false skipped. */
function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

function page(title, ...children) {
  document.title = `${title} · Portico dashboard`;
  fill(view, h('h1', {}, title), children);
  view.focus();
}

const formError = () => h('p', { class: 'form-error', role: 'alert' });
const badge = (status) => h('span', { class: `badge s-${String(status).toLowerCase()}` }, status);
const copyButton = (text, what) =>
  h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => copy(text, what) },
    `Copy ${what.charAt(0).toLowerCase()}${what.slice(1)}`,
  );

const NUMERIC = new Set(['Count', 'Calls', 'p50', 'p95', 'Accounts', 'Duration']);

function table(headers, rows, caption) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      caption ? h('caption', {}, caption) : null,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((x) => h('th', { scope: 'col', class: NUMERIC.has(x) ? 'n' : undefined }, x)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.length
          ? rows
          : h('tr', {}, h('td', { colspan: headers.length, class: 'empty' }, 'Nothing yet.')),
      ),
    ),
  );
}

// ---------------------------------------------------------------- sign-in

function signInPage(message) {
  document.getElementById('top').hidden = true;
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const form = h(
    'form',
    { class: 'card narrow', id: 'sign-in' },
    h(
      'p',
      {},
      'Operators sign in with an admin account. The first one is printed once at the first start; more come from ',
      h('code', {}, 'portico admins create'),
      '.',
    ),
    field('Username', username),
    field('Password', password),
    formError(),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  if (message) form.querySelector('.form-error').textContent = message;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    try {
      const session = await api('/admin/session', {
        method: 'POST',
        body: { username: username.value, password: password.value },
      });
      startSession(session);
      location.hash = '#/overview';
      route();
    } catch (error) {
      showProblem(form, error);
    }
  });
  page('Sign in to Portico', form);
  username.focus();
}

function startSession(session) {
  setCsrf(session.csrf_token);
  document.getElementById('who').textContent = session.username;
  document.getElementById('top').hidden = false;
}

document.getElementById('sign-out').addEventListener('click', async () => {
  await api('/admin/session', { method: 'DELETE' }).catch(() => {});
  setCsrf(null);
  signInPage('Signed out.');
});
window.addEventListener('portico:signed-out', () => signInPage('Your session ended; sign in again.'));

// ---------------------------------------------------------------- overview

async function overviewPage(params) {
  const window = params.get('window') === '7d' ? '7d' : '24h';
  const [connections, summary, stats] = await Promise.all([
    api('/connections', { query: { page_size: 100 } }),
    api('/connected-accounts/summary'),
    api('/executions/stats', { query: { window } }),
  ]);
  const total = stats.hours.reduce((n, x) => n + x.success + x.error, 0);
  const cards = h(
    'div',
    { class: 'cards' },
    h(
      'div',
      { class: 'card stat' },
      h('span', { class: 'num', id: 'count-connections' }, connections.data.length),
      h('span', {}, 'connections'),
    ),
    STATUSES.map((s) =>
      h(
        'div',
        { class: 'card stat' },
        h('span', { class: 'num', id: `count-${s.toLowerCase()}` }, summary.by_status[s] ?? 0),
        h('span', {}, `${s.toLowerCase().replace('_', ' ')} accounts`),
      ),
    ),
  );
  const windowNav = h(
    'div',
    { class: 'segmented', role: 'group', 'aria-label': 'Time window' },
    ['24h', '7d'].map((w) =>
      h(
        'a',
        { href: `#/overview?window=${w}`, 'aria-current': w === window ? 'true' : undefined },
        w === '24h' ? 'Last 24 h' : 'Last 7 days',
      ),
    ),
  );
  const expired = table(
    ['Account', 'Connection', 'Expired', ''],
    summary.recently_expired.map((a) =>
      h(
        'tr',
        {},
        h('td', {}, a.identifier),
        h('td', {}, a.connection_name),
        h('td', {}, when(a.updated_at)),
        h(
          'td',
          {},
          h(
            'button',
            { type: 'button', class: 'secondary', onclick: () => freshLink(a.connection_name, a.identifier) },
            'Copy new link',
          ),
        ),
      ),
    ),
    'Accounts that expired in the last 7 days',
  );
  page(
    'Overview',
    cards,
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'row' }, h('h2', {}, 'Tool executions'), windowNav),
      h(
        'p',
        { class: 'hint', id: 'executions-total', dataset: { total } },
        `${total} executions, per hour, by outcome`,
      ),
      chartExecutions(stats.hours, window),
    ),
    h(
      'div',
      { class: 'split' },
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Error codes'),
        table(
          ['Code', 'Count'],
          stats.error_codes.map((e) =>
            h('tr', {}, h('td', {}, h('code', {}, e.error_code)), h('td', { class: 'n' }, e.count)),
          ),
        ),
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Duration by provider'),
        latencyBars(stats.providers),
        table(
          ['Provider', 'Calls', 'p50', 'p95'],
          stats.providers.map((p) =>
            h(
              'tr',
              {},
              h('td', {}, p.provider),
              h('td', { class: 'n' }, p.count),
              h('td', { class: 'n' }, `${p.p50_ms} ms`),
              h('td', { class: 'n' }, `${p.p95_ms} ms`),
            ),
          ),
        ),
      ),
    ),
    h('section', { class: 'card' }, h('h2', {}, 'Recently expired'), expired),
  );
}

async function freshLink(connection_name, identifier) {
  try {
    const link = await api('/connected-accounts/authorization-link', {
      method: 'POST',
      body: { connection_name, identifier },
    });
    await copy(link.link, 'Authorization link');
  } catch (error) {
    toast(error.message);
  }
}

// ---------------------------------------------------------------- connections

async function connectionsPage() {
  const [list, summary] = await Promise.all([
    api('/connections', { query: { page_size: 100 } }),
    api('/connected-accounts/summary'),
  ]);
  const accountsOf = (name) =>
    summary.by_connection
      .filter((c) => c.connection_name === name && c.status !== 'DISCONNECTED')
      .reduce((n, c) => n + c.count, 0);
  page(
    'Connections',
    h('p', {}, h('a', { class: 'button', href: '#/connections/new' }, 'New connection')),
    table(
      ['Name', 'Provider', 'Mode', 'Accounts', 'Updated', ''],
      list.data.map((c) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/connections/${encodeURIComponent(c.name)}` }, c.name)),
          h('td', {}, c.provider),
          h('td', {}, c.sandbox ? 'sandbox' : 'live'),
          h('td', { class: 'n' }, accountsOf(c.name)),
          h('td', {}, when(c.updated_at)),
          h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: () => deleteConnection(c.name, accountsOf(c.name)),
              },
              'Delete',
            ),
          ),
        ),
      ),
    ),
  );
}

async function deleteConnection(name, accounts) {
  const ok = await confirmDialog(
    `Delete ${name}?`,
    `This disconnects ${accounts} connected account${accounts === 1 ? '' : 's'} (their grants are revoked at the provider where it allows) and deletes the connection. It cannot be undone.`,
    'Delete connection',
  );
  if (!ok) return;
  try {
    await api(`/connections/${encodeURIComponent(name)}`, { method: 'DELETE' });
    toast(`Connection ${name} deleted`);
    location.hash = '#/connections';
    route();
  } catch (error) {
    toast(error.message);
  }
}

const AUTH_NAMES = { oauth2: 'OAuth 2.0', api_key: 'API key', basic: 'User name and password' };
const authName = (auth) => AUTH_NAMES[auth] ?? auth;
/** What the end user brings for a provider that is not OAuth. */
const credentialName = (p) => (p.auth === 'basic' ? 'user name and password' : 'API key');

/** The redirect URI a connection gets, before it exists: the public URL, then its id. */
const redirectPattern = () => `${location.origin}/sso/v1/oauth/{connection_id}/callback`;

/**
 * A provider's setup steps as the docs have them. `redirect` is what stands for {redirect_uri}:
 * the connection's URI (a string) or, before there is a connection, a marked placeholder.
 */
function setupSteps(p, redirect, id) {
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

function redirectNote(id) {
  return h(
    'p',
    { class: 'hint', id },
    h('code', {}, '{redirect_uri}'),
    ' is the connection’s own redirect URI: ',
    h('code', {}, redirectPattern()),
    ' (PORTICO_PUBLIC_URL, when it names another address, instead of this one). The connection’s id exists only once it is created: create the connection, then register the exact URI its page shows.',
  );
}

function consoleLinks(p) {
  const links = [
    p.setup.console
      ? h(
          'a',
          { href: p.setup.console.url, rel: 'noopener noreferrer', target: '_blank' },
          `Open the ${p.setup.console.name}`,
        )
      : null,
    p.docs_url
      ? h(
          'a',
          { href: p.docs_url, rel: 'noopener noreferrer', target: '_blank' },
          `${p.display_name} documentation`,
        )
      : null,
  ].filter(Boolean);
  return links.length ? h('p', { class: 'actions' }, links) : null;
}

async function connectionForm(name, preset) {
  const all = await providerList();
  const existing = name ? await api(`/connections/${encodeURIComponent(name)}`) : null;
  const chosenKey = existing?.provider ?? preset;
  const option = (p) =>
    h('option', { value: p.key, selected: chosenKey === p.key }, `${p.display_name} (${p.kind})`);
  const custom = all.filter((p) => !p.built_in);
  const provider = h(
    'select',
    { id: 'provider', name: 'provider', disabled: Boolean(existing) },
    custom.length
      ? [
          h('optgroup', { label: 'Built-in' }, all.filter((p) => p.built_in).map(option)),
          h('optgroup', { label: 'Custom' }, custom.map(option)),
        ]
      : all.map(option),
  );
  const nameInput = h('input', {
    id: 'name',
    name: 'name',
    value: existing?.name ?? '',
    disabled: Boolean(existing),
    autocomplete: 'off',
    placeholder: 'e.g. notion-prod',
  });
  const sandbox = h('input', {
    id: 'sandbox',
    name: 'sandbox',
    type: 'checkbox',
    checked: existing?.sandbox,
    disabled: Boolean(existing),
  });
  const clientId = h('input', {
    id: 'client_id',
    name: 'client_id',
    value: existing?.sandbox ? '' : (existing?.client_id ?? ''),
    autocomplete: 'off',
  });
  const clientSecret = h('input', {
    id: 'client_secret',
    name: 'client_secret',
    type: 'password',
    autocomplete: 'new-password',
    placeholder: existing ? 'Stored; type a new one to replace it' : '',
  });
  const displayName = h('input', {
    id: 'display_name',
    name: 'display_name',
    value: existing?.display_name ?? '',
    placeholder: 'Your app’s name, shown on Portico’s result pages',
  });
  const extraScopes = h('input', { id: 'scopes', name: 'scopes', autocomplete: 'off' });
  const scopeBox = h('fieldset', { class: 'scopes' });
  const credentials = h(
    'div',
    {},
    field('Client ID', clientId),
    field('Client secret', clientSecret, 'Write-only: it is sealed at rest and never shown again.'),
  );
  // Client credentials and scopes exist only for OAuth providers.
  const oauthPart = h(
    'div',
    { id: 'oauth-settings' },
    credentials,
    scopeBox,
    field('Other scopes', extraScopes, 'Space-separated, added to the ticked ones.'),
  );
  const paramBox = h('fieldset', { class: 'parameters', id: 'parameters' });
  let paramInputs = [];
  // The provider's setup at the provider, on the new-connection form only (a connection's page has its own).
  const setup = existing ? null : h('section', { class: 'setup', id: 'provider-setup' });

  const current = () => all.find((p) => p.key === provider.value) ?? all[0];
  const isOauth = () => current().auth === 'oauth2';
  const renderScopes = () => {
    const p = current();
    const chosen = new Set(existing?.scopes ?? p.default_scopes);
    scopeBox.replaceChildren(h('legend', {}, 'Permissions (scopes)'));
    if (!p.setup.scopes.length)
      scopeBox.append(
        h(
          'p',
          { class: 'hint' },
          `${p.display_name} has no scopes: access is what the user picks on the consent screen.`,
        ),
      );
    for (const s of p.setup.scopes) {
      const id = `scope-${s.scope.replace(/[^A-Za-z0-9]/g, '-')}`;
      scopeBox.append(
        h(
          'div',
          { class: 'check' },
          h('input', {
            type: 'checkbox',
            id,
            value: s.scope,
            checked: chosen.has(s.scope),
            'data-scope': true,
          }),
          h(
            'label',
            { for: id },
            h('code', {}, s.scope.replace('https://www.googleapis.com/auth/', '…/auth/')),
            ' — ',
            s.description,
          ),
        ),
      );
    }
    const known = new Set(p.setup.scopes.map((s) => s.scope));
    extraScopes.value = [...chosen].filter((s) => !known.has(s)).join(' ');
  };
  const renderParameters = () => {
    const p = current();
    paramInputs = p.parameters.map((x) => {
      const isTenant = x.name === 'tenant';
      const value = isTenant ? existing?.tenant : existing?.parameters?.[x.name];
      const input = h('input', {
        id: `param-${x.name}`,
        // tenant has its own field in the API; the others go under "parameters".
        name: isTenant ? 'tenant' : `parameters.${x.name}`,
        value: value ?? '',
        placeholder: x.default ?? '',
        autocomplete: 'off',
        'aria-required': x.required ? 'true' : undefined,
        dataset: { parameter: x.name },
      });
      const hint = [x.description, x.default ? `Default: ${x.default}.` : null].filter(Boolean).join(' ');
      return {
        parameter: x,
        input,
        element: field(
          [x.label, x.required ? h('span', { class: 'required' }, ' (required)') : null],
          input,
          hint || undefined,
        ),
      };
    });
    fill(
      paramBox,
      h('legend', {}, `${p.display_name} parameters`),
      paramInputs.map((x) => x.element),
    );
    paramBox.hidden = paramInputs.length === 0;
  };
  const renderSetup = () => {
    if (!setup) return;
    const p = current();
    fill(
      setup,
      h('h2', {}, `Set up ${p.display_name}`),
      h(
        'p',
        { class: 'hint' },
        `${authName(p.auth)} · ${p.kind} · ${p.built_in ? 'built-in' : 'custom'} provider · `,
        h('a', { href: `#/providers/${encodeURIComponent(p.key)}` }, 'Provider details'),
      ),
      sandbox.checked
        ? h(
            'p',
            { class: 'notice' },
            'Sandbox: the built-in emulator plays the provider; nothing to set up there. For a live connection, these are the steps:',
          )
        : null,
      p.auth === 'oauth2'
        ? h(
            'p',
            {},
            `Register an OAuth app at ${p.display_name}, then copy its client ID and client secret below.`,
          )
        : h(
            'p',
            {},
            `${p.display_name} needs no app: each end user enters their own ${credentialName(p)} on the authorization link (or you import it on the accounts page). No client ID, secret or scopes.`,
          ),
      p.setup.steps.length
        ? setupSteps(p, null, 'setup-steps')
        : h('p', { class: 'hint' }, 'This provider’s definition gives no setup steps.'),
      p.auth === 'oauth2' ? redirectNote('redirect-note') : null,
      consoleLinks(p),
    );
  };
  const renderMode = () => {
    credentials.hidden = sandbox.checked;
    oauthPart.hidden = !isOauth();
  };
  provider.addEventListener('change', () => {
    clearProblem(form);
    renderScopes();
    renderParameters();
    renderSetup();
    renderMode();
  });
  sandbox.addEventListener('change', () => {
    renderMode();
    renderSetup();
  });
  renderScopes();
  renderParameters();
  renderSetup();
  renderMode();

  const form = h(
    'form',
    { class: 'card', id: 'connection-form', novalidate: true },
    field('Provider', provider),
    setup,
    field(
      'Name',
      nameInput,
      '1–64 letters, digits, ".", "_" or "-"; applications use it as connection_name.',
    ),
    h(
      'div',
      { class: 'check' },
      sandbox,
      h(
        'label',
        { for: 'sandbox' },
        'Sandbox: use the built-in provider emulators (no client ID or secret needed)',
      ),
    ),
    h('p', { class: 'field-error', 'data-error-for': 'sandbox' }),
    paramBox,
    oauthPart,
    field('Display name', displayName),
    formError(),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, existing ? 'Save changes' : 'Create connection'),
      h('a', { href: '#/connections', class: 'button secondary' }, 'Cancel'),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    const body = existing ? {} : { name: nameInput.value, provider: provider.value };
    if (!existing && sandbox.checked) body.sandbox = true;
    if (isOauth()) {
      const scopes = [...scopeBox.querySelectorAll('[data-scope]:checked')]
        .map((x) => x.value)
        .concat(extraScopes.value.split(/[\s,]+/).filter(Boolean));
      if (!sandbox.checked && clientId.value !== (existing?.client_id ?? '')) body.client_id = clientId.value;
      if (!sandbox.checked && clientSecret.value) body.client_secret = clientSecret.value;
      if (current().setup.scopes.length || scopes.length) body.scopes = scopes;
    }
    const parameters = {};
    for (const { parameter, input } of paramInputs) {
      const value = input.value.trim();
      const before = parameter.name === 'tenant' ? existing?.tenant : existing?.parameters?.[parameter.name];
      if (!value || value === (before ?? '')) continue;
      if (parameter.name === 'tenant') body.tenant = value;
      else parameters[parameter.name] = value;
    }
    if (Object.keys(parameters).length) body.parameters = parameters;
    if (displayName.value || existing?.display_name) body.display_name = displayName.value || null;
    if (existing && !Object.keys(body).length) {
      toast('Nothing changed');
      return;
    }
    try {
      const saved = existing
        ? await api(`/connections/${encodeURIComponent(existing.name)}`, { method: 'PATCH', body })
        : await api('/connections', { method: 'POST', body });
      clientSecret.value = '';
      toast(`Connection ${saved.name} saved`);
      location.hash = `#/connections/${encodeURIComponent(saved.name)}`;
    } catch (error) {
      showProblem(form, error);
    }
  });
  return { form, existing };
}

async function connectionPage(name) {
  const [conn, all] = await Promise.all([api(`/connections/${encodeURIComponent(name)}`), providerList()]);
  const p = all.find((x) => x.key === conn.provider) ?? {
    key: conn.provider,
    display_name: conn.provider,
    auth: 'oauth2',
    setup: { steps: [], scopes: [] },
  };
  const oauth = p.auth === 'oauth2';
  const { form } = await connectionForm(name);
  const accountsHash = `#/accounts?connection_name=${encodeURIComponent(conn.name)}`;
  page(
    conn.name,
    h(
      'section',
      { class: 'card' },
      oauth
        ? [
            h('h2', {}, 'Redirect URI'),
            h('p', {}, 'Register this exact URI at the provider:'),
            h(
              'div',
              { class: 'copy-row' },
              h('code', { id: 'redirect-uri' }, conn.redirect_uri),
              copyButton(conn.redirect_uri, 'Redirect URI'),
            ),
          ]
        : [
            h('h2', {}, 'Credentials'),
            h(
              'p',
              {},
              `${p.display_name} needs no app: each end user enters their own ${credentialName(p)} on the authorization link, or you import it. There is no redirect URI to register.`,
            ),
          ],
      conn.sandbox
        ? h(
            'p',
            { class: 'hint' },
            'This is a sandbox connection: the built-in emulator registered it already; nothing to do at the provider.',
          )
        : [
            p.setup.steps.length
              ? [
                  h('h3', {}, `Set up ${p.display_name} at the provider`),
                  setupSteps(p, oauth ? conn.redirect_uri : null, 'connection-steps'),
                ]
              : null,
            consoleLinks(p),
          ],
      h(
        'p',
        { class: 'actions' },
        h('a', { class: 'button', href: `${accountsHash}&link=1` }, 'Generate an authorization link'),
        h('a', { class: 'button secondary', href: `${accountsHash}&import=1` }, 'Import credentials'),
      ),
    ),
    h('h2', {}, 'Settings'),
    form,
    h(
      'p',
      {},
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          onclick: async () => {
            const summary = await api('/connected-accounts/summary');
            const n = summary.by_connection
              .filter((c) => c.connection_name === conn.name && c.status !== 'DISCONNECTED')
              .reduce((a, c) => a + c.count, 0);
            deleteConnection(conn.name, n);
          },
        },
        'Delete connection',
      ),
    ),
  );
}

async function newConnectionPage(params) {
  const { form } = await connectionForm(null, params.get('provider') ?? undefined);
  page('New connection', form);
}

// ---------------------------------------------------------------- providers

const DEFINITION_EXAMPLE = `{
  "key": "acme_crm",
  "display_name": "Acme CRM",
  "category": "CRM",
  "auth": { "kind": "api_key", "label": "Acme API key" },
  "api": { "base_url": "https://api.acme.example" },
  "setup": { "steps": ["Each end user creates an API key under Settings → API."] }
}`;

/**
 * A form that sends a pasted or uploaded provider definition: POST (create) or, with `key`, PUT
 * (replace). The server's field errors are listed by JSON path under the text area.
 */
function definitionForm({ key, initial = '' }) {
  const text = h('textarea', {
    id: 'definition',
    name: 'definition',
    rows: 16,
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: DEFINITION_EXAMPLE,
  });
  text.value = initial;
  const file = h('input', {
    type: 'file',
    id: 'definition-file',
    name: 'definition_file',
    accept: '.json,application/json',
  });
  const errors = h('ul', {
    class: 'problem-list',
    id: 'definition-errors',
    'aria-label': 'Errors in the definition',
    hidden: true,
  });
  file.addEventListener('change', async () => {
    const chosen = file.files?.[0];
    if (!chosen) return;
    text.value = await chosen.text();
    toast(`${chosen.name} loaded: check it, then ${key ? 'save' : 'create'} the provider`);
  });
  const form = h(
    'form',
    { class: 'card', id: key ? 'replace-provider' : 'create-provider', novalidate: true },
    h('h2', {}, key ? 'Replace the definition' : 'Add a custom provider'),
    h(
      'p',
      { class: 'hint' },
      'A provider definition in JSON: the format is packages/gateway/providers/provider.schema.json (docs/providers/definition-format.md); the built-in providers’ pages show theirs as examples.',
      key
        ? ' The key stays the same; connections that use the provider pick the new definition up at once.'
        : ' Custom providers cannot take a built-in key, a tool prefix or a dedicated emulator.',
    ),
    field('Definition (JSON)', text),
    errors,
    field('Or load a .json file', file),
    formError(),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, key ? 'Save definition' : 'Create provider'),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    errorList(errors, null);
    let definition;
    try {
      definition = JSON.parse(text.value);
    } catch (error) {
      const problem = new ApiError({
        detail: `The definition is not valid JSON: ${error.message}`,
        errors: [{ path: '/', message: 'is not valid JSON' }],
      });
      showProblem(form, problem);
      errorList(errors, problem);
      text.setAttribute('aria-invalid', 'true');
      text.focus();
      return;
    }
    try {
      const saved = key
        ? await api(`/providers/${encodeURIComponent(key)}`, { method: 'PUT', body: definition })
        : await api('/providers', { method: 'POST', body: definition });
      forgetProviders();
      toast(`Provider ${saved.display_name} ${key ? 'saved' : 'created'}`);
      const target = `#/providers/${encodeURIComponent(saved.key)}`;
      if (location.hash === target) route();
      else location.hash = target;
    } catch (error) {
      showProblem(form, error);
      if (errorList(errors, error)) {
        text.setAttribute('aria-invalid', 'true');
        text.focus();
      }
    }
  });
  return form;
}

async function providersPage(params) {
  forgetProviders();
  const all = await providerList();
  const templateKey = params.get('template');
  let initial = '';
  if (templateKey) {
    // A built-in definition as a starting point, made acceptable as a custom one.
    const { definition } = await providerDetail(templateKey);
    const copy = structuredClone(definition);
    delete copy.$schema;
    delete copy.tool_prefix;
    if (copy.sandbox) delete copy.sandbox.emulator;
    if (copy.sandbox && !Object.keys(copy.sandbox).length) delete copy.sandbox;
    if (!copy.key.endsWith('_custom')) copy.key = `${copy.key}_custom`.slice(0, 48);
    initial = JSON.stringify(copy, null, 2);
  }
  const search = h('input', {
    id: 'provider-search',
    name: 'q',
    type: 'search',
    autocomplete: 'off',
    placeholder: 'name, key, category or auth',
    value: params.get('q') ?? '',
  });
  const rows = all.map((p) => {
    const tr = h(
      'tr',
      { dataset: { provider: p.key } },
      h('td', {}, h('a', { href: `#/providers/${encodeURIComponent(p.key)}` }, p.display_name)),
      h('td', {}, h('code', {}, p.key)),
      h('td', {}, authName(p.auth)),
      h('td', {}, p.kind),
      h(
        'td',
        {},
        h(
          'span',
          { class: `badge ${p.built_in ? 'built-in' : 'custom'}` },
          p.built_in ? 'built-in' : 'custom',
        ),
      ),
      h(
        'td',
        {},
        p.docs_url
          ? h(
              'a',
              { href: p.docs_url, rel: 'noopener noreferrer', target: '_blank' },
              'Docs',
              h('span', { class: 'visually-hidden' }, ` for ${p.display_name}`),
            )
          : '—',
      ),
    );
    tr.searchText = [p.display_name, p.key, p.kind, authName(p.auth), p.built_in ? 'built-in' : 'custom']
      .join(' ')
      .toLowerCase();
    return tr;
  });
  const count = h('p', { class: 'hint', id: 'provider-count', 'aria-live': 'polite' });
  const filter = () => {
    const q = search.value.trim().toLowerCase();
    let shown = 0;
    for (const tr of rows) {
      tr.hidden = Boolean(q) && !tr.searchText.includes(q);
      if (!tr.hidden) shown++;
    }
    const custom = all.filter((p) => !p.built_in).length;
    count.textContent = `${shown} of ${all.length} providers (${all.length - custom} built-in, ${custom} custom)`;
  };
  search.addEventListener('input', filter);
  filter();
  const create = definitionForm({ initial });
  page(
    'Providers',
    h(
      'p',
      {},
      'The services connections can reach: Portico’s built-in providers and this environment’s own, each a JSON definition. ',
      h('a', { href: '#create-provider', onclick: focusCreate }, 'Add a custom provider'),
      '.',
    ),
    h(
      'form',
      { class: 'card filters', role: 'search', onsubmit: (event) => event.preventDefault() },
      field('Filter', search),
    ),
    count,
    table(['Provider', 'Key', 'Auth', 'Category', 'Source', 'Docs'], rows),
    create,
  );
  if (templateKey) focusCreate();
}

function focusCreate(event) {
  event?.preventDefault();
  const text = document.getElementById('definition');
  text?.scrollIntoView({ block: 'center' });
  text?.focus();
}

async function providerPage(key) {
  const p = await api(`/providers/${encodeURIComponent(key)}`);
  const deleteError = h('p', { class: 'form-error', role: 'alert', id: 'delete-provider-error' });
  const list = (xs) => (xs.length ? xs.map((x) => [h('code', {}, x), ' ']) : '—');
  const details = h(
    'dl',
    { class: 'card details', id: 'provider-details' },
    [
      ['Key', h('code', {}, p.key)],
      ['Authentication', authName(p.auth)],
      ['Category', p.kind],
      ['Source', p.built_in ? 'built-in' : 'custom (this environment)'],
      [
        'Documentation',
        p.docs_url
          ? h('a', { href: p.docs_url, rel: 'noopener noreferrer', target: '_blank' }, p.docs_url)
          : '—',
      ],
      ['Tool prefix', p.tool_prefix ? h('code', {}, `${p.tool_prefix}_…`) : '— (proxy only)'],
      p.auth === 'oauth2' ? ['Default scopes', list(p.default_scopes)] : null,
      p.auth === 'oauth2' ? ['Required scopes', list(p.required_scopes)] : null,
    ]
      .filter(Boolean)
      .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
  const setup = h(
    'section',
    { class: 'card', id: 'provider-setup' },
    h('h2', {}, 'Setup at the provider'),
    p.auth === 'oauth2'
      ? null
      : h(
          'p',
          {},
          `Each end user enters their own ${credentialName(p)} on the authorization link (or you import it): no app to register, no client ID, secret or scopes.`,
        ),
    p.setup.steps.length
      ? setupSteps(p, null, 'provider-steps')
      : h('p', { class: 'hint' }, 'The definition gives no setup steps.'),
    p.setup.steps.some((s) => s.includes('{redirect_uri}')) || p.auth === 'oauth2'
      ? redirectNote('provider-redirect-note')
      : null,
    consoleLinks(p),
  );
  const scopes =
    p.auth === 'oauth2'
      ? h(
          'section',
          { class: 'card', id: 'provider-scopes' },
          h('h2', {}, 'Scopes'),
          table(
            ['Scope', 'Description', 'Default'],
            p.setup.scopes.map((s) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, s.scope)),
                h('td', {}, s.description),
                h('td', {}, p.default_scopes.includes(s.scope) ? 'yes' : ''),
              ),
            ),
            p.setup.scopes.length ? null : `${p.display_name} lists no scopes.`,
          ),
        )
      : null;
  const parameters = p.parameters.length
    ? h(
        'section',
        { class: 'card', id: 'provider-parameters' },
        h('h2', {}, 'Connection parameters'),
        h('p', { class: 'hint' }, 'Each connection gives these when it is created.'),
        table(
          ['Name', 'Label', 'Required', 'Default', 'Description'],
          p.parameters.map((x) =>
            h(
              'tr',
              {},
              h('td', {}, h('code', {}, x.name)),
              h('td', {}, x.label),
              h('td', {}, x.required ? 'yes' : 'no'),
              h('td', {}, x.default ?? '—'),
              h('td', {}, x.description ?? ''),
            ),
          ),
        ),
      )
    : null;
  const json = JSON.stringify(p.definition, null, 2);
  const definition = h(
    'section',
    { class: 'card', id: 'provider-definition' },
    h('div', { class: 'row' }, h('h2', {}, 'Definition'), copyButton(json, 'Definition')),
    h('pre', { class: 'json', id: 'definition-json' }, json),
  );
  const remove = async () => {
    deleteError.textContent = '';
    const ok = await confirmDialog(
      `Delete ${p.display_name}?`,
      `The custom provider ${p.key} is deleted. A provider that connections use cannot be deleted: delete them first.`,
      'Delete provider',
    );
    if (!ok) return;
    try {
      await api(`/providers/${encodeURIComponent(p.key)}`, { method: 'DELETE' });
      forgetProviders();
      toast(`Provider ${p.display_name} deleted`);
      location.hash = '#/providers';
    } catch (error) {
      const problem = error.problem ?? {};
      deleteError.textContent = `${problem.detail ?? error.message}${problem.code ? ` (${problem.code})` : ''}`;
    }
  };
  page(
    p.display_name,
    h('p', {}, h('a', { href: '#/providers' }, '← All providers')),
    details,
    h(
      'p',
      { class: 'actions' },
      h(
        'a',
        { class: 'button', href: `#/connections/new?provider=${encodeURIComponent(p.key)}` },
        'New connection',
      ),
      p.built_in
        ? h(
            'a',
            { class: 'button secondary', href: `#/providers?template=${encodeURIComponent(p.key)}` },
            'Use as a template for a custom provider',
          )
        : h(
            'button',
            { type: 'button', class: 'danger', id: 'delete-provider', onclick: remove },
            'Delete provider',
          ),
    ),
    deleteError,
    setup,
    parameters,
    scopes,
    definition,
    p.built_in ? null : definitionForm({ key: p.key, initial: json }),
  );
}

// ---------------------------------------------------------------- accounts

/**
 * Import credentials the application already holds (POST /connected-accounts/import): the fields
 * follow the auth kind of the chosen connection's provider.
 */
function importCredentialsForm(connections, selected) {
  const conn = h(
    'select',
    { id: 'import-connection', name: 'connection_name' },
    connections.map((c) => h('option', { value: c.name, selected: c.name === selected }, c.name)),
  );
  const identifier = h('input', {
    id: 'import-identifier',
    name: 'identifier',
    autocomplete: 'off',
    placeholder: 'e.g. user_42',
  });
  const verify = h('input', { type: 'checkbox', id: 'import-verify', name: 'verify', checked: true });
  const fields = h('div', { id: 'import-fields', 'aria-live': 'polite' });
  let inputs = [];
  const secret = (name, label, hint) => {
    const input = h('input', {
      id: `import-${name}`,
      name,
      type: 'password',
      autocomplete: 'off',
      spellcheck: 'false',
    });
    inputs.push(input);
    return field(label, input, hint);
  };
  const render = async () => {
    inputs = [];
    const c = connections.find((x) => x.name === conn.value);
    if (!c) return fields.replaceChildren();
    let p;
    try {
      p = await providerDetail(c.provider);
    } catch (error) {
      return fields.replaceChildren(h('p', { role: 'alert', class: 'form-error' }, error.message));
    }
    if (c.name !== conn.value) return; // another connection was chosen meanwhile
    const auth = p.definition?.auth ?? {};
    form.dataset.auth = p.auth;
    if (p.auth === 'api_key') {
      fields.replaceChildren(secret('api_key', auth.label ?? 'API key', auth.help));
    } else if (p.auth === 'basic') {
      const username = h('input', { id: 'import-username', name: 'username', autocomplete: 'off' });
      inputs.push(username);
      fill(
        fields,
        auth.help ? h('p', { class: 'hint' }, auth.help) : null,
        h(
          'div',
          { class: 'row wrap' },
          field(auth.username_label ?? 'User name', username),
          secret('password', auth.password_label ?? 'Password'),
        ),
      );
    } else {
      const expires = h('input', {
        id: 'import-expires_in',
        name: 'expires_in',
        inputmode: 'numeric',
        autocomplete: 'off',
        placeholder: 'e.g. 3600',
      });
      inputs.push(expires);
      fields.replaceChildren(
        h(
          'p',
          { class: 'hint' },
          `${p.display_name} uses OAuth: give the access token, the refresh token, or both. With only a refresh token Portico gets an access token at once.`,
        ),
        secret('access_token', 'Access token'),
        secret('refresh_token', 'Refresh token'),
        field(
          'Expires in (seconds)',
          expires,
          'How long the access token is still valid; leave empty if unknown.',
        ),
      );
    }
  };
  conn.addEventListener('change', () => {
    clearProblem(form);
    void render();
  });
  const form = h(
    'form',
    { class: 'card', id: 'import-form', novalidate: true },
    h('h2', {}, 'Import credentials'),
    h(
      'p',
      { class: 'hint' },
      'Store a credential your application already holds as an ACTIVE account, without sending the user through an authorization link.',
    ),
    h(
      'div',
      { class: 'row wrap' },
      field('Connection', conn),
      field('Identifier', identifier, 'Your application’s id for the end user.'),
    ),
    fields,
    h(
      'div',
      { class: 'check' },
      verify,
      h('label', { for: 'import-verify' }, 'Check the credential with the provider before storing it'),
    ),
    h('p', { class: 'field-error', 'data-error-for': 'verify' }),
    formError(),
    h('button', { type: 'submit' }, 'Import'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    const body = { connection_name: conn.value, identifier: identifier.value };
    for (const input of inputs) {
      if (input.value === '') continue;
      body[input.name] =
        input.name === 'expires_in' && /^\d+$/.test(input.value.trim())
          ? Number(input.value.trim())
          : input.value;
    }
    if (!verify.checked) body.verify = false;
    try {
      const account = await api('/connected-accounts/import', { method: 'POST', body });
      for (const input of inputs) input.value = '';
      toast(`Credentials imported: ${account.identifier} is ${account.status}`);
      location.hash = `#/accounts/${encodeURIComponent(account.id)}`;
    } catch (error) {
      showProblem(form, error);
    }
  });
  void render();
  return form;
}

async function accountsPage(params) {
  const connections = (await api('/connections', { query: { page_size: 100 } })).data;
  const filters = {
    connection_name: params.get('connection_name') ?? '',
    identifier: params.get('identifier') ?? '',
    status: params.get('status') ?? '',
  };
  const list = await api('/connected-accounts', { query: { ...filters, page_size: 100 } });
  const connSelect = (id, value, any) =>
    h(
      'select',
      { id, name: 'connection_name' },
      any ? h('option', { value: '' }, 'Any connection') : null,
      connections.map((c) => h('option', { value: c.name, selected: c.name === value }, c.name)),
    );
  const filterForm = h(
    'form',
    { class: 'card filters', role: 'search' },
    field('Connection', connSelect('f-connection', filters.connection_name, true)),
    field('Identifier', h('input', { id: 'f-identifier', name: 'identifier', value: filters.identifier })),
    field(
      'Status',
      h(
        'select',
        { id: 'f-status', name: 'status' },
        h('option', { value: '' }, 'Any status'),
        STATUSES.map((s) => h('option', { value: s, selected: s === filters.status }, s)),
      ),
    ),
    h('button', { type: 'submit' }, 'Filter'),
  );
  filterForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const q = new URLSearchParams([...new FormData(filterForm)].filter(([, v]) => v));
    location.hash = `#/accounts?${q}`;
  });

  const identifier = h('input', {
    id: 'link-identifier',
    name: 'identifier',
    autocomplete: 'off',
    placeholder: 'e.g. user_42',
  });
  const linkConn = connSelect('link-connection', filters.connection_name, false);
  const linkOut = h('div', { id: 'link-result' });
  const linkForm = h(
    'form',
    { class: 'card', id: 'link-form' },
    h('h2', {}, 'Generate an authorization link'),
    h(
      'div',
      { class: 'row wrap' },
      field('Connection', linkConn),
      field('Identifier', identifier, 'Your application’s id for the end user.'),
    ),
    formError(),
    h('button', { type: 'submit' }, 'Generate link'),
    linkOut,
  );
  linkForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(linkForm);
    try {
      const link = await api('/connected-accounts/authorization-link', {
        method: 'POST',
        body: { connection_name: linkConn.value, identifier: identifier.value },
      });
      const qr = h('div', { class: 'qr', role: 'img', 'aria-label': 'QR code of the authorization link' });
      qr.innerHTML = renderSVG(link.link, { border: 2 });
      linkOut.replaceChildren(
        h('p', {}, `Works once, until ${when(link.expires_at)}.`),
        h(
          'div',
          { class: 'copy-row' },
          h('a', { id: 'auth-link', href: link.link, target: '_blank', rel: 'noopener' }, link.link),
          copyButton(link.link, 'Authorization link'),
        ),
        qr,
      );
    } catch (error) {
      showProblem(linkForm, error);
    }
  });

  const importForm = connections.length ? importCredentialsForm(connections, filters.connection_name) : null;
  const importToggle = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      id: 'import-toggle',
      'aria-controls': 'import-form',
      'aria-expanded': 'false',
      onclick: () => showImport(importForm.hidden),
    },
    'Import credentials',
  );
  const showImport = (shown) => {
    importForm.hidden = !shown;
    importToggle.setAttribute('aria-expanded', String(shown));
    if (shown) importForm.querySelector('#import-identifier').focus();
  };
  if (importForm) importForm.hidden = true;

  page(
    'Connected accounts',
    connections.length ? linkForm : h('p', {}, 'Create a connection first.'),
    connections.length ? [h('p', { class: 'actions' }, importToggle), importForm] : null,
    filterForm,
    table(
      ['Identifier', 'Connection', 'Status', 'Token expires', 'Last used', ''],
      list.data.map((a) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/accounts/${a.id}` }, a.identifier)),
          h('td', {}, a.connection_name),
          h('td', {}, badge(a.status)),
          h('td', {}, when(a.token_expires_at)),
          h('td', {}, when(a.last_used_at)),
          h('td', {}, h('a', { href: `#/accounts/${a.id}` }, 'Details')),
        ),
      ),
    ),
  );
  if (params.get('link')) identifier.focus();
  if (params.get('import') && importForm) showImport(true);
}

async function accountPage(id) {
  const a = await api(`/connected-accounts/${encodeURIComponent(id)}`);
  const dl = h(
    'dl',
    { class: 'card details' },
    [
      ['Identifier', a.identifier],
      ['Connection', a.connection_name],
      ['Provider', a.provider],
      ['Provider account', a.label ?? '—'],
      ['Status', badge(a.status)],
      ['Scopes', a.scopes.length ? a.scopes.join(' ') : '—'],
      ['Token expires', when(a.token_expires_at)],
      ['Last used', when(a.last_used_at)],
      ['Created', when(a.created_at)],
      ['Updated', when(a.updated_at)],
    ].map(([k, v]) => [h('dt', {}, k), h('dd', { id: `account-${k.toLowerCase().replace(' ', '-')}` }, v)]),
  );
  page(
    `Account ${a.identifier}`,
    dl,
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', class: 'secondary', onclick: () => freshLink(a.connection_name, a.identifier) },
        'Copy a new authorization link',
      ),
      a.status !== 'DISCONNECTED'
        ? h(
            'button',
            {
              type: 'button',
              class: 'danger',
              id: 'disconnect',
              onclick: async () => {
                if (
                  !(await confirmDialog(
                    `Disconnect ${a.identifier}?`,
                    `The grant at ${a.provider} is revoked where the provider allows and the tokens are wiped. The user must authorize again.`,
                    'Disconnect',
                  ))
                )
                  return;
                try {
                  await api(`/connected-accounts/${encodeURIComponent(a.id)}`, { method: 'DELETE' });
                  toast('Account disconnected');
                  route();
                } catch (error) {
                  toast(error.message);
                }
              },
            },
            'Disconnect',
          )
        : null,
    ),
    h(
      'p',
      {},
      h(
        'a',
        { href: `#/executions?identifier=${encodeURIComponent(a.identifier)}` },
        'Executions of this identifier',
      ),
    ),
  );
}

// ---------------------------------------------------------------- tools

async function toolsPage(params) {
  const q = params.get('q') ?? '';
  const provider = params.get('provider') ?? '';
  const [tools, all] = await Promise.all([api('/tools', { query: { provider } }), providerList()]);
  const shown = tools.data.filter(
    (t) => !q || t.name.includes(q.toLowerCase()) || t.description.toLowerCase().includes(q.toLowerCase()),
  );
  const search = h(
    'form',
    { class: 'card filters', role: 'search' },
    field(
      'Search',
      h('input', {
        id: 'tool-search',
        name: 'q',
        value: q,
        type: 'search',
        placeholder: 'name or description',
      }),
    ),
    field(
      'Provider',
      h(
        'select',
        { id: 'tool-provider', name: 'provider' },
        h('option', { value: '' }, 'Any provider'),
        all.map((p) => h('option', { value: p.key, selected: p.key === provider }, p.display_name)),
      ),
    ),
    h('button', { type: 'submit' }, 'Search'),
  );
  search.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/tools?${new URLSearchParams([...new FormData(search)].filter(([, v]) => v))}`;
  });
  page(
    'Tools',
    search,
    tools.notice ? h('p', { class: 'notice' }, tools.notice) : null,
    h(
      'ul',
      { class: 'tool-list' },
      shown.map((t) =>
        h(
          'li',
          { class: 'card' },
          h('a', { href: `#/tools/${t.name}` }, h('code', {}, t.name)),
          h('p', {}, t.description.split('\n')[0]),
        ),
      ),
    ),
  );
}

/** A form for a JSON Schema object: simple fields as inputs, anything nested as a JSON text area. */
function schemaForm(schema) {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const fields = [];
  const readers = [];
  for (const [name, s] of Object.entries(props)) {
    const id = `in-${name}`;
    const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
    const enumValues = s.enum ?? (s.anyOf?.every((x) => 'const' in x) ? s.anyOf.map((x) => x.const) : null);
    let input;
    let read;
    if (enumValues) {
      input = h(
        'select',
        { id, name },
        h('option', { value: '' }, '—'),
        enumValues.map((v) => h('option', { value: JSON.stringify(v) }, String(v))),
      );
      read = () => (input.value ? JSON.parse(input.value) : undefined);
    } else if (type === 'boolean') {
      input = h(
        'select',
        { id, name },
        h('option', { value: '' }, '—'),
        h('option', { value: 'true' }, 'true'),
        h('option', { value: 'false' }, 'false'),
      );
      read = () => (input.value ? input.value === 'true' : undefined);
    } else if (type === 'integer' || type === 'number') {
      input = h('input', { id, name, inputmode: 'numeric' });
      read = () =>
        input.value === ''
          ? undefined
          : Number.isNaN(Number(input.value))
            ? input.value
            : Number(input.value);
    } else if (type === 'string' && !s.anyOf && !s.oneOf) {
      input = h('input', { id, name, autocomplete: 'off' });
      read = () => (input.value === '' ? undefined : input.value);
    } else {
      input = h('textarea', { id, name, rows: 3, spellcheck: 'false', placeholder: 'JSON' });
      read = () => {
        if (input.value.trim() === '') return undefined;
        try {
          return JSON.parse(input.value);
        } catch {
          return input.value;
        }
      };
    }
    fields.push(field(`${name}${required.has(name) ? ' *' : ''}`, input, s.description?.split('\n')[0]));
    readers.push([name, read]);
  }
  const read = () => Object.fromEntries(readers.map(([n, r]) => [n, r()]).filter(([, v]) => v !== undefined));
  return { fields, read };
}

async function toolPage(name) {
  const tool = await api(`/tools/${encodeURIComponent(name)}`);
  const schema = tool.input_schema ?? tool.parameters ?? tool.inputSchema ?? {};
  const { fields, read } = schemaForm(schema);
  const identifier = h('input', {
    id: 'run-identifier',
    name: 'identifier',
    required: true,
    autocomplete: 'off',
  });
  const connection = h('input', {
    id: 'run-connection',
    name: 'connection_name',
    autocomplete: 'off',
    placeholder: 'optional',
  });
  const raw = h('textarea', { id: 'raw-input', name: 'tool_input', rows: 8, spellcheck: 'false' });
  const rawMode = h('input', { type: 'checkbox', id: 'raw-mode' });
  const formFields = h('div', { id: 'schema-fields' }, fields);
  const rawField = field('tool_input (JSON)', raw);
  rawField.hidden = true;
  rawMode.addEventListener('change', () => {
    if (rawMode.checked) raw.value = JSON.stringify(read(), null, 2);
    formFields.hidden = rawMode.checked;
    rawField.hidden = !rawMode.checked;
  });
  const result = h('div', { id: 'run-result', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', id: 'playground', novalidate: true },
    h('h2', {}, 'Playground'),
    h(
      'div',
      { class: 'row wrap' },
      field('Identifier', identifier, 'The end user to run it as.'),
      field('Connection', connection, 'Only when the identifier has several accounts for this provider.'),
    ),
    h('div', { class: 'check' }, rawMode, h('label', { for: 'raw-mode' }, 'Edit the input as raw JSON')),
    formFields,
    rawField,
    formError(),
    h('button', { type: 'submit' }, 'Run tool'),
    result,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    result.replaceChildren();
    let input;
    try {
      input = rawMode.checked ? JSON.parse(raw.value || '{}') : read();
    } catch (error) {
      showProblem(
        form,
        new ApiError({
          detail: `tool_input is not valid JSON: ${error.message}`,
          errors: [{ path: '/tool_input', message: 'is not valid JSON' }],
        }),
      );
      return;
    }
    const body = { tool_name: tool.name, identifier: identifier.value, tool_input: input };
    if (connection.value) body.connection_name = connection.value;
    try {
      const out = await api('/tools/execute', { method: 'POST', body });
      result.replaceChildren(
        h('h3', {}, 'Result'),
        h('p', {}, h('a', { href: `#/executions/${out.execution_id}` }, out.execution_id)),
        h('pre', { class: 'json', id: 'run-output' }, JSON.stringify(out.data, null, 2)),
      );
    } catch (error) {
      showProblem(form, error, '/tool_input');
      if (rawMode.checked)
        for (const e of error.problem?.errors ?? [])
          if (e.path?.startsWith('/tool_input')) raw.setAttribute('aria-invalid', 'true');
      result.replaceChildren(
        h('h3', {}, 'Problem'),
        h(
          'pre',
          { class: 'json problem', id: 'run-problem' },
          JSON.stringify(error.problem ?? { detail: error.message }, null, 2),
        ),
      );
    }
  });
  page(
    tool.name,
    h('p', { class: 'description' }, tool.description),
    h(
      'details',
      { class: 'card' },
      h('summary', {}, 'Input schema'),
      h('pre', { class: 'json' }, JSON.stringify(schema, null, 2)),
    ),
    form,
  );
}

// ---------------------------------------------------------------- executions

async function executionsPage(params) {
  const filters = {
    tool_name: params.get('tool_name') ?? '',
    identifier: params.get('identifier') ?? '',
    status: params.get('status') ?? '',
  };
  const list = await api('/executions', { query: { ...filters, page_size: 100 } });
  const form = h(
    'form',
    { class: 'card filters', role: 'search' },
    field('Tool', h('input', { id: 'e-tool', name: 'tool_name', value: filters.tool_name })),
    field('Identifier', h('input', { id: 'e-identifier', name: 'identifier', value: filters.identifier })),
    field(
      'Status',
      h(
        'select',
        { id: 'e-status', name: 'status' },
        h('option', { value: '' }, 'Any'),
        ['success', 'error'].map((s) => h('option', { value: s, selected: s === filters.status }, s)),
      ),
    ),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/executions?${new URLSearchParams([...new FormData(form)].filter(([, v]) => v))}`;
  });
  page(
    'Executions',
    form,
    table(
      ['Started', 'Tool', 'Identifier', 'Status', 'Error code', 'Duration'],
      list.data.map((e) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/executions/${e.id}` }, when(e.started_at))),
          h('td', {}, h('code', {}, e.tool_name)),
          h('td', {}, e.identifier ?? '—'),
          h('td', {}, badge(e.status)),
          h('td', {}, e.error_code ?? '—'),
          h('td', { class: 'n' }, `${e.duration_ms} ms`),
        ),
      ),
    ),
  );
}

async function executionPage(id) {
  const e = await api(`/executions/${encodeURIComponent(id)}`);
  page(
    `Execution ${e.id}`,
    h(
      'dl',
      { class: 'card details' },
      Object.entries(e).map(([k, v]) => [
        h('dt', {}, k),
        h('dd', {}, v === null ? '—' : k === 'status' ? badge(v) : String(v)),
      ]),
    ),
  );
}

// ---------------------------------------------------------------- events

const EVENT_TYPES = [
  'connected_account.created',
  'connected_account.authorized',
  'connected_account.authorization_failed',
  'connected_account.expired',
  'connected_account.disconnected',
  'connection.created',
  'connection.updated',
  'connection.deleted',
  'tool.execution.failed',
  'webhook.disabled',
  'approval.requested',
  'approval.approved',
  'approval.denied',
  'approval.expired',
];

async function eventsPage(params) {
  const type = params.get('type') ?? '';
  const list = await api('/events', {
    query: { ...(type ? { type } : {}), order: 'newest_first', page_size: 100 },
  });
  const form = h(
    'form',
    { class: 'card filters', role: 'search' },
    field(
      'Type',
      h(
        'select',
        { id: 'ev-type', name: 'type' },
        h('option', { value: '' }, 'Any'),
        EVENT_TYPES.map((t) => h('option', { value: t, selected: t === type }, t)),
      ),
    ),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/events?${new URLSearchParams([...new FormData(form)].filter(([, v]) => v))}`;
  });
  page(
    'Events',
    h('p', { class: 'hint' }, 'The newest 100; webhook endpoints receive them signed (see the README).'),
    form,
    table(
      ['When', 'Type', 'Subject', 'Details'],
      list.data.map((e) =>
        h(
          'tr',
          {},
          h('td', {}, when(e.created_at)),
          h('td', {}, h('code', {}, e.type)),
          h('td', {}, e.data.identifier ?? e.data.name ?? e.data.id ?? '—'),
          h('td', {}, e.data.status ?? e.data.reason ?? e.data.provider ?? '—'),
        ),
      ),
    ),
  );
}

// ---------------------------------------------------------------- gateway clients

async function clientsPage() {
  const list = await api('/clients');
  const name = h('input', {
    id: 'client-name',
    name: 'name',
    autocomplete: 'off',
    placeholder: 'e.g. my-agent',
  });
  const out = h('div', { id: 'client-created' });
  const form = h(
    'form',
    { class: 'card', id: 'client-form' },
    h('h2', {}, 'Create a gateway client'),
    field('Name', name),
    formError(),
    h('button', { type: 'submit' }, 'Create client'),
    out,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    try {
      const c = await api('/clients', { method: 'POST', body: { name: name.value } });
      out.replaceChildren(
        h(
          'div',
          { class: 'notice' },
          h('p', {}, h('strong', {}, 'Store the secret now: it is shown only once.')),
          h(
            'dl',
            { class: 'details' },
            h('dt', {}, 'client_id'),
            h('dd', {}, h('code', {}, c.client_id)),
            h('dt', {}, 'client_secret'),
            h('dd', {}, h('code', { id: 'new-client-secret' }, c.client_secret)),
            h('dt', {}, 'env_url'),
            h('dd', {}, h('code', {}, location.origin)),
          ),
          copyButton(c.client_secret, 'Client secret'),
        ),
      );
      name.value = '';
      await refresh();
    } catch (error) {
      showProblem(form, error);
    }
  });
  const rows = h('div', { id: 'clients-table' });
  async function refresh() {
    const fresh = await api('/clients');
    rows.replaceChildren(
      table(
        ['Client ID', 'Name', 'Created', 'Status', ''],
        fresh.data.map((c) =>
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, c.client_id)),
            h('td', {}, c.name),
            h('td', {}, when(c.created_at)),
            h('td', {}, c.revoked_at ? badge('REVOKED') : badge('ACTIVE')),
            h(
              'td',
              {},
              c.revoked_at
                ? ''
                : h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger',
                      onclick: async () => {
                        if (
                          !(await confirmDialog(
                            `Revoke ${c.name}?`,
                            `Applications using ${c.client_id} lose access at once.`,
                            'Revoke',
                          ))
                        )
                          return;
                        await api(`/clients/${encodeURIComponent(c.client_id)}`, { method: 'DELETE' }).catch(
                          (error) => toast(error.message),
                        );
                        await refresh();
                      },
                    },
                    'Revoke',
                  ),
            ),
          ),
        ),
      ),
    );
  }
  page('Gateway clients', form, rows);
  append(rows, []);
  if (list) await refresh();
}

// ---------------------------------------------------------------- settings

const BRANDING_FIELDS = ['display_name', 'logo_url', 'accent_color', 'support_url'];
/** What the pages end users see use when the branding names no accent colour. */
const DEFAULT_ACCENT = '#1d4ed8';
const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;

/** WCAG contrast ratio of white text on `hex` (#rrggbb). */
function contrastWithWhite(hex) {
  const channel = (i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return 1.05 / (luminance + 0.05);
}

/** A success note inside a form, cleared at the next submit. */
const formOk = (id) => h('p', { class: 'form-ok', role: 'status', id });

/**
 * The environment's look on the pages end users see: four fields, a live preview of the link's
 * landing page, and "Remove branding" (PATCH with `branding: {}`).
 */
function brandingForm(env) {
  let stored = env.branding ?? {};
  const inputs = {
    display_name: h('input', {
      id: 'branding-display_name',
      name: 'branding.display_name',
      maxlength: 80,
      autocomplete: 'off',
      placeholder: 'e.g. Acme',
    }),
    logo_url: h('input', {
      id: 'branding-logo_url',
      name: 'branding.logo_url',
      type: 'url',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'https://cdn.example.com/logo.png',
    }),
    accent_color: h('input', {
      id: 'branding-accent_color',
      name: 'branding.accent_color',
      maxlength: 7,
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: DEFAULT_ACCENT,
      class: 'colour-text',
    }),
    support_url: h('input', {
      id: 'branding-support_url',
      name: 'branding.support_url',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'https://help.example.com or mailto:help@example.com',
    }),
  };
  const picker = h('input', {
    type: 'color',
    id: 'branding-accent-picker',
    'aria-label': 'Accent colour picker',
    value: DEFAULT_ACCENT,
  });
  const accentField = field(
    'Accent colour',
    inputs.accent_color,
    `#rrggbb, for the heading and the button; empty is Portico’s blue (${DEFAULT_ACCENT}).`,
  );
  // The picker beside the text field, which stays the field (label, hint, error) the server names.
  const colourRow = h('div', { class: 'colour-row' });
  inputs.accent_color.replaceWith(colourRow);
  colourRow.append(picker, inputs.accent_color);

  // The preview: the landing page's header, heading, message, button and support footer.
  const previewLogo = h('span', { class: 'preview-logo', id: 'preview-logo' }, 'Logo');
  const previewName = h('span', { id: 'preview-name' });
  const previewHeader = h('div', { class: 'preview-header' }, previewLogo, previewName);
  const previewMessage = h('p', { id: 'preview-message' });
  const previewSupport = h('p', { class: 'preview-footer', id: 'preview-support' });
  const preview = h(
    'div',
    { class: 'brand-preview', id: 'branding-preview' },
    previewHeader,
    h('p', { class: 'preview-title', id: 'preview-title' }, 'Connect your Notion account'),
    previewMessage,
    h('span', { class: 'preview-button', id: 'preview-button' }, 'Continue to Notion'),
    previewSupport,
  );
  const contrast = h('p', { class: 'hint', id: 'accent-contrast', 'aria-live': 'polite' });
  const renderPreview = () => {
    const value = (name) => inputs[name].value.trim();
    const name = value('display_name');
    const logo = value('logo_url');
    const accent = HEX_COLOUR.test(value('accent_color')) ? value('accent_color') : DEFAULT_ACCENT;
    // A CSS custom property through the CSSOM: allowed under the strict style-src.
    preview.style.setProperty('--preview-accent', accent);
    previewHeader.hidden = !name && !logo;
    previewLogo.hidden = !logo;
    let host = '';
    try {
      host = new URL(logo).host;
    } catch {}
    previewLogo.title = host ? `Logo from ${host}` : '';
    previewName.textContent = name;
    previewMessage.textContent = `${name || 'The application'} asks to act on your behalf in Notion. You will sign in at Notion and choose what to allow.`;
    previewSupport.hidden = !value('support_url');
    previewSupport.textContent = `Need help? Contact ${name || 'support'}`;
    const typed = value('accent_color');
    const ratio = contrastWithWhite(accent);
    contrast.textContent =
      typed && !HEX_COLOUR.test(typed)
        ? `“${typed}” is not a #rrggbb colour: the preview shows the default.`
        : ratio < 4.5
          ? `White button text on ${accent} has a contrast of ${ratio.toFixed(1)}:1, below the 4.5:1 that keeps it readable; a darker colour is easier to read.`
          : `White button text on ${accent}: contrast ${ratio.toFixed(1)}:1.`;
  };
  const load = (branding) => {
    stored = branding ?? {};
    for (const name of BRANDING_FIELDS) inputs[name].value = stored[name] ?? '';
    if (HEX_COLOUR.test(inputs.accent_color.value)) picker.value = inputs.accent_color.value.toLowerCase();
    else picker.value = DEFAULT_ACCENT;
    remove.disabled = Object.keys(stored).length === 0;
    renderPreview();
  };
  picker.addEventListener('input', () => {
    inputs.accent_color.value = picker.value;
    renderPreview();
  });
  inputs.accent_color.addEventListener('input', () => {
    const typed = inputs.accent_color.value.trim();
    if (HEX_COLOUR.test(typed)) picker.value = typed.toLowerCase();
  });
  for (const input of Object.values(inputs)) input.addEventListener('input', renderPreview);

  const ok = formOk('branding-saved');
  const remove = h('button', { type: 'button', class: 'danger', id: 'remove-branding' }, 'Remove branding');
  const form = h(
    'form',
    { class: 'card', id: 'branding-form', novalidate: true },
    h('h2', {}, 'Branding'),
    h(
      'p',
      { class: 'hint' },
      'Your application’s name and look on the pages end users see: an authorization link’s landing page, the API-key form, and the result and error pages.',
    ),
    h(
      'div',
      { class: 'settings-split' },
      h(
        'div',
        {},
        field(
          'Display name',
          inputs.display_name,
          'Up to 80 characters; it replaces a connection’s display name on those pages.',
        ),
        field('Logo URL', inputs.logo_url, 'An https image, shown at most 48 px high.'),
        accentField,
        field('Support link', inputs.support_url, 'An http(s) or mailto: URL, shown as “Need help?”.'),
      ),
      h(
        'figure',
        { class: 'preview-figure' },
        preview,
        h(
          'figcaption',
          { class: 'hint' },
          'Preview of a link’s landing page. The logo is only marked here: the dashboard loads no images from other sites.',
        ),
        contrast,
      ),
    ),
    formError(),
    ok,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save branding'), remove),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    ok.textContent = '';
    const branding = {};
    for (const name of BRANDING_FIELDS) {
      const value = inputs[name].value.trim();
      if (value) branding[name] = value;
    }
    try {
      const saved = await api('/environment', { method: 'PATCH', body: { branding } });
      load(saved.branding);
      const removed = Object.keys(saved.branding ?? {}).length === 0;
      ok.textContent = removed
        ? 'No branding is set: end users see Portico’s plain pages.'
        : 'Branding saved: the pages end users open from now on show it.';
      toast(removed ? 'Branding removed' : 'Branding saved');
    } catch (error) {
      showProblem(form, error);
    }
  });
  remove.addEventListener('click', async () => {
    const sure = await confirmDialog(
      'Remove the branding?',
      'End users see Portico’s plain pages again: no name, logo, colour or support link.',
      'Remove branding',
    );
    if (!sure) return;
    clearProblem(form);
    ok.textContent = '';
    try {
      const saved = await api('/environment', { method: 'PATCH', body: { branding: {} } });
      load(saved.branding);
      ok.textContent = 'Branding removed: end users see Portico’s plain pages.';
      toast('Branding removed');
    } catch (error) {
      showProblem(form, error);
    }
  });
  load(stored);
  return form;
}

/** The lines of a text area that hold entries, with their line numbers (from 1). */
function entryLines(text) {
  return text
    .split('\n')
    .map((line, i) => ({ value: line.trim(), line: i + 1 }))
    .filter((x) => x.value);
}

/**
 * The environment's own redirect URL allow-list, one entry per line, beside the operator's global
 * one (PORTICO_REDIRECT_URL_ALLOWLIST), which is shown read-only.
 */
function allowlistForm(env) {
  const text = h('textarea', {
    id: 'redirect-allowlist',
    name: 'redirect_url_allowlist',
    rows: 6,
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: 'https://app.example.com\nhttps://app.example.com/oauth/',
  });
  const global = h('div', { id: 'global-allowlist' });
  const effect = h('p', { class: 'hint', id: 'allowlist-effect' });
  const render = (view) => {
    text.value = view.redirect_url_allowlist.join('\n');
    fill(
      global,
      view.global_redirect_url_allowlist.length
        ? h(
            'ul',
            { class: 'plain-list' },
            view.global_redirect_url_allowlist.map((entry) => h('li', {}, h('code', {}, entry))),
          )
        : h('p', { class: 'hint' }, 'None: PORTICO_REDIRECT_URL_ALLOWLIST is not set.'),
    );
    const total = view.global_redirect_url_allowlist.length + view.redirect_url_allowlist.length;
    effect.textContent = total
      ? `Links may send the browser (redirect_url, user_verify_url) only to URLs under ${total === 1 ? 'this entry' : `these ${total} entries`}.`
      : 'Neither list has entries: links may send the browser to any http(s) URL.';
  };
  const ok = formOk('allowlist-saved');
  const form = h(
    'form',
    { class: 'card', id: 'allowlist-form', novalidate: true },
    h('h2', {}, 'Redirect URL allow-list'),
    h(
      'p',
      { class: 'hint' },
      'Where this environment’s authorization links may send the browser when they are done. Once either list has entries, a link whose redirect_url is not under one of them is refused.',
    ),
    field(
      'This environment’s entries',
      text,
      'One per line: an origin (https://app.example.com) or a URL prefix (https://app.example.com/oauth/); at most 50. Empty removes them all.',
    ),
    h('h3', {}, 'Global entries (every environment)'),
    h('p', { class: 'hint' }, 'Set by the operator in PORTICO_REDIRECT_URL_ALLOWLIST; read-only here.'),
    global,
    effect,
    formError(),
    ok,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save allow-list')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    ok.textContent = '';
    const lines = entryLines(text.value);
    try {
      const saved = await api('/environment', {
        method: 'PATCH',
        body: { redirect_url_allowlist: lines.map((x) => x.value) },
      });
      const changed = saved.redirect_url_allowlist.join('\n') !== lines.map((x) => x.value).join('\n');
      render(saved);
      const n = saved.redirect_url_allowlist.length;
      ok.textContent = n
        ? `Allow-list saved: ${n} entr${n === 1 ? 'y' : 'ies'}${changed ? ', as Portico stores them (normalized, without duplicates)' : ''}.`
        : 'Allow-list saved: this environment has no entries of its own.';
      toast('Allow-list saved');
    } catch (error) {
      // An entry's error names its index; the text area shows lines, so name the line and entry.
      const problem = error.problem;
      if (problem?.errors)
        problem.errors = problem.errors.map((e) => {
          const index = /^\/redirect_url_allowlist\/(\d+)$/.exec(e.path ?? '')?.[1];
          const entry = index === undefined ? undefined : lines[Number(index)];
          return entry ? { ...e, message: `line ${entry.line} (${entry.value}): ${e.message}` } : e;
        });
      showProblem(form, error);
    }
  });
  render(env);
  return form;
}

/**
 * OAuth for MCP clients (GET/PUT /mcp/oauth/settings): the application's sign-in URL, where
 * Portico's authorization endpoint sends the browser; none turns MCP OAuth off.
 */
function mcpOAuthForm(initial) {
  const url = h('input', {
    id: 'mcp-sign-in-url',
    name: 'sign_in_url',
    type: 'url',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'https://app.example.com/mcp/sign-in',
  });
  const state = h('div', { id: 'mcp-oauth-state', 'aria-live': 'polite' });
  const ok = formOk('mcp-oauth-saved');
  const off = h('button', { type: 'button', class: 'danger', id: 'mcp-oauth-off' }, 'Turn off MCP OAuth');
  const render = (settings) => {
    url.value = settings.sign_in_url ?? '';
    off.disabled = !settings.sign_in_url;
    fill(
      state,
      settings.sign_in_url && settings.mcp_url
        ? [
            h('p', {}, h('span', { class: 'badge s-active' }, 'ON'), ' MCP clients connect with OAuth at:'),
            h(
              'div',
              { class: 'copy-row' },
              h('code', { id: 'mcp-url' }, settings.mcp_url),
              h(
                'button',
                { type: 'button', class: 'secondary', onclick: () => copy(settings.mcp_url, 'MCP URL') },
                'Copy MCP URL',
              ),
            ),
          ]
        : h(
            'p',
            {},
            h('span', { class: 'badge s-disconnected' }, 'OFF'),
            ' MCP clients of this environment connect only with MCP tokens.',
          ),
    );
  };
  const save = async (sign_in_url, done) => {
    clearProblem(form);
    ok.textContent = '';
    try {
      const saved = await api('/mcp/oauth/settings', { method: 'PUT', body: { sign_in_url } });
      render(saved);
      ok.textContent = done(saved);
      toast(saved.sign_in_url ? 'MCP OAuth sign-in URL saved' : 'MCP OAuth turned off');
    } catch (error) {
      showProblem(form, error);
    }
  };
  const form = h(
    'form',
    { class: 'card', id: 'mcp-oauth-form', novalidate: true },
    h('h2', {}, 'MCP clients with OAuth'),
    h(
      'p',
      { class: 'hint' },
      'MCP clients can connect to Portico’s MCP server with OAuth instead of an MCP token. Portico sends the browser to your application’s sign-in URL with mcp_auth_request_id, client_name and redirect_host; your application signs its user in and approves the request (POST /api/v1/mcp/oauth/approve).',
    ),
    state,
    field('Sign-in URL', url, 'An absolute http(s) URL without a fragment. Empty turns MCP OAuth off.'),
    formError(),
    ok,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save sign-in URL'), off),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = url.value.trim();
    void save(value || null, (saved) =>
      saved.sign_in_url
        ? 'Sign-in URL saved: MCP clients can connect with OAuth.'
        : 'MCP OAuth is off for this environment.',
    );
  });
  off.addEventListener('click', async () => {
    const sure = await confirmDialog(
      'Turn off MCP OAuth?',
      'MCP clients can no longer start an OAuth sign-in for this environment; those that use MCP tokens are not affected.',
      'Turn off',
    );
    if (sure) void save(null, () => 'MCP OAuth is off for this environment.');
  });
  render(initial);
  return form;
}

async function settingsPage() {
  const [env, mcpOAuth] = await Promise.all([
    api('/environment'),
    // A gateway without MCP OAuth (an older one) has no such route: the section is left out.
    api('/mcp/oauth/settings').catch((error) => {
      if (error.problem?.status === 404) return null;
      throw error;
    }),
  ]);
  page(
    'Settings',
    h(
      'p',
      { class: 'hint intro', id: 'environment-name' },
      'Environment ',
      h('strong', {}, env.name),
      ' (',
      h('code', {}, env.id),
      ').',
    ),
    brandingForm(env),
    allowlistForm(env),
    mcpOAuth ? mcpOAuthForm(mcpOAuth) : null,
  );
}

// ---------------------------------------------------------------- routing

const ROUTES = [
  [/^\/overview$/, overviewPage],
  [/^\/connections$/, connectionsPage],
  [/^\/connections\/new$/, newConnectionPage],
  [/^\/connections\/(.+)$/, (_p, name) => connectionPage(decodeURIComponent(name))],
  [/^\/providers$/, providersPage],
  [/^\/providers\/(.+)$/, (_p, key) => providerPage(decodeURIComponent(key))],
  [/^\/accounts$/, accountsPage],
  [/^\/accounts\/(.+)$/, (_p, id) => accountPage(decodeURIComponent(id))],
  [/^\/tools$/, toolsPage],
  [/^\/tools\/(.+)$/, (_p, name) => toolPage(decodeURIComponent(name))],
  [/^\/executions$/, executionsPage],
  [/^\/executions\/(.+)$/, (_p, id) => executionPage(decodeURIComponent(id))],
  [/^\/events$/, eventsPage],
  [/^\/clients$/, clientsPage],
  [/^\/settings$/, settingsPage],
];

async function route() {
  const [path, query = ''] = (location.hash.slice(1) || '/overview').split('?');
  for (const a of document.querySelectorAll('nav a'))
    a.toggleAttribute('aria-current', path.startsWith(a.getAttribute('href').slice(1)));
  const match = ROUTES.map(([re, fn]) => [re.exec(path), fn]).find(([m]) => m);
  if (!match)
    return page(
      'Not found',
      h('p', {}, 'No such page. ', h('a', { href: '#/overview' }, 'Go to the overview')),
    );
  try {
    await match[1](new URLSearchParams(query), ...match[0].slice(1));
    view.dataset.page = path;
  } catch (error) {
    if (error.problem?.status === 401) return;
    page('Something went wrong', h('p', { role: 'alert' }, error.message));
  }
}

window.addEventListener('hashchange', () => {
  if (!document.getElementById('top').hidden) route();
});

try {
  startSession(await api('/admin/session'));
  route();
} catch {
  signInPage();
}
