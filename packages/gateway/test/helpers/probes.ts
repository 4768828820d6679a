import type { ProviderKey } from '../../src/providers/catalog.js';

/** One real API call per provider, to prove an access token works at the (emulated) provider. */
export async function probe(provider: ProviderKey, apiBase: string, token: string): Promise<number> {
  const auth = { authorization: `Bearer ${token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const calls: Record<ProviderKey, () => Promise<Response>> = {
    notion: () => fetch(`${apiBase}/v1/users/me`, { headers: { ...auth, 'notion-version': '2022-06-28' } }),
    google_calendar: () => fetch(`${apiBase}/calendar/v3/users/me/calendarList`, { headers: auth }),
    google_drive: () => fetch(`${apiBase}/drive/v3/files?pageSize=1`, { headers: auth }),
    google_sheets: () =>
      fetch(`${apiBase}/v4/spreadsheets`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ properties: { title: 'probe' } }),
      }),
    google_docs: () =>
      fetch(`${apiBase}/v1/documents`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ title: 'probe' }),
      }),
    hubspot: () => fetch(`${apiBase}/crm/v3/owners/`, { headers: auth }),
    sharepoint: () => fetch(`${apiBase}/v1.0/me`, { headers: auth }),
  };
  const call = calls[provider];
  if (!call) throw new Error(`no probe for ${provider}`);
  const res = await call();
  await res.arrayBuffer();
  return res.status;
}
