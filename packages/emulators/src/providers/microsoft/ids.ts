import { createHash } from 'node:crypto';

function digest(seed: string): Buffer {
  return createHash('sha256').update(`portico-microsoft:${seed}`).digest();
}

/**
 * A GUID derived from a seed, so seeded users, sites and items keep their ids across resets and
 * tests and docs can name them. Shaped like a version-4 GUID, as Entra ID and SharePoint issue.
 */
export function stableGuid(seed: string): string {
  const b = digest(seed);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** SharePoint driveItem ids are 34 characters: "01" and 32 base32 characters. */
export function driveItemId(seed: string): string {
  const b = digest(seed);
  let out = '01';
  let bits = 0;
  let value = 0;
  for (const byte of b) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 34) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

/** SharePoint drive ids are "b!" followed by base64url of the site and list GUIDs. */
export function driveId(seed: string): string {
  return `b!${Buffer.concat([digest(`${seed}:a`), digest(`${seed}:b`)])
    .subarray(0, 48)
    .toString('base64url')}`;
}
