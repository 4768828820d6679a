import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseBasicCredentials } from '../../core/oauth-requests.js';
import type { ProviderContext } from '../../core/types.js';
import { bodyText, formFields, jsonValue } from './body.js';
import { readCredential } from './credentials.js';
import type { OAuthSpec, PlayedDefinition, RevocationStyle } from './definition.js';

// Revoking a grant at the definition's revocation URL, in the definition's style. The token the
// definition names (access or refresh) revokes the whole grant: its access tokens are refused and
// its refresh token gets invalid_grant.

type Revocation = NonNullable<OAuthSpec['revocation']>;

/** The method each style is sent with. */
export function revocationMethod(style: RevocationStyle): 'POST' | 'DELETE' {
  return style === 'delete' || style === 'basic_delete' || style === 'credential_delete' ? 'DELETE' : 'POST';
}

function needsBasic(style: RevocationStyle): boolean {
  return style.startsWith('basic_');
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The token the request names: in the path (`{token}`), else in the body the style sends. */
function tokenOf(
  req: FastifyRequest,
  revocation: Revocation,
  groups: Record<string, string>,
  definition: PlayedDefinition,
): string | undefined {
  if (groups.token) return safeDecode(groups.token);
  const text = bodyText(req);
  switch (revocation.style) {
    case 'credential_post':
    case 'credential_delete': {
      // The access token, sent the way the API takes it (Dropbox, Zendesk: Bearer; Shopify: its header).
      const read = readCredential(definition.credential, req);
      return read.ok && 'token' in read ? read.token : undefined;
    }
    case 'form':
    case 'form_client':
    case 'basic_form':
      return formFields(text).token;
    case 'basic_json':
    case 'basic_delete': {
      const body = jsonValue(text) as Record<string, unknown> | undefined;
      const value = body?.[revocation.style === 'basic_json' ? 'token' : 'access_token'];
      return typeof value === 'string' ? value : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The client of a `form_client` revocation (RFC 7009 §2.1: the client authenticates as at the token
 * endpoint), from Basic credentials or the form's client_id and client_secret.
 */
function formClient(
  req: FastifyRequest,
  definition: PlayedDefinition,
  ctx: ProviderContext,
): string | undefined {
  if (req.headers.authorization) return basicClient(req, definition, ctx);
  const fields = formFields(bodyText(req));
  if (!fields.client_id || !fields.client_secret) return undefined;
  const verified = ctx.verifyClient(fields.client_id, fields.client_secret);
  return verified.ok && verified.client.provider === definition.key ? verified.client.clientId : undefined;
}

/** The client of a Basic-authenticated style; undefined when the credentials are missing or wrong. */
function basicClient(
  req: FastifyRequest,
  definition: PlayedDefinition,
  ctx: ProviderContext,
): string | undefined {
  const credentials = parseBasicCredentials(req.headers.authorization);
  if (!credentials) return undefined;
  const verified = ctx.verifyClient(credentials.clientId, credentials.clientSecret);
  return verified.ok && verified.client.provider === definition.key ? verified.client.clientId : undefined;
}

/** The client of the grant behind a token of the named kind; undefined when it is no such token. */
function ownerOf(
  token: string,
  kind: Revocation['token'],
  ctx: ProviderContext,
): { clientId?: string } | undefined {
  if (kind === 'refresh') {
    const grant = ctx.grantForRefreshToken(token);
    return grant ? { clientId: grant.clientId } : undefined;
  }
  const resolved = ctx.resolveAccessToken(token);
  if (resolved.ok) return { clientId: resolved.token.clientId };
  // An expired (or already revoked) access token still names its grant.
  return resolved.reason === 'expired' || resolved.reason === 'revoked' ? {} : undefined;
}

export function revoke(
  req: FastifyRequest,
  reply: FastifyReply,
  definition: PlayedDefinition,
  revocation: Revocation,
  groups: Record<string, string>,
  ctx: ProviderContext,
): FastifyReply {
  const deleting = revocationMethod(revocation.style) === 'DELETE';
  let clientId: string | undefined;
  if (needsBasic(revocation.style) || revocation.style === 'form_client') {
    clientId =
      revocation.style === 'form_client'
        ? formClient(req, definition, ctx)
        : basicClient(req, definition, ctx);
    if (!clientId) {
      return reply
        .code(401)
        .header('www-authenticate', 'Basic')
        .send({ error: 'invalid_client', error_description: 'Client authentication failed.' });
    }
  }
  const token = tokenOf(req, revocation, groups, definition);
  if (!token) {
    return reply
      .code(400)
      .send({ error: 'invalid_request', error_description: 'Missing required parameter: token' });
  }
  const owner = ownerOf(token, revocation.token, ctx);
  const known = owner !== undefined && (!clientId || !owner.clientId || owner.clientId === clientId);
  if (known) ctx.revokeToken(token);
  // RFC 7009 §2.2: an unknown token is no error; a DELETE of a resource that is not there is a 404.
  if (deleting && !known) {
    return reply
      .code(404)
      .send({ error: 'invalid_token', error_description: `No such ${revocation.token} token.` });
  }
  return deleting ? reply.code(204).send() : reply.code(200).send({});
}
