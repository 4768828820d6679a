// The dashboard's entry: the session, the navigation built from the pages, the router.
import { api } from './api.js';
import { h } from './dom.js';
import { PAGES } from './pages/index.js';
import { signInPage } from './pages/sign-in.js';
import { register, route } from './router.js';
import { endSession, startSession } from './session.js';

const nav = document.getElementById('nav');
nav.replaceChildren(
  h(
    'ul',
    {},
    PAGES.filter((p) => p.nav).map((p) => h('li', {}, h('a', { href: `#${p.nav.path}` }, p.nav.label))),
  ),
);
for (const p of PAGES) register(p.routes);

// On a narrow screen the navigation folds behind "Menu"; choosing a page folds it again.
const toggle = document.getElementById('nav-toggle');
const fold = (open) => {
  document.getElementById('top').classList.toggle('nav-open', open);
  toggle.setAttribute('aria-expanded', String(open));
};
toggle.addEventListener('click', () => fold(toggle.getAttribute('aria-expanded') !== 'true'));
nav.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && toggle.getAttribute('aria-expanded') === 'true') {
    fold(false);
    toggle.focus();
  }
});

document.getElementById('sign-out').addEventListener('click', async () => {
  await api('/admin/session', { method: 'DELETE' }).catch(() => {});
  endSession();
  signInPage('Signed out.');
});
window.addEventListener('portico:signed-out', () => signInPage('Your session ended; sign in again.'));

window.addEventListener('hashchange', () => {
  fold(false);
  if (!document.getElementById('top').hidden) route();
});

try {
  startSession(await api('/admin/session'));
  route();
} catch {
  signInPage();
}
