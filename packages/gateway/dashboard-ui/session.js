import { setCsrf } from './api.js';

// The signed-in operator. The role decides what the UI offers: a viewer sees no control that
// changes something (the server refuses them anyway) and no secret.
const state = { username: null, role: 'admin' };

export function startSession(session) {
  setCsrf(session.csrf_token);
  state.username = session.username;
  // A gateway without roles has admins only.
  state.role = session.role === 'viewer' ? 'viewer' : 'admin';
  document.getElementById('who').textContent =
    state.role === 'viewer' ? `${session.username} (viewer)` : session.username;
  document.body.dataset.role = state.role;
  document.getElementById('top').hidden = false;
}

export function endSession() {
  setCsrf(null);
  state.username = null;
  delete document.body.dataset.role;
}

export const session = () => state;
/** Whether the operator may change things; pages leave out or disable their controls otherwise. */
export const canWrite = () => state.role !== 'viewer';
