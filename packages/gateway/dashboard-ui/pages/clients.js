import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { append, h, toast, when } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { badge, copyButton, page } from '../layout.js';
import { table } from '../tables.js';

export async function clientsPage() {
  const list = await api('/clients');
  const name = h('input', {
    id: 'client-name',
    name: 'name',
    autocomplete: 'off',
    placeholder: 'e.g. my-agent',
  });
  const out = h('div', { id: 'client-created' });
  const form = h(
    'form',
    { class: 'card', id: 'client-form', 'data-write': true },
    h('h2', {}, 'Create a gateway client'),
    field('Name', name),
    formError(),
    h('button', { type: 'submit' }, 'Create client'),
    out,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    try {
      const c = await api('/clients', { method: 'POST', body: { name: name.value } });
      out.replaceChildren(
        h(
          'div',
          { class: 'notice' },
          h('p', {}, h('strong', {}, 'Store the secret now: it is shown only once.')),
          h(
            'dl',
            { class: 'details' },
            h('dt', {}, 'client_id'),
            h('dd', {}, h('code', {}, c.client_id)),
            h('dt', {}, 'client_secret'),
            h('dd', {}, h('code', { id: 'new-client-secret' }, c.client_secret)),
            h('dt', {}, 'env_url'),
            h('dd', {}, h('code', {}, location.origin)),
          ),
          copyButton(c.client_secret, 'Client secret'),
        ),
      );
      name.value = '';
      await refresh();
    } catch (error) {
      showProblem(form, error);
    }
  });
  const rows = h('div', { id: 'clients-table' });
  async function refresh() {
    const fresh = await api('/clients');
    rows.replaceChildren(
      table(
        ['Client ID', 'Name', 'Created', 'Status', ''],
        fresh.data.map((c) =>
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, c.client_id)),
            h('td', {}, c.name),
            h('td', {}, when(c.created_at)),
            h('td', {}, c.revoked_at ? badge('REVOKED') : badge('ACTIVE')),
            h(
              'td',
              {},
              c.revoked_at
                ? ''
                : h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger',
                      'data-write': true,
                      onclick: async () => {
                        if (
                          !(await confirmDialog(
                            `Revoke ${c.name}?`,
                            `Applications using ${c.client_id} lose access at once.`,
                            'Revoke',
                          ))
                        )
                          return;
                        await api(`/clients/${encodeURIComponent(c.client_id)}`, { method: 'DELETE' }).catch(
                          (error) => toast(error.message),
                        );
                        await refresh();
                      },
                    },
                    'Revoke',
                  ),
            ),
          ),
        ),
      ),
    );
  }
  page('Gateway clients', form, rows);
  append(rows, []);
  if (list) await refresh();
}

export const nav = { path: '/clients', label: 'Gateway clients' };

export const routes = [[/^\/clients$/, clientsPage]];
