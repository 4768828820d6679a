import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../secrets/keyring.js';

/**
 * The one-time decision link an approver receives by webhook: the approval id, the key that signed
 * it and an HMAC of both. Nothing is stored for it: the approval's own state makes it one-time (only
 * a pending approval can be decided) and its expiry bounds it; a rotated-out key stops its links.
 */
export class ApprovalLinkSigner {
  private readonly keys = new Map<string, Buffer>();

  constructor(private readonly keyring: Keyring) {
    for (const id of keyring.keyIds) {
      this.keys.set(id, Buffer.from(hkdfSync('sha256', keyring.key(id)!, 'portico', 'approval-link', 32)));
    }
  }

  sign(approvalId: string): string {
    const kid = this.keyring.activeKeyId;
    return `${approvalId}.${kid}.${this.mac(kid, approvalId)}`;
  }

  /** The approval id a link token names, when its signature holds. */
  verify(token: string): string | undefined {
    const [approvalId, kid, mac, extra] = token.split('.');
    if (extra !== undefined || !approvalId || !kid || !mac || !/^apr_[0-9A-Za-z]+$/.test(approvalId)) return;
    if (!this.keys.has(kid)) return;
    const expected = Buffer.from(this.mac(kid, approvalId));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected) ? approvalId : undefined;
  }

  private mac(kid: string, approvalId: string): string {
    return createHmac('sha256', this.keys.get(kid)!).update(approvalId).digest('base64url');
  }
}

export const APPROVAL_LINK_PREFIX = '/approvals/decide/';
