import { api } from '../api.js';
import { h, when } from '../dom.js';
import { field } from '../forms.js';
import { page } from '../layout.js';
import { table } from '../tables.js';

export const EVENT_TYPES = [
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
  'trigger.fired',
  'trigger.state_changed',
];

export async function eventsPage(params) {
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
    h(
      'p',
      { class: 'hint' },
      'The newest 100; webhook endpoints receive them signed (see docs/guides/events-and-webhooks.md).',
    ),
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

export const nav = { path: '/events', label: 'Events' };

export const routes = [[/^\/events$/, eventsPage]];
