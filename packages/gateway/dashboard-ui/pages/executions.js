import { api } from '../api.js';
import { h, when } from '../dom.js';
import { field } from '../forms.js';
import { badge, dash, page } from '../layout.js';
import { filterHash } from '../router.js';
import { table } from '../tables.js';

const ms = (v) => (typeof v === 'number' ? `${v} ms` : '—');
/** A datetime-local value (the browser's time zone) as an ISO instant for the API, or ''. */
const toIso = (local) => (local ? new Date(local).toISOString() : '');
/** An ISO instant as a datetime-local value. */
const toLocal = (iso) => {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export async function executionsPage(params) {
  const filters = {
    tool_name: params.get('tool_name') ?? '',
    identifier: params.get('identifier') ?? '',
    status: params.get('status') ?? '',
    since: params.get('since') ?? '',
    until: params.get('until') ?? '',
    page_token: params.get('page_token') ?? '',
  };
  const list = await api('/executions', { query: { ...filters, page_size: 100 } });
  const since = h('input', { id: 'e-since', type: 'datetime-local', value: toLocal(filters.since) });
  const until = h('input', { id: 'e-until', type: 'datetime-local', value: toLocal(filters.until) });
  const form = h(
    'form',
    { class: 'card filters', role: 'search', 'aria-label': 'Filter executions' },
    field('Identifier', h('input', { id: 'e-identifier', name: 'identifier', value: filters.identifier })),
    field('Tool', h('input', { id: 'e-tool', name: 'tool_name', value: filters.tool_name })),
    field(
      'Status',
      h(
        'select',
        { id: 'e-status', name: 'status' },
        h('option', { value: '' }, 'Any'),
        ['success', 'error'].map((s) => h('option', { value: s, selected: s === filters.status }, s)),
      ),
    ),
    field('From', since),
    field('Until', until),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const base = filterHash('/executions', form);
    const q = new URLSearchParams(base.split('?')[1]);
    if (since.value) q.set('since', toIso(since.value));
    if (until.value) q.set('until', toIso(until.value));
    location.hash = `#/executions?${q}`;
  });
  const next = list.next_page_token
    ? h(
        'p',
        {},
        h(
          'a',
          {
            href: `#/executions?${new URLSearchParams(
              Object.entries({ ...filters, page_token: list.next_page_token }).filter(([, v]) => v),
            )}`,
          },
          'Older executions',
        ),
      )
    : null;
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
          h('td', { class: 'n' }, ms(e.duration_ms)),
        ),
      ),
    ),
    next,
  );
}

const details = (id, rows) =>
  h(
    'dl',
    { class: 'card details', id },
    rows.map(([k, v, key]) => [
      h('dt', {}, k),
      h('dd', key ? { id: `execution-${key}` } : {}, v === undefined || v === null ? '—' : v),
    ]),
  );

const json = (value, id) =>
  value === undefined || value === null
    ? h('p', { class: 'hint', id }, '—')
    : h('pre', { class: 'json', id, tabindex: '0' }, JSON.stringify(value, null, 2));

/**
 * Everything needed to debug a call: the problem and its field errors, the input (secret-looking
 * fields already masked by the server), the output summary, the provider's answer, attempts,
 * whether the token was refreshed, timings and links. Absent fields show "—".
 */
export async function executionPage(id) {
  const e = await api(`/executions/${encodeURIComponent(id)}`);
  const error = e.error ?? (e.error_code ? { code: e.error_code } : null);
  // The ids themselves, else the last segment of the API links.
  const last = (link) => (link ? decodeURIComponent(String(link).split('/').pop()) : null);
  const accountId = e.connected_account_id ?? last(e.links?.account);
  const connectionName = e.connection_name ?? last(e.links?.connection);
  const problem = error
    ? h(
        'section',
        { class: 'card problem-card', id: 'execution-problem', 'aria-labelledby': 'problem-title' },
        h('h2', { id: 'problem-title' }, 'Problem'),
        h('p', {}, h('code', { id: 'execution-error-code' }, dash(error.code))),
        h('p', { id: 'execution-error-detail' }, dash(error.detail)),
        error.errors?.length
          ? h(
              'ul',
              { class: 'field-errors', id: 'execution-field-errors' },
              error.errors.map((x) => h('li', {}, h('code', {}, x.path || '/'), ': ', x.message)),
            )
          : null,
      )
    : null;
  const timings = e.timings && typeof e.timings === 'object' ? Object.entries(e.timings) : [];
  page(
    `Execution ${e.id}`,
    problem,
    details('execution-summary', [
      ['Tool', h('code', {}, e.tool_name), 'tool'],
      ['Tool version', e.tool_version, 'tool-version'],
      ['Status', e.status ? badge(e.status) : null, 'status'],
      ['Identifier', e.identifier, 'identifier'],
      [
        'Account',
        accountId ? h('a', { href: `#/accounts/${encodeURIComponent(accountId)}` }, accountId) : null,
        'account',
      ],
      [
        'Connection',
        connectionName
          ? h('a', { href: `#/connections/${encodeURIComponent(connectionName)}` }, connectionName)
          : null,
        'connection',
      ],
      ['Provider status', e.upstream_status, 'upstream-status'],
      ['Provider calls', e.upstream_calls, 'upstream-calls'],
      ['Attempts', e.attempts, 'attempts'],
      [
        'Token refreshed',
        e.token_refreshed === undefined || e.token_refreshed === null
          ? null
          : e.token_refreshed
            ? 'yes, before the call'
            : 'no',
        'token-refreshed',
      ],
      ['Started', when(e.started_at), 'started'],
      ['Finished', when(e.finished_at), 'finished'],
      ['Duration', e.duration_ms === undefined ? null : ms(e.duration_ms), 'duration'],
    ]),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Timings'),
      timings.length
        ? details(
            'execution-timings',
            timings.map(([k, v]) => [k.replace(/_ms$/, '').replaceAll('_', ' '), ms(v)]),
          )
        : h('p', { class: 'hint' }, '—'),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Input'),
      h('p', { class: 'hint' }, 'Secret-looking fields are masked by the gateway.'),
      json(e.input, 'execution-input'),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Output summary'),
      json(e.output_summary, 'execution-output'),
    ),
    h(
      'p',
      {},
      e.identifier
        ? h(
            'a',
            { href: `#/executions?identifier=${encodeURIComponent(e.identifier)}` },
            'Other executions of this identifier',
          )
        : null,
    ),
  );
}

export const nav = { path: '/executions', label: 'Executions' };

export const routes = [
  [/^\/executions$/, executionsPage],
  [/^\/executions\/(.+)$/, (_p, id) => executionPage(decodeURIComponent(id))],
];
