import http from 'node:http';

/**
 * A request sent from another loopback address (127.0.0.2, …: Linux routes all of 127/8 to the
 * gateway's 127.0.0.1), so the gateway sees another caller, as it would another machine.
 */
export function fetchFrom(
  localAddress: string,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method, headers: init.headers, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of [value ?? []].flat()) headers.append(name, one);
        }
        resolve(
          new Response(chunks.length ? Buffer.concat(chunks) : null, { status: res.statusCode!, headers }),
        );
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * POST /oauth/token with a JSON body (or a form, with `form: true`); with `from`, sent from that
 * loopback address.
 */
export function postToken(
  baseUrl: string,
  body: Record<string, string>,
  opts: { form?: boolean; headers?: Record<string, string>; from?: string } = {},
): Promise<Response> {
  const init = {
    method: 'POST',
    headers: {
      'content-type': opts.form ? 'application/x-www-form-urlencoded' : 'application/json',
      ...opts.headers,
    },
    body: opts.form ? new URLSearchParams(body).toString() : JSON.stringify(body),
  };
  return opts.from
    ? fetchFrom(opts.from, `${baseUrl}/oauth/token`, init)
    : fetch(`${baseUrl}/oauth/token`, init);
}

/** A gateway access token for the client, via the client_credentials grant. */
export async function gatewayToken(baseUrl: string, clientId: string, clientSecret: string): Promise<string> {
  const res = await postToken(baseUrl, {
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  if (res.status !== 200) throw new Error(`POST /oauth/token answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}
