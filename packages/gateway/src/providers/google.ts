import type { ProviderDefinition } from './types.js';

/** Google's OAuth facts, shared by the four Google APIs. */
export const googleOAuth: ProviderDefinition['oauth'] = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  // Revoking the refresh token ends the whole grant.
  revocation: { url: 'https://oauth2.googleapis.com/revoke', style: 'form', token: 'refresh' },
  tokenRequest: 'form_post',
  pkce: true,
  scopeSeparator: ' ',
  defaultScopes: [],
  requiredScopes: [],
  // offline + consent is what makes Google return a refresh token on every authorization.
  extraAuthorizeParams: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  refreshRotates: false,
  refreshMarginSeconds: 300,
};
