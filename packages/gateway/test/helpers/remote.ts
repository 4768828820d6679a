import { submitConsent } from '@portico/emulators';
import { browserCookie, openLink } from './flow.js';
import { gatewayToken } from './token.js';

/** Drives a gateway over HTTP only (for gateways running in other processes). */
export class RemoteGateway {
  private token?: string;

  constructor(
    readonly url: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
  ) {}

  static fromStdout(url: string, stdout: string): RemoteGateway {
    const match = /client_id:\s+(cli_\w+)\n\s+client_secret:\s+(pcs_\w+)/.exec(stdout);
    if (!match) throw new Error(`no credentials in output:\n${stdout}`);
    return new RemoteGateway(url, match[1]!, match[2]!);
  }

  withUrl(url: string): RemoteGateway {
    return new RemoteGateway(url, this.clientId, this.clientSecret);
  }

  async bearer(): Promise<string> {
    if (!this.token) {
      this.token = await gatewayToken(this.url, this.clientId, this.clientSecret);
    }
    return this.token;
  }

  async api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${await this.bearer()}`);
    if (init.json !== undefined) headers.set('content-type', 'application/json');
    return fetch(`${this.url}${path}`, {
      ...init,
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
  }

  /** Creates a sandbox connection and authorizes `identifier` through the consent page. */
  async sandboxAccount(provider: string, connection: string, identifier: string): Promise<string> {
    const created = await this.api('/api/v1/connections', {
      method: 'POST',
      json: { name: connection, provider, sandbox: true },
    });
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`connection: ${created.status} ${await created.text()}`);
    const link = (await (
      await this.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: connection, identifier },
      })
    ).json()) as { link: string; connected_account_id: string };
    const start = await openLink(link.link);
    const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    if (done.status !== 200) throw new Error(`callback: ${done.status} ${await done.text()}`);
    return link.connected_account_id;
  }
}

/** Peak and current resident memory of a process, in bytes (Linux). */
export async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}
