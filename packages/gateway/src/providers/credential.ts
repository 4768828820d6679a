import type { ProviderDefinition } from './types.js';

/**
 * Where and how a provider takes the end user's credential, as its definition says: a header
 * (`Authorization: Bearer {token}`, `X-Shopify-Access-Token: {token}`, `Authorization: Basic {basic}`)
 * or a query parameter. `secret` is the access token or API key, or `user:password` for basic.
 */
export function credentialPlacement(
  provider: ProviderDefinition,
  secret: string,
): { in: 'header' | 'query'; name: string; value: string } {
  const { credential } = provider.api;
  const value = credential.value.includes('{basic}')
    ? credential.value.replace('{basic}', Buffer.from(secret, 'utf8').toString('base64'))
    : credential.value.replace('{token}', secret);
  return { in: credential.in, name: credential.name, value };
}

/** A path with the credential's query parameter set (replacing one the caller sent). */
export function withQueryCredential(path: string, name: string, value: string): string {
  const q = path.indexOf('?');
  const params = new URLSearchParams(q === -1 ? '' : path.slice(q + 1));
  params.set(name, value);
  return `${q === -1 ? path : path.slice(0, q)}?${params.toString()}`;
}
