export interface SubmitConsentOptions {
  /** Emulated user to sign in as (default: the one the page pre-selects). */
  userId?: string;
  decision: 'allow' | 'deny';
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match ? decodeEntities(match[1]!) : undefined;
}

/**
 * Plays the user at an emulator's consent page: fetches the authorize URL, submits the form and
 * returns the redirect Location (the client's redirect URI with `code` or `error`).
 */
export async function submitConsent(authorizeUrl: string, options: SubmitConsentOptions): Promise<string> {
  const page = await fetch(authorizeUrl, { redirect: 'manual' });
  const direct = page.headers.get('location');
  if (page.status >= 300 && page.status < 400 && direct) return new URL(direct, authorizeUrl).toString();
  const html = await page.text();
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${html.slice(0, 500)}`);
  const form = /<form\b[^>]*>/i.exec(html);
  if (!form) throw new Error('no form on the consent page');
  const action = new URL(attribute(form[0], 'action') ?? '', authorizeUrl);
  const fields = new URLSearchParams();
  let selected: string | undefined;
  for (const input of html.matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    const name = attribute(tag, 'name');
    const value = attribute(tag, 'value') ?? '';
    if (!name) continue;
    const type = attribute(tag, 'type');
    if (type === 'radio') {
      if (name === 'user_id' && /\schecked\b/.test(tag)) selected = value;
      continue;
    }
    fields.append(name, value);
  }
  const userId = options.userId ?? selected;
  if (userId) fields.set('user_id', userId);
  fields.set('decision', options.decision);
  const answer = await fetch(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
    redirect: 'manual',
  });
  const location = answer.headers.get('location');
  if (!location)
    throw new Error(`consent submission answered ${answer.status}: ${(await answer.text()).slice(0, 500)}`);
  return new URL(location, action).toString();
}
