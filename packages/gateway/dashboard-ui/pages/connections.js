import { api } from '../api.js';
import {
  authName,
  consoleLinks,
  credentialName,
  providerList,
  redirectNote,
  setupSteps,
} from '../catalog.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { copyButton, fill, page } from '../layout.js';
import { route } from '../router.js';
import { table } from '../tables.js';

export async function connectionsPage() {
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
    h('p', {}, h('a', { class: 'button', href: '#/connections/new', 'data-write': true }, 'New connection')),
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
                'data-write': true,
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
    { class: 'card', id: 'connection-form', novalidate: true, 'data-edit': true },
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

export async function connectionPage(name) {
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

export async function newConnectionPage(params) {
  const { form } = await connectionForm(null, params.get('provider') ?? undefined);
  page('New connection', form);
}

export const nav = { path: '/connections', label: 'Connections' };

export const routes = [
  [/^\/connections$/, connectionsPage],
  [/^\/connections\/new$/, newConnectionPage],
  [/^\/connections\/(.+)$/, (_p, name) => connectionPage(decodeURIComponent(name))],
];
