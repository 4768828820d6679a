import { h } from './dom.js';

const NUMERIC = new Set(['Count', 'Calls', 'p50', 'p95', 'Accounts', 'Duration', 'Attempts', 'Status code']);

/**
 * A table. Each cell carries its column's name (data-label): on a narrow screen the rows are
 * stacked as cards with the names beside the values (app.css), so no column is cut off.
 */
export function table(headers, rows, caption) {
  const body = h(
    'tbody',
    {},
    rows.length ? rows : h('tr', {}, h('td', { colspan: headers.length, class: 'empty' }, 'Nothing yet.')),
  );
  for (const tr of body.rows)
    for (const [i, td] of [...tr.cells].entries())
      if (headers[i] && !td.hasAttribute('data-label') && !td.classList.contains('empty'))
        td.dataset.label = headers[i];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      // Two columns fit any screen: only wider tables are stacked.
      { class: headers.length > 2 ? 'stack' : undefined },
      caption ? h('caption', {}, caption) : null,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((x) =>
            h(
              'th',
              { scope: 'col', class: NUMERIC.has(x) ? 'n' : undefined },
              x || h('span', { class: 'visually-hidden' }, 'Actions'),
            ),
          ),
        ),
      ),
      body,
    ),
  );
}
