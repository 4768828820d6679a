import { ApiError, api, setCsrf } from './api.js';
import { chartExecutions, latencyBars } from './charts.js';
import { append, clearProblem, confirmDialog, copy, field, h, showProblem, toast, when } from './dom.js';
import { renderSVG } from './vendor/uqr.mjs';

const view = document.getElementById('view');
const STATUSES = ['PENDING_AUTH', 'ACTIVE', 'EXPIRED', 'DISCONNECTED'];
let providers = null;

async function providerList() {
  providers ??= (await api('/providers')).data;
  return providers;
}

function page(title, ...children) {
  document.title = `${title} · Portico dashboard`;
  view.replaceChildren(h('h1', {}, title), ...children.flat());
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

async function connectionForm(name) {
  const all = await providerList();
  const existing = name ? await api(`/connections/${encodeURIComponent(name)}`) : null;
  const provider = h(
    'select',
    { id: 'provider', name: 'provider', disabled: Boolean(existing) },
    all.map((p) =>
      h('option', { value: p.key, selected: existing?.provider === p.key }, `${p.display_name} (${p.kind})`),
    ),
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

  const current = () => all.find((p) => p.key === provider.value);
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
  const renderMode = () => {
    credentials.hidden = sandbox.checked;
  };
  provider.addEventListener('change', renderScopes);
  sandbox.addEventListener('change', renderMode);
  renderScopes();
  renderMode();

  const form = h(
    'form',
    { class: 'card', id: 'connection-form', novalidate: true },
    field('Provider', provider),
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
    credentials,
    scopeBox,
    field('Other scopes', extraScopes, 'Space-separated, added to the ticked ones.'),
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
    const scopes = [...scopeBox.querySelectorAll('[data-scope]:checked')]
      .map((x) => x.value)
      .concat(extraScopes.value.split(/[\s,]+/).filter(Boolean));
    const body = existing ? {} : { name: nameInput.value, provider: provider.value };
    if (!existing && sandbox.checked) body.sandbox = true;
    if (!sandbox.checked && clientId.value !== (existing?.client_id ?? '')) body.client_id = clientId.value;
    if (!sandbox.checked && clientSecret.value) body.client_secret = clientSecret.value;
    if (current().setup.scopes.length || scopes.length) body.scopes = scopes;
    if (displayName.value || existing?.display_name) body.display_name = displayName.value || null;
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
  const p = all.find((x) => x.key === conn.provider);
  const { form } = await connectionForm(name);
  page(
    conn.name,
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Redirect URI'),
      h('p', {}, 'Register this exact URI at the provider:'),
      h(
        'div',
        { class: 'copy-row' },
        h('code', { id: 'redirect-uri' }, conn.redirect_uri),
        copyButton(conn.redirect_uri, 'Redirect URI'),
      ),
      conn.sandbox
        ? h(
            'p',
            { class: 'hint' },
            'This is a sandbox connection: the built-in emulator registered it already; nothing to do at the provider.',
          )
        : [
            h('h3', {}, `Set up ${p.display_name} at the provider`),
            h(
              'ol',
              { class: 'steps' },
              p.setup.steps.map((s) => h('li', {}, s.replace('{redirect_uri}', conn.redirect_uri))),
            ),
            h(
              'p',
              {},
              h(
                'a',
                { href: p.setup.console.url, rel: 'noopener noreferrer', target: '_blank' },
                `Open the ${p.setup.console.name}`,
              ),
            ),
          ],
      h(
        'p',
        {},
        h(
          'a',
          { class: 'button', href: `#/accounts?connection_name=${encodeURIComponent(conn.name)}&link=1` },
          'Generate an authorization link',
        ),
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

async function newConnectionPage() {
  const { form } = await connectionForm(null);
  page('New connection', form);
}

// ---------------------------------------------------------------- accounts

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

  page(
    'Connected accounts',
    connections.length ? linkForm : h('p', {}, 'Create a connection first.'),
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

// ---------------------------------------------------------------- routing

const ROUTES = [
  [/^\/overview$/, overviewPage],
  [/^\/connections$/, connectionsPage],
  [/^\/connections\/new$/, newConnectionPage],
  [/^\/connections\/(.+)$/, (_p, name) => connectionPage(decodeURIComponent(name))],
  [/^\/accounts$/, accountsPage],
  [/^\/accounts\/(.+)$/, (_p, id) => accountPage(decodeURIComponent(id))],
  [/^\/tools$/, toolsPage],
  [/^\/tools\/(.+)$/, (_p, name) => toolPage(decodeURIComponent(name))],
  [/^\/executions$/, executionsPage],
  [/^\/executions\/(.+)$/, (_p, id) => executionPage(decodeURIComponent(id))],
  [/^\/events$/, eventsPage],
  [/^\/clients$/, clientsPage],
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
