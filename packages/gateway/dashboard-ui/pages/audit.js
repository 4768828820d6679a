import { api } from '../api.js';
import { h, when } from '../dom.js';
import { field } from '../forms.js';
import { dash, page } from '../layout.js';
import { table } from '../tables.js';

const FILTERS = ['actor_id', 'actor_type', 'action', 'resource_type', 'resource_id', 'since', 'until'];
const ACTOR_TYPES = ['client', 'admin', 'cli', 'link', 'system'];

const toLocal = (iso) => {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export async function auditPage(params) {
  const filters = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? '']));
  const list = await api('/audit', {
    query: { ...filters, page_token: params.get('page_token') ?? '', page_size: 100 },
  });
  const input = (name, label, attrs = {}) =>
    field(label, h('input', { id: `au-${name}`, name, value: filters[name], autocomplete: 'off', ...attrs }));
  const since = h('input', { id: 'au-since', type: 'datetime-local', value: toLocal(filters.since) });
  const until = h('input', { id: 'au-until', type: 'datetime-local', value: toLocal(filters.until) });
  const form = h(
    'form',
    { class: 'card filters', role: 'search', 'aria-label': 'Filter the audit log' },
    input('action', 'Action', { placeholder: 'connection. or connection.created' }),
    field(
      'Actor type',
      h(
        'select',
        { id: 'au-actor_type', name: 'actor_type' },
        h('option', { value: '' }, 'Any'),
        ACTOR_TYPES.map((t) => h('option', { value: t, selected: t === filters.actor_type }, t)),
      ),
    ),
    input('actor_id', 'Actor'),
    input('resource_type', 'Resource type'),
    input('resource_id', 'Resource'),
    field('From', since),
    field('Until', until),
    h('button', { type: 'submit' }, 'Filter'),
  );
  const query = (extra = {}) =>
    new URLSearchParams(Object.entries({ ...filters, ...extra }).filter(([, v]) => v));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const q = new URLSearchParams([...new FormData(form)].filter(([, v]) => v));
    if (since.value) q.set('since', new Date(since.value).toISOString());
    if (until.value) q.set('until', new Date(until.value).toISOString());
    location.hash = `#/audit?${q}`;
  });
  page(
    'Audit log',
    h(
      'p',
      { class: 'hint' },
      'Who changed what, newest first: every change through the API, the dashboard and the CLI.',
    ),
    form,
    h(
      'p',
      { class: 'actions' },
      h(
        'a',
        {
          class: 'button secondary',
          id: 'audit-export',
          href: `/api/v1/audit/export?${query()}`,
          download: '',
        },
        'Export as JSON lines',
      ),
    ),
    table(
      ['When', 'Action', 'Actor', 'Resource', 'Result', 'From'],
      list.data.map((e) =>
        h(
          'tr',
          {},
          h('td', {}, when(e.at)),
          h('td', {}, h('code', {}, e.action)),
          h(
            'td',
            {},
            `${e.actor_type}:${dash(e.actor_id)}`,
            e.credential && e.credential !== e.actor_id ? ` (${e.credential})` : '',
          ),
          h('td', {}, [e.resource_type, e.resource_id].filter(Boolean).join(' ') || '—'),
          h('td', { class: 'n' }, dash(e.status_code)),
          h('td', {}, dash(e.ip)),
        ),
      ),
      'Audit entries',
    ),
    list.next_page_token
      ? h(
          'p',
          {},
          h('a', { href: `#/audit?${query({ page_token: list.next_page_token })}` }, 'Older entries'),
        )
      : null,
  );
}

export const nav = { path: '/audit', label: 'Audit log' };

export const routes = [[/^\/audit$/, auditPage]];
