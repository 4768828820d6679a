import type { EmulatedUser } from '../../core/types.js';

/**
 * The people who can sign in to the emulated Google. Ids look like Google account ids (the `sub`
 * of an ID token) and never change, so tests and docs can name them.
 */
export const googleUsers: EmulatedUser[] = [
  { id: '110000000000000000001', name: 'Ada Lovelace', email: 'ada.lovelace@example.com' },
  { id: '110000000000000000002', name: 'Grace Hopper', email: 'grace.hopper@example.com' },
  { id: '110000000000000000003', name: 'Alan Turing', email: 'alan.turing@example.com' },
];

export function googleUserById(id: string): EmulatedUser | undefined {
  return googleUsers.find((u) => u.id === id);
}
