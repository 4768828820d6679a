import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { clearProblem, errorList, field, formError, showProblem } from '../forms.js';
import { badge, dash, page, write } from '../layout.js';
import { route } from '../router.js';
import { table } from '../tables.js';

const TEMPLATE = {
  name: 'no-deletes',
  description: 'Agents may read; destructive calls wait for a person.',
  allow_tools: ['*'],
  deny_tools: [],
  approval_tools: ['@destructive'],
};

/** Fields the server fills in; a definition sent back must leave them out. */
const SERVER_FIELDS = ['id', 'created_at', 'updated_at'];

/** A policy definition as JSON: POST (new) or PUT (existing, by name). */
function policyForm(existing) {
  const definition = existing
    ? Object.fromEntries(Object.entries(existing).filter(([k]) => !SERVER_FIELDS.includes(k)))
    : TEMPLATE;
  const text = h('textarea', {
    id: 'policy-json',
    name: 'definition',
    rows: 14,
    spellcheck: 'false',
    autocomplete: 'off',
  });
  text.value = JSON.stringify(definition, null, 2);
  const errors = h('ul', { class: 'field-errors', id: 'policy-errors', hidden: true });
  const form = h(
    'form',
    { class: 'card', id: 'policy-form', novalidate: true },
    h('h2', {}, existing ? 'Edit the policy' : 'New policy'),
    field(
      'Definition (JSON)',
      text,
      'name, description, connection_name, identifier, allow_tools, deny_tools, approval_tools, approval_expires_in, constraints, budget, enabled. Tool patterns: a name, "calendar_*", "@destructive" or "@writes".',
    ),
    errors,
    formError(),
    h('button', { type: 'submit' }, existing ? 'Save policy' : 'Create policy'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    errorList(errors, null);
    let body;
    try {
      body = JSON.parse(text.value);
    } catch (error) {
      form.querySelector('.form-error').textContent = `The definition is not valid JSON: ${error.message}`;
      text.setAttribute('aria-invalid', 'true');
      return;
    }
    try {
      const saved = existing
        ? await api(`/policies/${encodeURIComponent(existing.name)}`, { method: 'PUT', body })
        : await api('/policies', { method: 'POST', body });
      toast(existing ? 'Policy saved' : 'Policy created');
      const target = `#/policies/${encodeURIComponent(saved.name)}`;
      if (location.hash === target) route();
      else location.hash = target;
    } catch (error) {
      showProblem(form, error);
      errorList(errors, error);
    }
  });
  return form;
}

async function deletePolicy(name) {
  const ok = await confirmDialog(
    `Delete the policy ${name}?`,
    'Calls it governed are no longer checked against it; its pending approvals stay as they are.',
    'Delete policy',
  );
  if (!ok) return;
  try {
    await api(`/policies/${encodeURIComponent(name)}`, { method: 'DELETE' });
    toast(`Policy ${name} deleted`);
    if (location.hash === '#/policies') route();
    else location.hash = '#/policies';
  } catch (error) {
    toast(error.message);
  }
}

const patterns = (list) => (list?.length ? list.join(', ') : '—');

export async function policiesPage() {
  const list = await api('/policies');
  page(
    'Policies',
    h(
      'p',
      { class: 'hint' },
      'What agents may do with the tools: allowed and denied tools, calls that wait for a person, constraints on inputs and budgets.',
    ),
    table(
      ['Name', 'Applies to', 'Allow', 'Deny', 'Approval', 'Enabled', ''],
      list.data.map((p) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/policies/${encodeURIComponent(p.name)}` }, p.name)),
          h('td', {}, [p.connection_name, p.identifier].filter(Boolean).join(' · ') || 'everything'),
          h('td', {}, patterns(p.allow_tools)),
          h('td', {}, patterns(p.deny_tools)),
          h('td', {}, patterns(p.approval_tools)),
          h('td', {}, badge(p.enabled ? 'ENABLED' : 'DISABLED')),
          h(
            'td',
            {},
            write(
              h('button', { type: 'button', class: 'danger', onclick: () => deletePolicy(p.name) }, 'Delete'),
            ),
          ),
        ),
      ),
      'Policies',
    ),
    write(policyForm(null)),
  );
}

export async function policyPage(name) {
  const p = await api(`/policies/${encodeURIComponent(name)}`);
  page(
    `Policy ${p.name}`,
    h(
      'dl',
      { class: 'card details' },
      [
        ['Description', dash(p.description)],
        ['Connection', dash(p.connection_name)],
        ['Identifier', dash(p.identifier)],
        ['Allowed tools', patterns(p.allow_tools)],
        ['Denied tools', patterns(p.deny_tools)],
        ['Need approval', patterns(p.approval_tools)],
        ['Approvals expire after', p.approval_expires_in ? `${p.approval_expires_in} s` : '—'],
        ['Budget', p.budget ? `${p.budget.calls} calls per ${p.budget.period_seconds} s` : '—'],
        ['Constraints', p.constraints?.length ? String(p.constraints.length) : '—'],
        ['Enabled', badge(p.enabled ? 'ENABLED' : 'DISABLED')],
        ['Updated', when(p.updated_at)],
      ].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
    write(policyForm(p)),
    h(
      'div',
      { class: 'actions' },
      write(h('button', { type: 'button', class: 'danger', onclick: () => deletePolicy(p.name) }, 'Delete')),
      h('a', { href: '#/policies' }, 'All policies'),
    ),
  );
}

export const nav = { path: '/policies', label: 'Policies' };

export const routes = [
  [/^\/policies$/, policiesPage],
  [/^\/policies\/(.+)$/, (_p, name) => policyPage(decodeURIComponent(name))],
];
