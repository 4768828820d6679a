import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { badge, copyButton, page, write } from '../layout.js';
import { session } from '../session.js';
import { table } from '../tables.js';

const ROLES = ['admin', 'viewer'];

function createForm(out) {
  const username = h('input', { id: 'admin-username', name: 'username', autocomplete: 'off' });
  const role = h(
    'select',
    { id: 'admin-role', name: 'role' },
    ROLES.map((r) => h('option', { value: r }, r)),
  );
  const form = h(
    'form',
    { class: 'card', id: 'admin-form', novalidate: true },
    h('h2', {}, 'Add a dashboard account'),
    h(
      'div',
      { class: 'row wrap' },
      field('Username', username),
      field('Role', role, 'admin: every change; viewer: reads only.'),
    ),
    formError(),
    h('button', { type: 'submit' }, 'Add account'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    try {
      const created = await api('/admin/admins', {
        method: 'POST',
        body: { username: username.value.trim(), role: role.value },
      });
      out.replaceChildren(
        h(
          'div',
          { class: 'notice' },
          h('p', {}, h('strong', {}, `${created.username} added: the password is shown only once.`)),
          h('p', {}, h('code', { id: 'new-admin-password' }, created.password)),
          copyButton(created.password, 'Password'),
        ),
      );
      toast(`Account ${created.username} added`);
      await refreshTable();
    } catch (error) {
      showProblem(form, error);
    }
  });
  return form;
}

let refreshTable = async () => {};

export async function adminsPage() {
  const out = h('div', { 'aria-live': 'polite', id: 'admin-created' });
  const rows = h('div', { id: 'admins-table' });
  const me = session().username;
  refreshTable = async () => {
    const list = await api('/admin/admins');
    rows.replaceChildren(
      table(
        ['Username', 'Role', 'Created', 'Last sign-in', ''],
        list.data.map((a) => {
          const other = a.role === 'admin' ? 'viewer' : 'admin';
          return h(
            'tr',
            {},
            h('td', {}, a.username, a.username === me ? ' (you)' : ''),
            h('td', {}, badge((a.role ?? 'admin').toUpperCase())),
            h('td', {}, when(a.created_at)),
            h('td', {}, when(a.last_sign_in_at)),
            h(
              'td',
              { class: 'actions' },
              a.username === me
                ? null
                : [
                    write(
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'secondary',
                          onclick: async () => {
                            try {
                              await api(`/admin/admins/${encodeURIComponent(a.username)}`, {
                                method: 'PATCH',
                                body: { role: other },
                              });
                              toast(`${a.username} is now ${other === 'admin' ? 'an admin' : 'a viewer'}`);
                              await refreshTable();
                            } catch (error) {
                              toast(error.message);
                            }
                          },
                        },
                        `Make ${other}`,
                      ),
                    ),
                    write(
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'danger',
                          onclick: async () => {
                            const ok = await confirmDialog(
                              `Delete ${a.username}?`,
                              'The account is removed and its sessions end at once.',
                              'Delete account',
                            );
                            if (!ok) return;
                            try {
                              await api(`/admin/admins/${encodeURIComponent(a.username)}`, {
                                method: 'DELETE',
                              });
                              toast(`${a.username} deleted`);
                              await refreshTable();
                            } catch (error) {
                              toast(error.message);
                            }
                          },
                        },
                        'Delete',
                      ),
                    ),
                  ],
            ),
          );
        }),
        'Dashboard accounts',
      ),
    );
  };
  try {
    await refreshTable();
  } catch (error) {
    // A gateway without account management (an older one) has no such route.
    if (error.problem?.status !== 404) throw error;
    return page(
      'Dashboard accounts',
      h('p', {}, 'This gateway manages accounts with `portico admins` only.'),
    );
  }
  page(
    'Dashboard accounts',
    h('p', { class: 'hint' }, 'Who may sign in here: admins change things, viewers only read.'),
    write(createForm(out)),
    out,
    rows,
  );
}

export const nav = { path: '/admins', label: 'Admins' };

export const routes = [[/^\/admins$/, adminsPage]];
