import { type LookupAddress, lookup } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { Agent } from 'undici';
import { Problem } from '../errors/problem.js';
import { loadUndici } from './undici.js';

/**
 * The one guard on every server-side request the gateway makes on a caller's or a definition's
 * word: webhook deliveries, MCP client metadata documents, a provider's token, revocation,
 * user-info and API URLs (templated hosts and values imported with an account included), and
 * remote MCP servers. The gateway sends from inside the operator's network: without it a URL could
 * reach a metadata service, an admin port, or the gateway's own /proxy in a loop.
 *
 * The API:
 * - `checkOutboundUrl(raw, policy)`: the URL's own faults, before anything is sent (scheme,
 *   credentials in it, a literal or local-name private host, the gateway itself, a host outside
 *   `domains`); returns the parsed URL or throws an `OutboundRefusedError`.
 * - `guardedLookup(allowPrivate)`: a socket `lookup` that checks the addresses a name resolves to
 *   as the connection is made, and connects to exactly those (no second resolution).
 * - `guardedAgent(policy)`: an undici dispatcher using that lookup; `guardedFetch(url, init,
 *   policy)`: `checkOutboundUrl` then undici's fetch through such a dispatcher (redirects are not
 *   followed: each hop would need the same checks).
 *
 * Private, loopback and link-local targets (and http) are allowed only where an operator says so
 * (`allowPrivate`: PORTICO_WEBHOOK_ALLOW_PRIVATE, PORTICO_MCP_CLIENT_METADATA_ALLOW_PRIVATE, or a
 * provider named in PORTICO_OUTBOUND_ALLOW_PRIVATE); the sandbox's own emulators are the gateway's,
 * not a caller's word, and are not sent through it.
 */
export interface OutboundPolicy {
  /** http and private, loopback or link-local addresses are allowed (an operator's explicit choice). */
  allowPrivate: boolean;
  /** When given, the host must be one of these domains or under one (e.g. salesforce.com). */
  domains?: readonly string[] | undefined;
  /** Origins of the gateway itself: never a target (a provider based on /proxy would loop). */
  selfOrigins?: readonly string[] | undefined;
}

/** Only public unicast addresses (no loopback, private, link-local, unique-local, CGNAT, reserved, IPv4-in-IPv6 tricks). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() unwraps ::ffff:a.b.c.d to the IPv4 address it carries.
  return ipaddr.process(address).range() === 'unicast';
}

/** An address the guard refused, found when the attempt connects (DNS answers at send time). */
export class BlockedAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a private or reserved address; only public addresses are reached`);
    this.name = 'BlockedAddressError';
  }
}

/** A URL the guard refused before sending: `reason` says what, for a Problem's detail. */
export class OutboundRefusedError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${reason} (${url})`);
    this.name = 'OutboundRefusedError';
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for outbound sockets: the addresses the name resolves to are checked as the
 * connection is made, and the socket connects to exactly those.
 */
export function guardedLookup(allowPrivate: boolean | ((hostname: string) => boolean)) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    const open = typeof allowPrivate === 'function' ? allowPrivate(hostname) : allowPrivate;
    lookup(hostname, { family: options.family ?? 0, all: true }, (err, addresses) => {
      if (err) {
        callback(err, []);
        return;
      }
      const blocked = open ? undefined : addresses.find((a) => !isPublicAddress(a.address));
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

/** The host is the domain or under it (a.b.salesforce.com is under salesforce.com; evilsalesforce.com is not). */
export function withinDomains(host: string, domains: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return domains.some((d) => {
    const domain = d.toLowerCase().replace(/^\*?\./, '');
    return h === domain || h.endsWith(`.${domain}`);
  });
}

/**
 * The URL's own faults, checked before anything is sent: an absolute http(s) URL, https unless
 * private targets are allowed, no credentials (userinfo such as http://localhost:@127.0.0.2/ hides
 * the real host from a prefix check), no literal private address or local name unless allowed, not
 * the gateway itself, and within `domains` when given. Names are resolved and checked again when
 * the socket connects (`guardedLookup`).
 */
export function checkOutboundUrl(raw: string | URL, policy: OutboundPolicy): URL {
  const text = String(raw);
  const refuse = (reason: string) => new OutboundRefusedError(text, reason);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('it is not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    throw refuse(`it must use https (it uses ${url.protocol.replace(':', '')})`);
  }
  if (url.username || url.password) throw refuse('it must not carry credentials (user:password@)');
  if (policy.selfOrigins?.includes(url.origin)) throw refuse('it is the gateway itself');
  if (policy.domains && !withinDomains(url.hostname, policy.domains)) {
    throw refuse(`its host ${url.hostname} is outside ${policy.domains.join(', ')}`);
  }
  if (!policy.allowPrivate) {
    const literal = literalAddress(url);
    if (literal ? !isPublicAddress(literal) : LOCAL_NAMES.test(url.hostname)) {
      throw refuse(`its host ${url.hostname} is a private, loopback or link-local address`);
    }
  }
  return url;
}

/** An undici dispatcher whose sockets connect only to addresses the policy allows. */
export async function guardedAgent(
  policy: Pick<OutboundPolicy, 'allowPrivate'>,
  options: { timeoutMs: number },
): Promise<Agent> {
  const { Agent } = await loadUndici();
  return new Agent({
    connect: { timeout: options.timeoutMs, lookup: guardedLookup(policy.allowPrivate) as never },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}

const agents = new Map<boolean, Promise<Agent>>();

/**
 * fetch for a request made on a caller's or a definition's word: the URL is checked, the sockets
 * connect only to allowed addresses, and redirects are answered as they are (not followed).
 */
export async function guardedFetch(
  raw: string | URL,
  init: RequestInit & { timeoutMs?: number },
  policy: OutboundPolicy,
): Promise<Response> {
  const url = checkOutboundUrl(raw, policy);
  const { fetch } = await loadUndici();
  let agent = agents.get(policy.allowPrivate);
  if (!agent) {
    agent = guardedAgent(policy, { timeoutMs: init.timeoutMs ?? 30_000 });
    agents.set(policy.allowPrivate, agent);
  }
  const { timeoutMs: _, ...rest } = init;
  return fetch(url, { redirect: 'manual', ...rest, dispatcher: await agent } as never) as unknown as Response;
}

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
