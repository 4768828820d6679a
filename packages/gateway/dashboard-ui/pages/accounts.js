import { api } from '../api.js';
import { providerDetail } from '../catalog.js';
import { confirmDialog } from '../dialogs.js';
import { copy, h, toast, when } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { badge, copyButton, fill, page, STATUSES } from '../layout.js';
import { route } from '../router.js';
import { table } from '../tables.js';
import { renderSVG } from '../vendor/uqr.mjs';

export async function freshLink(connection_name, identifier) {
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
    { class: 'card', id: 'import-form', novalidate: true, 'data-write': true },
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

export async function accountsPage(params) {
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
    { class: 'card', id: 'link-form', 'data-write': true },
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
      'data-write': true,
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

export async function accountPage(id) {
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
        {
          type: 'button',
          class: 'secondary',
          'data-write': true,
          onclick: () => freshLink(a.connection_name, a.identifier),
        },
        'Copy a new authorization link',
      ),
      a.status !== 'DISCONNECTED'
        ? h(
            'button',
            {
              type: 'button',
              class: 'danger',
              id: 'disconnect',
              'data-write': true,
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

export const nav = { path: '/accounts', label: 'Accounts' };

export const routes = [
  [/^\/accounts$/, accountsPage],
  [/^\/accounts\/(.+)$/, (_p, id) => accountPage(decodeURIComponent(id))],
];
