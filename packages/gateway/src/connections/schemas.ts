import { type Static, Type } from '@sinclair/typebox';

const name = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
  description: '1–64 letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. notion-prod)',
});
const scopes = Type.Array(
  Type.String({ minLength: 1, maxLength: 512, pattern: '^\\S+$', description: 'a scope without spaces' }),
  {
    maxItems: 100,
    uniqueItems: true,
  },
);
const clientId = Type.String({ minLength: 1, maxLength: 512 });
const clientSecret = Type.String({ minLength: 1, maxLength: 4096 });
const tenant = Type.String({
  pattern: '^(common|organizations|consumers|[0-9a-fA-F-]{36}|[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+)$',
  maxLength: 253,
  description:
    'common, organizations, consumers, a tenant id (GUID) or a verified domain (contoso.onmicrosoft.com)',
});
// No pattern: a near miss ("google-calendar") reaches the catalog, which answers with did_you_mean.
const providerKey = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'a provider key: a built-in one (GET /api/v1/providers) or one of your custom providers',
});
/** Values of the provider's connection parameters (e.g. Zendesk's subdomain). */
const parameters = Type.Record(
  Type.String({ pattern: '^[a-z][a-z_]*$' }),
  Type.String({ minLength: 1, maxLength: 253 }),
  { maxProperties: 10 },
);
const displayName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f<>]+$' });

export const CreateConnectionBody = Type.Object(
  {
    name,
    provider: providerKey,
    client_id: Type.Optional(clientId),
    client_secret: Type.Optional(clientSecret),
    scopes: Type.Optional(scopes),
    sandbox: Type.Optional(Type.Boolean()),
    tenant: Type.Optional(tenant),
    parameters: Type.Optional(parameters),
    display_name: Type.Optional(displayName),
  },
  { additionalProperties: false },
);
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

export const UpdateConnectionBody = Type.Object(
  {
    client_id: Type.Optional(clientId),
    client_secret: Type.Optional(clientSecret),
    scopes: Type.Optional(scopes),
    tenant: Type.Optional(tenant),
    parameters: Type.Optional(parameters),
    display_name: Type.Optional(displayName),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateConnectionBody = Static<typeof UpdateConnectionBody>;

export const ConnectionView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  provider: Type.String(),
  client_id: Type.String(),
  scopes: Type.Array(Type.String()),
  redirect_uri: Type.String(),
  sandbox: Type.Boolean(),
  tenant: Type.Union([Type.String(), Type.Null()]),
  parameters: Type.Record(Type.String(), Type.String()),
  display_name: Type.Union([Type.String(), Type.Null()]),
  mcp_server: Type.Optional(
    Type.Object(
      {
        url: Type.String(),
        resource: Type.String(),
        issuer: Type.String({ description: "'' when the server asks for no authorization." }),
        registration: Type.Union(
          [
            Type.Literal('client_id_metadata_document'),
            Type.Literal('dynamic'),
            Type.Literal('pre_registered'),
            Type.Literal('none'),
          ],
          { description: 'none: the server asks for no authorization (no client, no token).' },
        ),
        transport: Type.Optional(
          Type.Literal('sse', {
            description: 'The server speaks only the older HTTP+SSE transport (2024-11-05).',
          }),
        ),
      },
      {
        description:
          'A remote MCP server: where Portico found its authorization server, and how it registered.',
      },
    ),
  ),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type ConnectionView = Static<typeof ConnectionView>;

export const ListConnectionsQuery = Type.Object(
  {
    provider: Type.Optional(providerKey),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListConnectionsQuery = Static<typeof ListConnectionsQuery>;
