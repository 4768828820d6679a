import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { badge, copyButton, dash, page, write } from '../layout.js';
import { route } from '../router.js';
import { table } from '../tables.js';
import { EVENT_TYPES } from './events.js';

/** The signing secret, shown once after a create or a rotation. */
function secretNotice(out, secret, what) {
  out.replaceChildren(
    h(
      'div',
      { class: 'notice', id: 'webhook-secret-notice' },
      h('p', {}, h('strong', {}, `${what}: store the signing secret now, it is shown only once.`)),
      h('p', {}, h('code', { id: 'webhook-secret' }, secret)),
      copyButton(secret, 'Signing secret'),
    ),
  );
}

function createForm(out) {
  const url = h('input', {
    id: 'webhook-url',
    name: 'url',
    type: 'url',
    autocomplete: 'off',
    placeholder: 'https://app.example.com/portico/events',
  });
  const description = h('input', { id: 'webhook-description', name: 'description', autocomplete: 'off' });
  const all = h('input', { type: 'checkbox', id: 'ev-all', value: '*', checked: true });
  const boxes = EVENT_TYPES.map((t) => h('input', { type: 'checkbox', id: `ev-${t}`, value: t }));
  const form = h(
    'form',
    { class: 'card', id: 'webhook-form', novalidate: true },
    h('h2', {}, 'Add an endpoint'),
    field('URL', url, 'An https URL on a public address; Portico POSTs each event there, signed.'),
    field('Description', description),
    h(
      'fieldset',
      { class: 'event-boxes' },
      h('legend', {}, 'Events'),
      h(
        'div',
        { class: 'check' },
        all,
        h('label', { for: 'ev-all' }, 'Every event (* — except tool.execution.failed, which is opt-in)'),
      ),
      boxes.map((b) => h('div', { class: 'check' }, b, h('label', { for: b.id }, b.value))),
      h('p', { class: 'field-error', 'data-error-for': 'events' }),
    ),
    formError(),
    h('button', { type: 'submit' }, 'Add endpoint'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    const events = [all, ...boxes].filter((b) => b.checked).map((b) => b.value);
    const body = { url: url.value.trim(), events };
    if (description.value.trim()) body.description = description.value.trim();
    try {
      const created = await api('/webhooks', { method: 'POST', body });
      url.value = '';
      description.value = '';
      await renderList(out.list);
      secretNotice(out.secret, created.secret, `Endpoint ${created.id} added`);
      toast('Webhook endpoint added');
    } catch (error) {
      showProblem(form, error);
    }
  });
  return form;
}

async function renderList(holder) {
  const list = await api('/webhooks', { query: { page_size: 100 } });
  holder.replaceChildren(
    table(
      ['URL', 'Status', 'Events', 'Created', ''],
      list.data.map((w) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/webhooks/${encodeURIComponent(w.id)}` }, w.url)),
          h('td', {}, badge(w.enabled ? 'ENABLED' : 'DISABLED')),
          h('td', {}, w.events.join(', ')),
          h('td', {}, when(w.created_at)),
          h(
            'td',
            {},
            write(
              h(
                'button',
                { type: 'button', class: 'danger', onclick: () => deleteEndpoint(w, holder) },
                'Delete',
              ),
            ),
          ),
        ),
      ),
      'Webhook endpoints',
    ),
  );
}

async function deleteEndpoint(w, holder) {
  const ok = await confirmDialog(
    `Delete the endpoint ${w.url}?`,
    'Portico stops sending events there at once; deliveries not yet made are dropped.',
    'Delete endpoint',
  );
  if (!ok) return;
  try {
    await api(`/webhooks/${encodeURIComponent(w.id)}`, { method: 'DELETE' });
    toast('Webhook endpoint deleted');
    if (holder) await renderList(holder);
    else location.hash = '#/webhooks';
  } catch (error) {
    toast(error.message);
  }
}

export async function webhooksPage() {
  const list = h('div', { id: 'webhooks-table' });
  const secret = h('div', { id: 'webhook-created', 'aria-live': 'polite' });
  await renderList(list);
  page(
    'Webhooks',
    h(
      'p',
      { class: 'hint' },
      'Endpoints receive the events as signed POSTs (Standard Webhooks); failed deliveries are retried with back-off.',
    ),
    write(createForm({ list, secret })),
    secret,
    list,
  );
}

export async function webhookPage(id) {
  const [w, deliveries] = await Promise.all([
    api(`/webhooks/${encodeURIComponent(id)}`),
    api(`/webhooks/${encodeURIComponent(id)}/deliveries`, { query: { page_size: 100 } }),
  ]);
  const secret = h('div', { id: 'webhook-created', 'aria-live': 'polite' });
  const retry = async (d) => {
    try {
      await api(`/webhooks/${encodeURIComponent(w.id)}/deliveries/${encodeURIComponent(d.event_id)}/retry`, {
        method: 'POST',
      });
      toast(`Delivery of ${d.event_id} queued again`);
      route();
    } catch (error) {
      toast(error.message);
    }
  };
  const rotate = async () => {
    const ok = await confirmDialog(
      'Rotate the signing secret?',
      'A new secret signs from now on; the previous one keeps signing too for 24 hours, so receivers can switch.',
      'Rotate secret',
    );
    if (!ok) return;
    try {
      const rotated = await api(`/webhooks/${encodeURIComponent(w.id)}/rotate-secret`, { method: 'POST' });
      secretNotice(secret, rotated.secret, 'Secret rotated');
      toast('Signing secret rotated');
    } catch (error) {
      toast(error.message);
    }
  };
  const toggle = async () => {
    try {
      await api(`/webhooks/${encodeURIComponent(w.id)}`, { method: 'PATCH', body: { enabled: !w.enabled } });
      toast(w.enabled ? 'Endpoint disabled' : 'Endpoint enabled');
      route();
    } catch (error) {
      toast(error.message);
    }
  };
  page(
    `Webhook ${w.id}`,
    h(
      'dl',
      { class: 'card details' },
      [
        ['URL', w.url],
        ['Description', dash(w.description)],
        ['Status', badge(w.enabled ? 'ENABLED' : 'DISABLED')],
        ['Disabled because', dash(w.disabled_reason)],
        ['Events', w.events.join(', ')],
        ['Previous secret signs until', when(w.previous_secret_expires_at)],
        ['Created', when(w.created_at)],
        ['Updated', when(w.updated_at)],
      ].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
    h(
      'div',
      { class: 'actions' },
      write(h('button', { type: 'button', class: 'secondary', onclick: rotate }, 'Rotate secret')),
      write(
        h(
          'button',
          { type: 'button', class: 'secondary', onclick: toggle },
          w.enabled ? 'Disable' : 'Enable',
        ),
      ),
      write(h('button', { type: 'button', class: 'danger', onclick: () => deleteEndpoint(w) }, 'Delete')),
    ),
    secret,
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Delivery log'),
      table(
        ['When', 'Event', 'Result', 'Status code', 'Attempt', 'Error', ''],
        deliveries.data.map((d) =>
          h(
            'tr',
            {},
            h('td', {}, when(d.created_at)),
            h('td', {}, h('code', {}, d.event_type), ' ', h('span', { class: 'hint' }, d.event_id)),
            h('td', {}, badge(d.delivery_status ?? (d.error ? 'FAILED' : 'DELIVERED'))),
            h('td', { class: 'n' }, dash(d.status_code)),
            h('td', { class: 'n' }, dash(d.attempt)),
            h('td', {}, dash(d.error)),
            h(
              'td',
              {},
              write(h('button', { type: 'button', class: 'secondary', onclick: () => retry(d) }, 'Retry')),
            ),
          ),
        ),
      ),
    ),
    h('p', {}, h('a', { href: '#/webhooks' }, 'All endpoints')),
  );
}

export const nav = { path: '/webhooks', label: 'Webhooks' };

export const routes = [
  [/^\/webhooks$/, webhooksPage],
  [/^\/webhooks\/(.+)$/, (_p, id) => webhookPage(decodeURIComponent(id))],
];
