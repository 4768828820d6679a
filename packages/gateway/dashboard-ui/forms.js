import { h } from './dom.js';

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

export const formError = () => h('p', { class: 'form-error', role: 'alert' });

/** A success note inside a form, cleared at the next submit. */
export const formOk = (id) => h('p', { class: 'form-ok', role: 'status', id });
