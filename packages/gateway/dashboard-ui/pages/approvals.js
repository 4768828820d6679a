import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { field } from '../forms.js';
import { badge, dash, page, write } from '../layout.js';
import { filterHash, route } from '../router.js';

const STATUSES = ['pending', 'approved', 'denied', 'expired', 'used'];

async function decide(a, decision, reasonInput) {
  const verb = decision === 'approve' ? 'Approve' : 'Deny';
  const ok = await confirmDialog(
    `${verb} ${a.tool_name} for ${a.identifier}?`,
    decision === 'approve'
      ? 'The agent may then run this exact call, with this exact input, once.'
      : 'The agent is told the call was denied.',
    verb,
  );
  if (!ok) return;
  const reason = reasonInput.value.trim();
  try {
    await api(`/approvals/${encodeURIComponent(a.id)}/${decision}`, {
      method: 'POST',
      body: reason ? { reason } : {},
    });
    toast(decision === 'approve' ? 'Call approved' : 'Call denied');
    route();
  } catch (error) {
    toast(error.message);
  }
}

function approvalCard(a) {
  const reason = h('input', { id: `reason-${a.id}`, name: 'reason', autocomplete: 'off' });
  const pending = a.status === 'pending';
  return h(
    'article',
    { class: 'card approval', id: `approval-${a.id}`, 'aria-labelledby': `approval-title-${a.id}` },
    h(
      'h2',
      { id: `approval-title-${a.id}` },
      h('code', {}, a.tool_name),
      ' for ',
      a.identifier,
      ' ',
      badge(a.status.toUpperCase()),
    ),
    h(
      'dl',
      { class: 'details' },
      [
        ['Policy', h('a', { href: `#/policies/${encodeURIComponent(a.policy)}` }, a.policy)],
        ['Connection', dash(a.connection_name)],
        ['Requested by', dash(a.requested_by)],
        ['Requested', when(a.created_at)],
        ['Expires', when(a.expires_at)],
        ['Decided by', dash(a.decided_by)],
        ['Reason', dash(a.reason)],
        [
          'Execution',
          a.execution_id ? h('a', { href: `#/executions/${a.execution_id}` }, a.execution_id) : '—',
        ],
      ].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
    h('h3', {}, 'Input, exactly as the agent sent it'),
    h('pre', { class: 'json', tabindex: '0' }, JSON.stringify(a.tool_input, null, 2)),
    pending
      ? write(
          h(
            'div',
            { class: 'decision' },
            field('Reason (optional, shown to the agent)', reason),
            h(
              'div',
              { class: 'actions' },
              h('button', { type: 'button', onclick: () => decide(a, 'approve', reason) }, 'Approve'),
              h(
                'button',
                { type: 'button', class: 'danger', onclick: () => decide(a, 'deny', reason) },
                'Deny',
              ),
            ),
          ),
        )
      : null,
  );
}

export async function approvalsPage(params) {
  const status = params.get('status') ?? 'pending';
  const list = await api('/approvals', { query: { status: status === 'any' ? '' : status, page_size: 50 } });
  const form = h(
    'form',
    { class: 'card filters', role: 'search', 'aria-label': 'Filter approvals' },
    field(
      'Status',
      h(
        'select',
        { id: 'ap-status', name: 'status' },
        h('option', { value: 'any', selected: status === 'any' }, 'Any'),
        STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)),
      ),
    ),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = filterHash('/approvals', form);
  });
  page(
    'Approvals',
    h(
      'p',
      { class: 'hint' },
      'Calls a policy held for a person: approve or deny each, seeing its exact input.',
    ),
    form,
    list.data.length
      ? list.data.map(approvalCard)
      : h(
          'p',
          { class: 'card empty', id: 'no-approvals' },
          `No ${status === 'any' ? '' : `${status} `}approvals.`,
        ),
  );
}

export const nav = { path: '/approvals', label: 'Approvals' };

export const routes = [[/^\/approvals$/, approvalsPage]];
