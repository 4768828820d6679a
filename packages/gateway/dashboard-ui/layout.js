import { append, copy, h } from './dom.js';
import { canWrite } from './session.js';

export const view = document.getElementById('view');

/** Replaces an element's children; arrays are flattened and null, undefined and false skipped. */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * Shows a page: its heading and content. The focus moves to the content (for screen readers and
 * the keyboard) without scrolling, and the window goes to the top, so the navigation stays in view.
 */
export function page(title, ...children) {
  document.title = `${title} · Portico dashboard`;
  fill(view, h('h1', {}, title), children);
  if (!canWrite()) lockWrites(view);
  // Not on the first page of a load: there the focus stays at the top, on the skip link's side.
  if (shown++) view.focus({ preventScroll: true });
  window.scrollTo(0, 0);
}

let shown = 0;

/**
 * A viewer's page: every control marked data-write (forms that change something, buttons that
 * create, delete or revoke) is removed, and forms marked data-edit are shown read-only. The server
 * refuses a viewer's changes anyway; this keeps the page from offering them.
 */
export function lockWrites(root) {
  for (const el of root.querySelectorAll('[data-write]')) el.remove();
  for (const form of root.querySelectorAll('[data-edit]:not([data-locked])')) {
    form.dataset.locked = '';
    for (const el of form.querySelectorAll('input, select, textarea')) el.disabled = true;
    for (const el of form.querySelectorAll('button')) el.remove();
    form.append(h('p', { class: 'hint' }, 'Read-only: a viewer cannot change this.'));
  }
}

// Content rendered after page() (a table refreshed, a section loaded) is locked too.
new MutationObserver(() => {
  if (!canWrite()) lockWrites(view);
}).observe(view, { childList: true, subtree: true });

/** Marks an element as a control that changes something: viewers do not get it. */
export const write = (el) => {
  el.dataset.write = '';
  return canWrite() ? el : null;
};

export const STATUSES = ['PENDING_AUTH', 'ACTIVE', 'EXPIRED', 'DISCONNECTED'];

export const badge = (status) => h('span', { class: `badge s-${String(status).toLowerCase()}` }, status);

export const copyButton = (text, what) =>
  h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => copy(text, what) },
    `Copy ${what.charAt(0).toLowerCase()}${what.slice(1)}`,
  );

/** "—" for what is absent. */
export const dash = (v) => (v === undefined || v === null || v === '' ? '—' : v);
