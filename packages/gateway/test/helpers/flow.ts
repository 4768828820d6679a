import { submitConsent } from '@portico/emulators';
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';

export interface AuthorizeOptions {
  connection: string;
  identifier: string;
  redirectUrl?: string;
  state?: string;
  userId?: string;
  decision?: 'allow' | 'deny';
  /**
   * How the provider answers its authorize URL, resolving to the callback URL it sends the browser
   * to; by default the emulator's consent page, answered with `decision`.
   */
  consent?: (authorizeUrl: string) => Promise<string>;
}

export interface AuthorizeResult {
  accountId: string;
  link: string;
  /** The provider's authorize URL the link redirected to (a server that asks nothing: the callback). */
  authorizeUrl: string;
  /** The gateway callback URL the provider redirected back to. */
  callbackUrl: string;
  /** The gateway's answer to the callback. */
  response: Response;
}

/** Plays the end user: opens the link, answers the consent page, follows back to the gateway. */
export async function authorize(t: TestGateway, opts: AuthorizeOptions): Promise<AuthorizeResult> {
  const linkRes = await t.api('/api/v1/connected-accounts/authorization-link', {
    method: 'POST',
    json: {
      connection_name: opts.connection,
      identifier: opts.identifier,
      ...(opts.redirectUrl ? { redirect_url: opts.redirectUrl } : {}),
      ...(opts.state ? { state: opts.state } : {}),
    },
  });
  expect(linkRes.status).toBe(201);
  const { link, connected_account_id: accountId } = (await linkRes.json()) as {
    link: string;
    connected_account_id: string;
  };
  const start = await openLink(link);
  expect(start.status).toBe(303);
  const authorizeUrl = start.headers.get('location')!;
  const callbackUrl = opts.consent
    ? await opts.consent(authorizeUrl)
    : await submitConsent(authorizeUrl, {
        decision: opts.decision ?? 'allow',
        ...(opts.userId ? { userId: opts.userId } : {}),
      });
  const response = await fetch(callbackUrl, {
    redirect: 'manual',
    headers: { cookie: browserCookie(start) },
  });
  return { accountId, link, authorizeUrl, callbackUrl, response };
}

/**
 * Plays the person who opens a link: GET shows the landing page (spending nothing, as previewers
 * do), its button POSTs back to the link, which answers with the provider's consent screen (303)
 * or Portico's credential form (200) and sets the binding cookie. A link that cannot be used
 * answers its error page to the GET, returned as it is.
 */
export async function openLink(link: string): Promise<Response> {
  const landing = await fetch(link, { redirect: 'manual' });
  if (landing.status !== 200) return landing;
  const html = await landing.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`the link's page has no form: ${html.slice(0, 200)}`);
  return fetch(new URL(action.replaceAll('&#47;', '/'), link), { method: 'POST', redirect: 'manual' });
}

/**
 * The cookie /connect/{token} set in the "browser", as a browser would send it back at the callback
 * (the trip is bound to the browser that opened the link).
 */
export function browserCookie(start: Response): string {
  return start.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

export async function createSandboxConnection(
  t: TestGateway,
  name: string,
  provider: string,
): Promise<{ id: string }> {
  const res = await t.api('/api/v1/connections', { method: 'POST', json: { name, provider, sandbox: true } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}

export async function accountOf(t: TestGateway, id: string): Promise<Record<string, unknown>> {
  const res = await t.api(`/api/v1/connected-accounts/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** A sandbox connection for `provider` and an ACTIVE account for `identifier` on it (emulated user `userId`). */
export async function sandboxAccount(
  t: TestGateway,
  opts: { provider: string; identifier: string; connection?: string; userId?: string },
): Promise<{ connection: string; accountId: string }> {
  const connection = opts.connection ?? `sandbox-${opts.provider.replaceAll('_', '-')}`;
  const existing = await t.api(`/api/v1/connections/${connection}`);
  if (existing.status === 404) await createSandboxConnection(t, connection, opts.provider);
  const result = await authorize(t, {
    connection,
    identifier: opts.identifier,
    ...(opts.userId ? { userId: opts.userId } : {}),
  });
  expect(result.response.status).toBe(200);
  return { connection, accountId: result.accountId };
}

/** POST /api/v1/tools/execute; returns status and parsed body. */
export async function executeTool(
  t: TestGateway,
  body: {
    tool_name: string;
    identifier: string;
    tool_input?: unknown;
    connection_name?: string;
    [key: string]: unknown;
  },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await t.api('/api/v1/tools/execute', { method: 'POST', json: body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
