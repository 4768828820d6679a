import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { field } from '../forms.js';
import { badge, dash, page, write } from '../layout.js';
import { table } from '../tables.js';

export const TRIGGER_STATES = ['active', 'degraded', 'failing', 'paused'];

/**
 * Trigger subscriptions and their health: how many are in each state, and each one's last success,
 * last error and next poll, so a trigger that stopped firing is seen here before anyone misses it.
 */
export async function triggersPage(params) {
  const filters = {
    state: params.get('state') ?? '',
    identifier: params.get('identifier') ?? '',
    trigger_type: params.get('trigger_type') ?? '',
  };
  const [summary, types] = await Promise.all([api('/triggers/summary'), api('/trigger-types')]);
  const holder = h('div', { id: 'triggers-table' });
  const form = h(
    'form',
    { class: 'card filters', role: 'search' },
    field(
      'State',
      h(
        'select',
        { id: 'tr-state', name: 'state' },
        h('option', { value: '' }, 'Any state'),
        TRIGGER_STATES.map((s) => h('option', { value: s, selected: s === filters.state }, s)),
      ),
    ),
    field(
      'Type',
      h(
        'select',
        { id: 'tr-type', name: 'trigger_type' },
        h('option', { value: '' }, 'Any type'),
        types.data.map((t) =>
          h('option', { value: t.name, selected: t.name === filters.trigger_type }, t.name),
        ),
      ),
    ),
    field('Identifier', h('input', { id: 'tr-identifier', name: 'identifier', value: filters.identifier })),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/triggers?${new URLSearchParams([...new FormData(form)].filter(([, v]) => v))}`;
  });
  await renderList(holder, filters);
  page(
    'Triggers',
    h(
      'p',
      { class: 'hint' },
      'Changes at providers delivered as trigger.fired events (see docs/guides/triggers.md). Create them through the API, the SDKs or the CLI.',
    ),
    h(
      'ul',
      { class: 'card trigger-health', 'aria-label': 'Triggers by state' },
      TRIGGER_STATES.map((s) =>
        h(
          'li',
          {},
          h(
            'a',
            { href: `#/triggers?state=${s}` },
            badge(s),
            ' ',
            h('strong', {}, String(summary.states[s] ?? 0)),
          ),
        ),
      ),
    ),
    form,
    holder,
  );
}

async function renderList(holder, filters) {
  const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
  const list = await api('/triggers', { query: { ...query, page_size: 100 } });
  holder.replaceChildren(
    table(
      ['Type', 'Connection', 'Identifier', 'State', 'Last success', 'Last error', 'Next poll', ''],
      list.data.map((t) =>
        h(
          'tr',
          { id: `trigger-${t.id}` },
          h('td', {}, h('code', {}, t.trigger_type)),
          h('td', {}, t.connection_name),
          h('td', {}, t.identifier),
          h(
            'td',
            {},
            badge(t.state),
            t.pause_reason === 'account_not_active'
              ? h('span', { class: 'hint' }, ' account not active')
              : null,
            t.consecutive_failures ? h('span', { class: 'hint' }, ` ${t.consecutive_failures} failed`) : null,
          ),
          h('td', {}, when(t.last_success_at)),
          h(
            'td',
            { class: 'wrap-anywhere' },
            t.last_error ? `${when(t.last_error_at)}: ${t.last_error}` : dash(null),
          ),
          h('td', {}, t.next_poll_at ? when(t.next_poll_at) : '—'),
          h(
            'td',
            { class: 'actions' },
            write(
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  onclick: () => setPaused(t, t.state !== 'paused', holder, filters),
                },
                t.state === 'paused' ? 'Resume' : 'Pause',
              ),
            ),
            write(
              h(
                'button',
                { type: 'button', class: 'danger', onclick: () => remove(t, holder, filters) },
                'Delete',
              ),
            ),
          ),
        ),
      ),
      'Trigger subscriptions',
    ),
  );
}

async function setPaused(t, paused, holder, filters) {
  try {
    await api(`/triggers/${encodeURIComponent(t.id)}`, { method: 'PATCH', body: { paused } });
    toast(paused ? 'Trigger paused' : 'Trigger resumed');
    await renderList(holder, filters);
  } catch (error) {
    toast(error.message);
  }
}

async function remove(t, holder, filters) {
  const ok = await confirmDialog(
    `Delete the ${t.trigger_type} trigger of ${t.identifier}?`,
    'Portico stops watching at once; events already recorded stay.',
    'Delete trigger',
  );
  if (!ok) return;
  try {
    await api(`/triggers/${encodeURIComponent(t.id)}`, { method: 'DELETE' });
    toast('Trigger deleted');
    await renderList(holder, filters);
  } catch (error) {
    toast(error.message);
  }
}

export const nav = { path: '/triggers', label: 'Triggers' };

export const routes = [[/^\/triggers$/, triggersPage]];
