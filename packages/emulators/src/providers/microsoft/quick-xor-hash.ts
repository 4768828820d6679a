/**
 * QuickXorHash, the only content hash OneDrive for Business and SharePoint report
 * (`file.hashes.quickXorHash`). Every input byte is XORed into a 160-bit circular register at bit
 * position (index × 11) mod 160; since that position depends only on index mod 160, bytes are first
 * folded into 160 byte-wide accumulators, which keeps hashing a large upload cheap.
 */
export class QuickXorHash {
  private readonly lanes = new Uint8Array(160);
  private length = 0;

  update(chunk: Uint8Array): this {
    const lanes = this.lanes;
    let lane = this.length % 160;
    for (let i = 0; i < chunk.length; i++) {
      lanes[lane] = lanes[lane]! ^ chunk[i]!;
      lane = lane === 159 ? 0 : lane + 1;
    }
    this.length += chunk.length;
    return this;
  }

  digest(): string {
    const register = new Uint8Array(20);
    for (let lane = 0; lane < 160; lane++) {
      const value = this.lanes[lane]!;
      if (value === 0) continue;
      const bit = (lane * 11) % 160;
      // A byte spans at most two register bytes; the register wraps from bit 159 to bit 0.
      const spread = value << (bit % 8);
      const at = bit >> 3;
      register[at] = register[at]! ^ (spread & 0xff);
      const next = (at + 1) % 20;
      register[next] = register[next]! ^ (spread >> 8);
    }
    let length = BigInt(this.length);
    for (let i = 0; i < 8; i++) {
      register[12 + i] = register[12 + i]! ^ Number(length & 0xffn);
      length >>= 8n;
    }
    return Buffer.from(register).toString('base64');
  }
}

export function quickXorHash(chunks: Iterable<Uint8Array>): string {
  const hash = new QuickXorHash();
  for (const chunk of chunks) hash.update(chunk);
  return hash.digest();
}
