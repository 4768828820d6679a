import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { copyButton, page, write } from '../layout.js';
import { table } from '../tables.js';

/** The list fields of a toolset, each typed as comma-separated words. */
const LISTS = [
  ['tools', 'Tools', 'Names, e.g. notes_page_create, calendar_list_events'],
  ['patterns', 'Name patterns', '* stands for any characters, e.g. github_issues_*'],
  ['providers', 'Providers', 'Provider keys, e.g. google_calendar, notion'],
  ['connections', 'Connections', "Connection names: their provider's tools, or their MCP server's"],
  ['tags', 'Tags', 'Only tools with every tag, e.g. read-only, calendar'],
];

const words = (value) =>
  value
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);

function createForm(holder) {
  const name = h('input', {
    id: 'toolset-name',
    name: 'name',
    autocomplete: 'off',
    placeholder: 'calendar-readers',
  });
  const description = h('input', { id: 'toolset-description', name: 'description', autocomplete: 'off' });
  const inputs = LISTS.map(([key]) => h('input', { id: `toolset-${key}`, name: key, autocomplete: 'off' }));
  const mode = h(
    'select',
    { id: 'toolset-mcp-mode', name: 'mcp_mode' },
    h('option', { value: 'full' }, 'The list of its tools'),
    h('option', { value: 'search' }, 'A search tool and a call tool'),
  );
  const form = h(
    'form',
    { class: 'card', id: 'toolset-form', novalidate: true },
    h('h2', {}, 'New toolset'),
    h(
      'p',
      { class: 'hint' },
      'A tool is in the toolset when its name, pattern, provider or connection is listed (or none of these is given), and it has every tag.',
    ),
    field('Name', name, 'Lower case, digits, - and _: the end of its MCP URL.'),
    field('Description', description),
    LISTS.map(([, label, hint], i) => field(label, inputs[i], hint)),
    field('Its MCP URL offers', mode),
    formError(),
    h('button', { type: 'submit' }, 'Create toolset'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    const body = { name: name.value.trim(), mcp_mode: mode.value };
    if (description.value.trim()) body.description = description.value.trim();
    LISTS.forEach(([key], i) => {
      const list = words(inputs[i].value);
      if (list.length) body[key] = list;
    });
    try {
      const created = await api('/toolsets', { method: 'POST', body });
      form.reset();
      await renderList(holder);
      toast(`Toolset ${created.name} created`);
    } catch (error) {
      showProblem(form, error);
    }
  });
  return form;
}

async function renderList(holder) {
  const list = await api('/toolsets', { query: { page_size: 100 } });
  holder.replaceChildren(
    table(
      ['Name', 'Chooses', 'MCP URL', 'Updated', ''],
      list.data.map((t) =>
        h(
          'tr',
          {},
          h(
            'td',
            {},
            h('a', { href: `#/tools?toolset=${encodeURIComponent(t.name)}` }, h('code', {}, t.name)),
            t.description ? h('p', { class: 'hint' }, t.description) : null,
          ),
          h(
            'td',
            {},
            LISTS.filter(([key]) => t[key]?.length).map(([key, label]) =>
              h('div', {}, `${label}: `, h('code', {}, t[key].join(', '))),
            ),
          ),
          h(
            'td',
            {},
            h('code', { class: 'mcp-url' }, t.mcp_url),
            ' ',
            copyButton(t.mcp_url, `MCP URL of ${t.name}`),
            h(
              'div',
              { class: 'hint' },
              t.mcp_mode === 'search' ? 'search and call tools' : 'its tools listed',
            ),
          ),
          h('td', {}, when(t.updated_at)),
          h(
            'td',
            {},
            write(
              h(
                'button',
                { type: 'button', class: 'danger', onclick: () => deleteToolset(t, holder) },
                'Delete',
              ),
            ),
          ),
        ),
      ),
      'Toolsets',
    ),
  );
}

async function deleteToolset(t, holder) {
  const ok = await confirmDialog(
    `Delete the toolset ${t.name}?`,
    'Its MCP URL stops answering at once; listings that name it are refused.',
    'Delete toolset',
  );
  if (!ok) return;
  try {
    await api(`/toolsets/${encodeURIComponent(t.name)}`, { method: 'DELETE' });
    toast(`Toolset ${t.name} deleted`);
    await renderList(holder);
  } catch (error) {
    toast(error.message);
  }
}

export async function toolsetsPage() {
  const list = h('div', { id: 'toolsets-table' });
  await renderList(list);
  page(
    'Toolsets',
    h(
      'p',
      { class: 'hint' },
      'Named sets of tools: every tool listing, SDK adapter and LLM format takes one, and each has an MCP URL of its own for the same per-user tokens as /mcp.',
    ),
    write(createForm(list)),
    list,
  );
}

export const nav = { path: '/toolsets', label: 'Toolsets' };

export const routes = [[/^\/toolsets$/, toolsetsPage]];
