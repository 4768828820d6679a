import {
  type AuthenticationProvider,
  Client,
  type Context,
  type Middleware,
  MiddlewareFactory,
} from '@microsoft/microsoft-graph-client';

/**
 * The SDK's AuthenticationHandler attaches the bearer token only to https URLs of Graph or of the
 * configured custom hosts (and strips it otherwise), so against a plain-http emulator it would never
 * send one. This stand-in does only that job; the rest of the SDK's default chain (retry,
 * redirect, telemetry, fetch) stays as shipped.
 */
class BearerHandler implements Middleware {
  private next?: Middleware;
  constructor(private readonly token: () => string) {}

  async execute(context: Context): Promise<void> {
    const headers = new Headers(context.options?.headers as ConstructorParameters<typeof Headers>[0]);
    headers.set('Authorization', `Bearer ${this.token()}`);
    context.options = { ...context.options, headers: Object.fromEntries(headers.entries()) };
    await this.next!.execute(context);
  }

  setNext(next: Middleware): void {
    this.next = next;
  }
}

export function graphClient(baseUrl: string, token: () => string): Client {
  const provider: AuthenticationProvider = { getAccessToken: async () => token() };
  const chain = MiddlewareFactory.getDefaultMiddlewareChain(provider);
  chain[0] = new BearerHandler(token);
  return Client.initWithMiddleware({ baseUrl: `${baseUrl}/`, middleware: chain });
}

export async function readAll(stream: ReadableStream<Uint8Array> | NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
