import { api } from '../api.js';
import { chartExecutions, latencyBars } from '../charts.js';
import { h, when } from '../dom.js';
import { page, STATUSES } from '../layout.js';
import { table } from '../tables.js';
import { freshLink } from './accounts.js';

export async function overviewPage(params) {
  const window = params.get('window') === '7d' ? '7d' : '24h';
  const [connections, summary, stats] = await Promise.all([
    api('/connections', { query: { page_size: 100 } }),
    api('/connected-accounts/summary'),
    api('/executions/stats', { query: { window } }),
  ]);
  const total = stats.hours.reduce((n, x) => n + x.success + x.error, 0);
  const cards = h(
    'div',
    { class: 'cards' },
    h(
      'div',
      { class: 'card stat' },
      h('span', { class: 'num', id: 'count-connections' }, connections.data.length),
      h('span', {}, 'connections'),
    ),
    STATUSES.map((s) =>
      h(
        'div',
        { class: 'card stat' },
        h('span', { class: 'num', id: `count-${s.toLowerCase()}` }, summary.by_status[s] ?? 0),
        h('span', {}, `${s.toLowerCase().replace('_', ' ')} accounts`),
      ),
    ),
  );
  const windowNav = h(
    'div',
    { class: 'segmented', role: 'group', 'aria-label': 'Time window' },
    ['24h', '7d'].map((w) =>
      h(
        'a',
        { href: `#/overview?window=${w}`, 'aria-current': w === window ? 'true' : undefined },
        w === '24h' ? 'Last 24 h' : 'Last 7 days',
      ),
    ),
  );
  const expired = table(
    ['Account', 'Connection', 'Expired', ''],
    summary.recently_expired.map((a) =>
      h(
        'tr',
        {},
        h('td', {}, a.identifier),
        h('td', {}, a.connection_name),
        h('td', {}, when(a.updated_at)),
        h(
          'td',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              'data-write': true,
              onclick: () => freshLink(a.connection_name, a.identifier),
            },
            'Copy new link',
          ),
        ),
      ),
    ),
    'Accounts that expired in the last 7 days',
  );
  page(
    'Overview',
    cards,
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'row' }, h('h2', {}, 'Tool executions'), windowNav),
      h(
        'p',
        { class: 'hint', id: 'executions-total', dataset: { total } },
        `${total} executions, per hour, by outcome`,
      ),
      chartExecutions(stats.hours, window),
    ),
    h(
      'div',
      { class: 'split' },
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Error codes'),
        table(
          ['Code', 'Count'],
          stats.error_codes.map((e) =>
            h('tr', {}, h('td', {}, h('code', {}, e.error_code)), h('td', { class: 'n' }, e.count)),
          ),
        ),
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Duration by provider'),
        latencyBars(stats.providers),
        table(
          ['Provider', 'Calls', 'p50', 'p95'],
          stats.providers.map((p) =>
            h(
              'tr',
              {},
              h('td', {}, p.provider),
              h('td', { class: 'n' }, p.count),
              h('td', { class: 'n' }, `${p.p50_ms} ms`),
              h('td', { class: 'n' }, `${p.p95_ms} ms`),
            ),
          ),
        ),
      ),
    ),
    h('section', { class: 'card' }, h('h2', {}, 'Recently expired'), expired),
  );
}

export const nav = { path: '/overview', label: 'Overview' };

export const routes = [[/^\/overview$/, overviewPage]];
