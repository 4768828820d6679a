import { describe, expect, it } from 'vitest';
import { MASKED, recordedInput } from '../src/executions/detail.js';

describe('what an execution record keeps of an input', () => {
  it('masks secrets inside text: bearer tokens, JWTs, well-known key shapes, URL passwords', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlLXZhbHVl';
    const secrets = [
      `call it with Authorization: Bearer abcdef123456XYZ please`,
      `the session is ${jwt} now`,
      'key sk-proj-AbCdEfGhIjKlMnOpQrStUv here',
      'aws AKIAIOSFODNN7EXAMPLE here',
      'maps AIzaSyA1234567890abcdefghijklmnopqrstu here',
      'gitlab glpat-abcdefghij1234567890 here',
      'npm npm_abcdefghijklmnopqrstuvwxyz0123456789 here',
      'db at postgres://admin:hunter2@db.example.com/app',
    ];
    const kept = recordedInput({ texts: secrets }) as { texts: string[] };
    for (const [i, text] of kept.texts.entries()) {
      expect(text, secrets[i]).toContain(MASKED);
      for (const secret of [
        'abcdef123456XYZ',
        jwt,
        'AbCdEfGhIjKlMnOpQrStUv',
        'AKIAIOSFODNN7EXAMPLE',
        'hunter2',
      ])
        expect(text).not.toContain(secret);
    }
    expect(kept.texts[7]).toContain('db.example.com');
  });

  it('masks values under keys that name secrets', () => {
    const input = Object.fromEntries(
      ['pwd', 'pass', 'otp', 'jwt', 'session', 'key', 'client_key', 'signing_key', 'cvv', 'ssn'].map((k) => [
        k,
        'v4lue',
      ]),
    );
    const kept = recordedInput({ ...input, title: 'kept' }) as Record<string, string>;
    for (const key of Object.keys(input)) expect(kept[key], key).toBe(MASKED);
    expect(kept.title).toBe('kept');
  });
});
