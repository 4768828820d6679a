// DOM helpers: everything from the API goes in as text (textContent), never as markup.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  for (const c of children.flat())
    if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

let toastTimer;
export function toast(message) {
  const el = document.getElementById('toast');
  el.textContent = message;
  el.classList.add('shown');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => el.classList.remove('shown'), 4000);
}

export async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    toast(`${what} copied`);
  } catch {
    toast(`Select and copy the ${what.toLowerCase()} by hand`);
  }
}

export function confirmDialog(title, text, action = 'Confirm') {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = action;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) =>
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }),
  );
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/** A labelled form field; `error` slot below it is filled by showProblem(). */
export function field(label, input, hint) {
  const id = input.id;
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  const errorEl = h('p', { class: 'field-error', id: `${id}-error`, 'data-error-for': input.name ?? id });
  input.setAttribute('aria-describedby', [hintEl ? `${id}-hint` : '', `${id}-error`].join(' ').trim());
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hintEl, errorEl);
}

/**
 * Shows a problem: the detail in the form's alert, and each field error (by JSON path) next to its
 * field, which is marked invalid. `prefix` strips e.g. "/tool_input" from paths.
 */
export function showProblem(form, error, prefix = '') {
  clearProblem(form);
  const problem = error.problem ?? { detail: String(error.message ?? error) };
  const alert = form.querySelector('.form-error');
  if (alert)
    alert.textContent = `${problem.detail ?? problem.title}${problem.code ? ` (${problem.code})` : ''}`;
  for (const e of problem.errors ?? []) {
    let path = e.path ?? '';
    if (prefix && path.startsWith(prefix)) path = path.slice(prefix.length);
    // The most specific field first: /parameters/subdomain is "parameters.subdomain", else "parameters".
    const segments = path.split('/').filter(Boolean);
    const names = segments.map((_, i) => segments.slice(0, segments.length - i).join('.'));
    const name = names.find((n) => form.querySelector(`[data-error-for="${CSS.escape(n)}"]`));
    if (!name) continue;
    const slot = form.querySelector(`[data-error-for="${CSS.escape(name)}"]`);
    slot.textContent = slot.textContent ? `${slot.textContent}; ${e.message}` : e.message;
    const input = form.querySelector(`[name="${CSS.escape(name)}"]`);
    input?.setAttribute('aria-invalid', 'true');
  }
  const first = form.querySelector('[aria-invalid="true"]');
  first?.focus();
}

export function clearProblem(form) {
  for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  const alert = form.querySelector('.form-error');
  if (alert) alert.textContent = '';
}

/**
 * Every field error of a problem as a "path: message" list (for a whole JSON document, where no
 * single input stands for the path); empty when the problem has none.
 */
export function errorList(list, error) {
  const errors = error?.problem?.errors ?? [];
  list.replaceChildren(
    ...errors.map((e) => h('li', {}, h('code', {}, e.path || '/'), ': ', e.message ?? 'is invalid')),
  );
  list.hidden = errors.length === 0;
  return errors.length;
}
