import { ApiError, api } from '../api.js';
import {
  authName,
  consoleLinks,
  credentialName,
  forgetProviders,
  providerDetail,
  providerList,
  redirectNote,
  setupSteps,
} from '../catalog.js';
import { confirmDialog } from '../dialogs.js';
import { externalLink, h, toast } from '../dom.js';
import { clearProblem, errorList, field, formError, showProblem } from '../forms.js';
import { copyButton, page } from '../layout.js';
import { route } from '../router.js';
import { table } from '../tables.js';

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
    { class: 'card', id: key ? 'replace-provider' : 'create-provider', novalidate: true, 'data-write': true },
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

export async function providersPage(params) {
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
          ? externalLink(
              p.docs_url,
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
      h(
        'span',
        { 'data-write': true },
        h('a', { href: '#create-provider', onclick: focusCreate }, 'Add a custom provider'),
        '.',
      ),
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

export async function providerPage(key) {
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
      ['Documentation', p.docs_url ? externalLink(p.docs_url, p.docs_url) : '—'],
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
    h('pre', { class: 'json', id: 'definition-json', tabindex: '0' }, json),
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
            {
              class: 'button secondary',
              href: `#/providers?template=${encodeURIComponent(p.key)}`,
              'data-write': true,
            },
            'Use as a template for a custom provider',
          )
        : h(
            'button',
            { type: 'button', class: 'danger', id: 'delete-provider', onclick: remove, 'data-write': true },
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

export const nav = { path: '/providers', label: 'Providers' };

export const routes = [
  [/^\/providers$/, providersPage],
  [/^\/providers\/(.+)$/, (_p, key) => providerPage(decodeURIComponent(key))],
];
