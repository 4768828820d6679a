import { h, svg } from './dom.js';

// Small SVG charts drawn from the API's figures: no chart library, no inline styles (the CSP
// allows stylesheets from the gateway only; colours come from classes in app.css).

/** Stacked bars per hour: successes below, errors on top; a table alternative for screen readers. */
export function chartExecutions(hours, window) {
  const width = 720;
  const height = 180;
  const pad = { left: 36, right: 8, top: 8, bottom: 24 };
  const max = Math.max(1, ...hours.map((x) => x.success + x.error));
  const bw = (width - pad.left - pad.right) / hours.length;
  const y = (v) => pad.top + (height - pad.top - pad.bottom) * (1 - v / max);
  const bars = hours.flatMap((x, i) => {
    const left = pad.left + i * bw + (bw > 4 ? 1 : 0);
    const w = Math.max(1, bw - (bw > 4 ? 2 : 0));
    const title = `${new Date(x.hour).toLocaleString()}: ${x.success} ok, ${x.error} errors`;
    return [
      x.success
        ? svg(
            'rect',
            { class: 'ok', x: left, y: y(x.success), width: w, height: y(0) - y(x.success) },
            svg('title', {}, title),
          )
        : null,
      x.error
        ? svg(
            'rect',
            {
              class: 'err',
              x: left,
              y: y(x.success + x.error),
              width: w,
              height: y(x.success) - y(x.success + x.error),
            },
            svg('title', {}, title),
          )
        : null,
    ];
  });
  const labelEvery = window === '7d' ? 24 : 6;
  const labels = hours
    .map((x, i) =>
      i % labelEvery === 0
        ? svg(
            'text',
            { x: pad.left + i * bw, y: height - 6, class: 'axis' },
            window === '7d'
              ? new Date(x.hour).toLocaleDateString(undefined, { weekday: 'short' })
              : `${new Date(x.hour).getHours()}:00`,
          )
        : null,
    )
    .filter(Boolean);
  const chart = svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      class: 'chart',
      role: 'img',
      'aria-labelledby': 'chart-title',
      id: 'executions-chart',
    },
    svg(
      'title',
      { id: 'chart-title' },
      `Tool executions per hour over the last ${window === '7d' ? '7 days' : '24 hours'}, successes and errors`,
    ),
    svg('line', { x1: pad.left, x2: width - pad.right, y1: y(0), y2: y(0), class: 'axis-line' }),
    svg('text', { x: 4, y: pad.top + 10, class: 'axis' }, max),
    svg('text', { x: 4, y: y(0), class: 'axis' }, 0),
    bars,
    labels,
  );
  const legend = h(
    'p',
    { class: 'legend' },
    h('span', { class: 'key ok' }),
    ' success ',
    h('span', { class: 'key err' }),
    ' error',
  );
  return h('figure', {}, chart, legend);
}

/** p50 and p95 per provider as horizontal bars. */
export function latencyBars(providers) {
  if (!providers.length) return h('p', { class: 'hint' }, 'No executions in this window.');
  const max = Math.max(1, ...providers.map((p) => p.p95_ms));
  const row = 26;
  const width = 420;
  const left = 120;
  const scale = (v) => ((width - left - 60) * v) / max;
  return svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${providers.length * row + 6}`,
      class: 'chart',
      role: 'img',
      'aria-label': 'p50 and p95 duration per provider',
    },
    providers.flatMap((p, i) => [
      svg('text', { x: 0, y: i * row + 16, class: 'axis' }, p.provider),
      svg('rect', { class: 'p95', x: left, y: i * row + 4, width: Math.max(1, scale(p.p95_ms)), height: 16 }),
      svg('rect', { class: 'p50', x: left, y: i * row + 8, width: Math.max(1, scale(p.p50_ms)), height: 8 }),
      svg(
        'text',
        { x: left + scale(p.p95_ms) + 4, y: i * row + 16, class: 'axis' },
        `${p.p50_ms}/${p.p95_ms} ms`,
      ),
    ]),
  );
}
