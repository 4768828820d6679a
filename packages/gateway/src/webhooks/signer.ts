import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks headers of one attempt. Every secret given signs (during a rotation the new
 * and the old one), so a receiver holding either verifies; `webhook-id` is the event id, the same on
 * every attempt, for receivers to drop repeats.
 */
export function signedHeaders(
  eventId: string,
  payload: string,
  secrets: string[],
  at = new Date(),
): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, at, payload)).join(' '),
  };
}
