import { ApiError, api } from '../api.js';
import { providerList } from '../catalog.js';
import { h } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { page } from '../layout.js';

/** Tools a search page shows; "More" fetches the next page of matches. */
const SEARCH_PAGE_SIZE = 50;

export async function toolsPage(params) {
  const q = (params.get('q') ?? '').trim();
  const provider = params.get('provider') ?? '';
  const readOnly = params.get('read_only') ?? '';
  const toolset = params.get('toolset') ?? '';
  // With words, the gateway's tool search ranks the whole catalog by how well each tool fits them.
  const query = {
    provider,
    read_only: readOnly,
    toolset,
    ...(q ? { query: q, page_size: SEARCH_PAGE_SIZE } : {}),
  };
  const [tools, all, sets] = await Promise.all([
    api('/tools', { query }),
    providerList(),
    api('/toolsets', { query: { page_size: 100 } }),
  ]);
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
        placeholder: 'a task in words, e.g. send an email',
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
    field(
      'Effect',
      h(
        'select',
        { id: 'tool-read-only', name: 'read_only' },
        h('option', { value: '' }, 'Reads or writes'),
        h('option', { value: 'true', selected: readOnly === 'true' }, 'Reads only'),
        h('option', { value: 'false', selected: readOnly === 'false' }, 'Writes'),
      ),
    ),
    field(
      'Toolset',
      h(
        'select',
        { id: 'tool-toolset', name: 'toolset' },
        h('option', { value: '' }, 'The whole catalog'),
        sets.data.map((s) => h('option', { value: s.name, selected: s.name === toolset }, s.name)),
      ),
    ),
    h('button', { type: 'submit' }, 'Search'),
  );
  search.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/tools?${new URLSearchParams([...new FormData(search)].filter(([, v]) => v))}`;
  });
  const list = h('ul', { class: 'tool-list', id: 'tool-list' }, tools.data.map(toolCard));
  const count = h(
    'p',
    { class: 'hint', id: 'tool-count', 'data-total': String(tools.total ?? tools.data.length) },
    q ? `${tools.total} tools match, best first.` : `${tools.total ?? tools.data.length} tools.`,
  );
  let next = tools.next_page_token;
  const more = h('button', { type: 'button', id: 'more-tools', class: 'secondary' }, 'More');
  more.hidden = !next;
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api('/tools', { query: { ...query, page_token: next } });
      list.append(...page.data.map(toolCard));
      next = page.next_page_token;
      more.hidden = !next;
    } finally {
      more.disabled = false;
    }
  });
  page(
    'Tools',
    search,
    tools.notice ? h('p', { class: 'notice' }, tools.notice) : null,
    !tools.notice && tools.data.length === 0
      ? h('p', { class: 'hint', id: 'no-tools' }, 'No tool matches the search.')
      : tools.notice
        ? null
        : count,
    list,
    more,
  );
}

function toolCard(t) {
  return h(
    'li',
    { class: 'card' },
    h('a', { href: `#/tools/${t.name}` }, h('code', {}, t.name)),
    h('p', {}, (t.description ?? '').split('\n')[0]),
    t.tags?.length
      ? h(
          'p',
          { class: 'tags' },
          t.tags.map((tag) => h('span', { class: 'tag' }, tag)),
        )
      : null,
  );
}

/**
 * The version parameters every tool accepts (src/tools/versions.ts; the static page cannot import
 * it): operators' overrides, not the tool's own input, so the playground folds them away.
 */
export const VERSION_OVERRIDES = ['schema_version', 'tool_version', 'upstream_version'];

/**
 * A form for a JSON Schema object: simple fields as inputs, anything nested as a JSON text area;
 * the version overrides in a closed "Advanced" section.
 */
function schemaForm(schema) {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const fields = [];
  const overrides = [];
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
    const labelled = field(`${name}${required.has(name) ? ' *' : ''}`, input, s.description?.split('\n')[0]);
    (VERSION_OVERRIDES.includes(name) ? overrides : fields).push(labelled);
    readers.push([name, read]);
  }
  if (overrides.length) {
    fields.push(
      h(
        'details',
        { id: 'advanced-overrides', class: 'advanced' },
        h('summary', {}, 'Advanced: version overrides'),
        h('p', { class: 'hint' }, 'Leave empty for the current versions; for operators pinning a call.'),
        overrides,
      ),
    );
  }
  const read = () => Object.fromEntries(readers.map(([n, r]) => [n, r()]).filter(([, v]) => v !== undefined));
  return { fields, read };
}

export async function toolPage(name) {
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
    { class: 'card', id: 'playground', novalidate: true, 'data-write': true },
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

export const nav = { path: '/tools', label: 'Tools' };

export const routes = [
  [/^\/tools$/, toolsPage],
  [/^\/tools\/(.+)$/, (_p, name) => toolPage(decodeURIComponent(name))],
];
