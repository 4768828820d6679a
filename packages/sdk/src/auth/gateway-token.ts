import { PorticoConnectionError, type ProblemBody, problemError } from '../errors/errors.js';

export interface GatewayCredentials {
  envUrl: string;
  clientId: string;
  clientSecret: string;
  fetch: typeof fetch;
}

interface HeldToken {
  value: string;
  /** On the monotonic clock: a wall-clock jump cannot make a token look fresh or stale. */
  renewAt: number;
}

/**
 * The gateway access token (client_credentials), fetched once and reused. It is renewed shortly
 * before it expires, or when the gateway refuses it; callers that need a new token at the same
 * moment wait for one shared request instead of each fetching their own.
 */
export class GatewayTokenSource {
  private held: HeldToken | undefined;
  private pending: Promise<string> | undefined;

  constructor(private readonly credentials: GatewayCredentials) {}

  async current(): Promise<string> {
    if (this.held && performance.now() < this.held.renewAt) return this.held.value;
    return this.renew();
  }

  /**
   * A new token. `refused` is the token the gateway just answered 401 to: if another caller has
   * already replaced it, that replacement is used rather than fetching again.
   */
  renew(refused?: string): Promise<string> {
    if (refused !== undefined && this.held && this.held.value !== refused) {
      return Promise.resolve(this.held.value);
    }
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async fetchToken(): Promise<string> {
    const started = performance.now();
    let res: Response;
    try {
      res = await this.credentials.fetch(`${this.credentials.envUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: this.credentials.clientId,
          client_secret: this.credentials.clientSecret,
        }).toString(),
      });
    } catch (error) {
      throw new PorticoConnectionError(
        `Could not reach the Portico gateway at ${this.credentials.envUrl}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const body = (await res.json().catch(() => ({}))) as ProblemBody & {
      access_token?: string;
      expires_in?: number;
    };
    if (!res.ok || typeof body.access_token !== 'string') {
      throw problemError(res.status, body, res.headers.get('retry-after'));
    }
    const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : 3600) * 1000;
    // Renew a tenth of the lifetime early (at most a minute), so a call never leaves with a token
    // that expires on the way.
    const margin = Math.min(60_000, lifetimeMs / 10);
    this.held = { value: body.access_token, renewAt: started + lifetimeMs - margin };
    return body.access_token;
  }
}
