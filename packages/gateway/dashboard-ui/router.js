import { beginNavigation } from './api.js';
import { h } from './dom.js';
import { page, view } from './layout.js';

// Hash routes: each page module exports `routes` ([pattern, render(params, ...captures)]) and
// app.js registers them; the navigation is built from the modules' `nav` entries.
const ROUTES = [];

export function register(routes) {
  ROUTES.push(...routes);
}

export async function route() {
  beginNavigation();
  const [path, query = ''] = (location.hash.slice(1) || '/overview').split('?');
  for (const a of document.querySelectorAll('#nav a')) {
    const target = a.getAttribute('href').slice(1);
    const current = path === target || path.startsWith(`${target}/`);
    if (current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const match = ROUTES.map(([re, fn]) => [re.exec(path), fn]).find(([m]) => m);
  if (!match)
    return page(
      'Not found',
      h('p', {}, 'No such page. ', h('a', { href: '#/overview' }, 'Go to the overview')),
    );
  try {
    await match[1](new URLSearchParams(query), ...match[0].slice(1));
    view.dataset.page = path;
  } catch (error) {
    // Abandoned for a newer navigation, which draws its own page; or signed out (the sign-in page).
    if (error.name === 'AbortError' || error.problem?.status === 401) return;
    page('Something went wrong', h('p', { role: 'alert' }, error.message));
  }
}

/** The hash of a list page with a filter form's non-empty fields. */
export const filterHash = (base, form) =>
  `#${base}?${new URLSearchParams([...new FormData(form)].filter(([, v]) => v))}`;
