/** POST /oauth/token with a JSON body (or a form, with `form: true`). */
export function postToken(
  baseUrl: string,
  body: Record<string, string>,
  opts: { form?: boolean; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': opts.form ? 'application/x-www-form-urlencoded' : 'application/json',
      ...opts.headers,
    },
    body: opts.form ? new URLSearchParams(body).toString() : JSON.stringify(body),
  });
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
