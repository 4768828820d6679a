import { createHash } from 'node:crypto';
import type { EmulatedUser } from '../../core/types.js';

/**
 * The people who can sign in to any provider the definitions emulator plays. Ids are digits, as
 * most providers' account ids are, and never change, so tests and docs can name them.
 */
export const definitionUsers: EmulatedUser[] = [
  { id: '41000001', name: 'Ada Lovelace', email: 'ada.lovelace@example.com' },
  { id: '41000002', name: 'Grace Hopper', email: 'grace.hopper@example.com' },
  { id: '41000003', name: 'Alan Turing', email: 'alan.turing@example.com' },
];

/**
 * The user an API key or Basic credential signs in as: the one a Basic user name names (id or
 * e-mail), else one picked by the key's hash, so the same key is always the same account and two
 * keys are likely two accounts.
 */
export function userForKey(key: string, userName?: string): EmulatedUser {
  const named = userName
    ? definitionUsers.find((u) => u.id === userName || u.email.toLowerCase() === userName.toLowerCase())
    : undefined;
  if (named) return named;
  const index = createHash('sha256').update(key).digest().readUInt32BE(0) % definitionUsers.length;
  return definitionUsers[index]!;
}
