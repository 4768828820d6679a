import { api } from '../api.js';
import { h } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { page } from '../layout.js';
import { route } from '../router.js';
import { startSession } from '../session.js';

export function signInPage(message) {
  document.getElementById('top').hidden = true;
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const form = h(
    'form',
    { class: 'card narrow', id: 'sign-in' },
    h(
      'p',
      { id: 'sign-in-help' },
      'Operators sign in with an admin account. The first one’s password is printed once at the first start; a signed-in admin adds others on the Admins page. A lost password: on the gateway’s host, ',
      h('code', {}, 'portico admins reset-password <name>'),
      ' (with the embedded database, while the gateway is stopped).',
    ),
    field('Username', username),
    field('Password', password),
    formError(),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  if (message) form.querySelector('.form-error').textContent = message;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    try {
      const session = await api('/admin/session', {
        method: 'POST',
        body: { username: username.value, password: password.value },
      });
      startSession(session);
      // The page the address asked for (a bookmark, or where the session ended), not the overview.
      route();
    } catch (error) {
      showProblem(form, error);
    }
  });
  page('Sign in to Portico', form);
  username.focus();
}
