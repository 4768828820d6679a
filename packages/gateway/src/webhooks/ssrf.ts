import { type LookupAddress, lookup } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Problem } from '../errors/problem.js';

/**
 * Webhook URLs point wherever an API caller says, and the gateway sends from inside the operator's
 * network: without these checks an endpoint could reach its metadata service or admin ports.
 * Only public unicast addresses are allowed (no loopback, private, link-local, unique-local,
 * carrier-grade NAT, reserved or IPv4-in-IPv6 tricks) unless PORTICO_WEBHOOK_ALLOW_PRIVATE is set.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() unwraps ::ffff:a.b.c.d to the IPv4 address it carries.
  return ipaddr.process(address).range() === 'unicast';
}

/** An address the guard refused, found when the attempt connects (DNS answers at send time). */
export class BlockedAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
  constructor(host: string, address: string) {
    super(
      `${host} resolves to ${address}, a private or reserved address; webhooks go to public addresses only`,
    );
    this.name = 'BlockedAddressError';
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for the sockets that deliver webhooks: the addresses the name resolves to are checked
 * as the connection is made, and the socket connects to exactly those (no second resolution an
 * attacker's DNS could answer differently).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    lookup(hostname, { family: options.family ?? 0, all: true }, (err, addresses) => {
      if (err) {
        callback(err, []);
        return;
      }
      const blocked = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (blocked) {
        callback(new BlockedAddressError(hostname, blocked.address), []);
        return;
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** The host of a URL as an address, when it is a literal one (sockets skip `lookup` for those). */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? host : undefined;
}

const LOCAL_NAMES = /(^|\.)(localhost|localdomain|internal|local)$/i;

/**
 * Checks a webhook URL when it is registered: an absolute https URL (http too when private
 * addresses are allowed), no credentials, and no host that is or resolves to a private address.
 * A name that does not resolve yet is accepted: it is resolved and checked again at every send.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean, field = '/url'): Promise<URL> {
  const refuse = (detail: string, message: string) =>
    new Problem('invalid_input', detail, { errors: [{ path: field, message }] });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(
      'url is not an absolute URL; give the full address of your receiver, e.g. https://app.example.com/webhooks/portico.',
      'is not an absolute URL',
    );
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw refuse(
      `url must use https (it uses ${url.protocol.replace(':', '')}); serve your receiver over TLS. (PORTICO_WEBHOOK_ALLOW_PRIVATE=true also allows http, for local development.)`,
      'must be an https URL',
    );
  }
  if (url.username || url.password) {
    throw refuse(
      'url must not carry credentials (user:password@); webhooks are authenticated by their signature, verify it in the receiver instead.',
      'must not contain credentials',
    );
  }
  if (allowPrivate) return url;
  const literal = literalAddress(url);
  const privateHost = literal ? !isPublicAddress(literal) : LOCAL_NAMES.test(url.hostname);
  const resolved = privateHost ? [] : literal ? [] : await resolveQuietly(url.hostname);
  const blocked = privateHost ? (literal ?? url.hostname) : resolved.find((a) => !isPublicAddress(a));
  if (blocked) {
    throw refuse(
      `url's host ${url.hostname} is${blocked === url.hostname ? '' : ` or resolves to ${blocked},`} a private, loopback or link-local address; webhooks go to public addresses only (PORTICO_WEBHOOK_ALLOW_PRIVATE=true lifts this for local development).`,
      'is a private address',
    );
  }
  return url;
}

/** Addresses of a name, or none when it does not resolve within two seconds. */
function resolveQuietly(hostname: string): Promise<string[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve([]), 2000);
    lookup(hostname, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? [] : addresses.map((a) => a.address));
    });
  });
}
