import { randomBytes } from 'node:crypto';
import { type Portico, PorticoError, type ProviderKey } from '@portico/sdk';
import { remoteToolNames } from '../tools/remote-mcp/naming.js';
import { printJson } from './output.js';

export interface TryOptions {
  url: string;
  identifier: string;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  scopes?: string[] | undefined;
  /** A tool of the server to call (its own name), with `input`. */
  tool?: string | undefined;
  input?: Record<string, unknown> | undefined;
  /** Leave the provider and connection in place afterwards. */
  keep?: boolean;
  json?: boolean;
  /** How long to wait for a person to authorize in a browser when the link needs one. */
  waitMs?: number;
}

/** Step-up rounds before giving up: a server that keeps asking for more scopes is not followed for ever. */
const STEP_UPS = 2;
const MAX_HOPS = 12;

/**
 * `portico remote-mcp try <url>`: connects a running gateway to a remote MCP server exactly as an
 * application would — a custom provider naming the URL, a connection (the gateway discovers the
 * server's authorization and registers its client), an authorization link for one identifier,
 * the server's tools listed and one called through the gateway — so every request the server sees
 * is the gateway's own. The link is followed here as a browser would while no person is needed
 * (an authorization server that consents at once, as test servers do); otherwise it is printed for
 * a browser and the account is awaited. A tool call refused for missing scopes is stepped up as the
 * problem says: the connection's scopes widened, the user sent through a new link.
 */
export async function tryRemoteMcpServer(portico: Portico, options: TryOptions): Promise<number> {
  const suffix = randomBytes(4).toString('hex');
  const key = `mcp_try_${suffix}` as ProviderKey;
  const name = `try-${suffix}`;
  const report: Record<string, unknown> = { url: options.url, provider: key, connection: name };
  const say = (line: string) => {
    if (!options.json) process.stderr.write(`${line}\n`);
  };
  let created = { provider: false, connection: false };
  try {
    const origin = new URL(options.url).origin;
    await portico.providers.create({
      key,
      display_name: `Remote MCP server at ${new URL(options.url).host}`.slice(0, 80),
      auth: { kind: 'mcp' },
      mcp: { url: options.url },
      api: { base_url: origin },
    } as never);
    created = { ...created, provider: true };
    const connection = await portico.connections.create({
      name,
      provider: key,
      ...(options.clientId ? { clientId: options.clientId } : {}),
      ...(options.clientSecret ? { clientSecret: options.clientSecret } : {}),
      ...(options.scopes ? { scopes: options.scopes } : {}),
    });
    created = { ...created, connection: true };
    report.mcp_server = (connection as unknown as { mcpServer?: unknown }).mcpServer;
    report.scopes = connection.scopes;
    say(`connected: ${JSON.stringify(report.mcp_server)} scopes=${connection.scopes.join(' ') || '(none)'}`);

    await authorize(portico, name, options, say);
    const tools = await portico.tools.list({ connection: name });
    report.tools = tools.map((t) => t.name);
    say(`tools: ${tools.map((t) => t.name).join(', ') || '(none)'}`);

    if (options.tool) {
      const toolName = remoteToolNames(name, [options.tool]).get(options.tool)!;
      for (let round = 0; ; round++) {
        try {
          const result = await portico.tools.execute({
            toolName,
            identifier: options.identifier,
            connectionName: name,
            toolInput: options.input ?? {},
          });
          report.result = result.data;
          say(`${options.tool}: ${JSON.stringify(result.data)}`);
          break;
        } catch (error) {
          const required = stepUpScopes(error);
          if (!required || round >= STEP_UPS) throw error;
          say(`step-up: ${options.tool} needs ${required.join(' ')}; authorizing again`);
          await portico.connections.update(name, { scopes: required });
          await authorize(portico, name, options, say);
        }
      }
    }
    if (options.json) printJson({ ...report, ok: true });
    return 0;
  } catch (error) {
    const problem = error instanceof PorticoError ? error.problem : { detail: (error as Error).message };
    if (options.json) printJson({ ...report, ok: false, problem });
    else process.stderr.write(`failed: ${JSON.stringify(problem)}\n`);
    return 1;
  } finally {
    if (!options.keep) {
      if (created.connection) await portico.connections.delete(name).catch(() => {});
      if (created.provider) await portico.providers.delete(key).catch(() => {});
    }
  }
}

/** The scopes a refused call asks for (`step_up` problems), or undefined for any other failure. */
function stepUpScopes(error: unknown): string[] | undefined {
  if (!(error instanceof PorticoError)) return undefined;
  const body = error.problem as { step_up?: unknown; required_scopes?: unknown };
  if (body.step_up !== true || !Array.isArray(body.required_scopes) || !body.required_scopes.length)
    return undefined;
  return body.required_scopes.map(String);
}

/**
 * One authorization link, followed: the landing page's button, the authorization server's
 * redirects and the callback, with the cookie the link binds the trip to. An authorization server
 * that shows a page instead (a person must sign in) gets the link printed, and the account awaited.
 */
async function authorize(
  portico: Portico,
  connectionName: string,
  options: TryOptions,
  say: (line: string) => void,
): Promise<void> {
  const link = await portico.getAuthorizationLink({ connectionName, identifier: options.identifier });
  const cookies = new Map<string, string>();
  const gateway = new URL(link.link).origin;
  const send = async (url: string, init: RequestInit = {}) => {
    const sameOrigin = new URL(url).origin === gateway;
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers:
        sameOrigin && cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {},
      signal: AbortSignal.timeout(15_000),
    });
    if (sameOrigin) {
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const eq = pair!.indexOf('=');
        if (eq > 0) cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
      }
    }
    return response;
  };
  const landing = await send(link.link);
  const html = await landing.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (landing.status !== 200 || !action) throw new Error(`the authorization link answered ${landing.status}`);
  let response = await send(new URL(decodeEntities(action), link.link).href, { method: 'POST' });
  let url = link.link;
  for (let hop = 0; hop < MAX_HOPS && response.status >= 300 && response.status < 400; hop++) {
    await response.body?.cancel();
    url = new URL(response.headers.get('location') ?? '', url).href;
    response = await send(url);
  }
  await response.body?.cancel();
  const account = await portico.connectedAccounts.get(link.connectedAccountId);
  if (account.status === 'ACTIVE') {
    say(`authorized: ${options.identifier} (${account.id})`);
    return;
  }
  if (response.status >= 400) {
    throw new Error(
      `authorizing ${options.identifier} failed: ${url.split('?')[0]} answered ${response.status}`,
    );
  }
  // A page a person must act on: the link is theirs to open.
  say(`open this link in a browser to authorize ${options.identifier}:\n  ${link.link}`);
  const deadline = Date.now() + (options.waitMs ?? 300_000);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if ((await portico.connectedAccounts.get(link.connectedAccountId)).status === 'ACTIVE') return;
  }
  throw new Error(`${options.identifier} did not authorize in time (the account is ${account.status})`);
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCharCode(Number.parseInt(code, 16)))
    .replaceAll('&amp;', '&');
}
