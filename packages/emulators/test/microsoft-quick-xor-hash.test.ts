import { describe, expect, it } from 'vitest';
import { QuickXorHash, quickXorHash } from '../src/providers/microsoft/quick-xor-hash.js';

// Published QuickXorHash vectors (input and digest in base64), spanning the 160-byte wrap.
const vectors: Array<[string, string]> = [
  ['', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='],
  ['Sg==', 'SgAAAAAAAAAAAAAAAQAAAAAAAAA='],
  ['tbQ=', 'taAFAAAAAAAAAAAAAgAAAAAAAAA='],
  ['2fuxhBJXtpWFe8dOfdGeHw==', 'O9tHLAghgSvYohKFyMMxnNCHaHg='],
  [
    'PfxMcUd0vIW6VbHG/uj/Y0W6qEoKmyBD0nYebEKazKaKG+UaDqBEcmQjbfQeVnVLuodMoPp7P7TR1htX5n2VnkHh22xDyoJ8C/ZQKiSNqQfXvh83judf4RVr9exJCud8Uvgip6aVZTaPrJHVjQhMCp/dEnGvqg0oN5OVkM2qqAXvA0teKUDhgNM71sDBVBCGXxNOR2bpbD1iM4dnuT0ey4L+loXEHTL0fqMeUcEi2asgImnlNakwenDzz0x57aBwyq3AspCFGB1ncX4yYCr/OaCcS5OKi/00WH+wNQU3',
    'QX/YEpG0gDsmhEpCdWhsxDzsfVE=',
  ],
];

describe('QuickXorHash', () => {
  it.each(vectors)('hashes %s to the published digest', (input, digest) => {
    expect(quickXorHash([Buffer.from(input, 'base64')])).toBe(digest);
  });

  it('gives the same digest however the bytes are chunked', () => {
    const bytes = Buffer.from(vectors[4]![0], 'base64');
    const hash = new QuickXorHash();
    for (let i = 0; i < bytes.length; i += 7) hash.update(bytes.subarray(i, i + 7));
    expect(hash.digest()).toBe(vectors[4]![1]);
  });
});
