import { type Static, Type } from '@sinclair/typebox';
import { ACCOUNT_STATUSES } from '../store/accounts.js';

export const AuthorizationLinkBody = Type.Object(
  {
    connection_name: Type.String({ minLength: 1, maxLength: 64 }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f]+$',
      description: '1–256 characters without control characters, e.g. user_42',
    }),
    redirect_url: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2048,
        description: 'an absolute http(s) URL',
      }),
    ),
    state: Type.Optional(Type.String({ maxLength: 2048 })),
    user_verify_url: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2048,
        description:
          'opt-in user verification: after consent the browser goes here with auth_request_id, and the account becomes ACTIVE once you call POST /api/v1/connected-accounts/verify',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AuthorizationLinkBody = Static<typeof AuthorizationLinkBody>;

export const VerifyUserBody = Type.Object(
  {
    auth_request_id: Type.String({
      pattern: '^areq_[0-9A-Za-z]{1,60}$',
      description: 'the auth_request_id your user_verify_url received (areq_…)',
    }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f]+$',
      description: 'the identifier of the user your application has signed in',
    }),
  },
  { additionalProperties: false },
);
export type VerifyUserBody = Static<typeof VerifyUserBody>;

export const ListAccountsQuery = Type.Object(
  {
    connection_name: Type.Optional(Type.String({ maxLength: 64 })),
    identifier: Type.Optional(Type.String({ maxLength: 256 })),
    status: Type.Optional(Type.Union(ACCOUNT_STATUSES.map((s) => Type.Literal(s)))),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListAccountsQuery = Static<typeof ListAccountsQuery>;

const secret = (description: string) =>
  Type.String({ minLength: 1, maxLength: 8192, pattern: '^[^\\u0000-\\u001f]+$', description });

/** A credential the application already holds, handed to Portico to own from now on. */
export const ImportAccountBody = Type.Object(
  {
    connection_name: Type.String({ minLength: 1, maxLength: 64 }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f]+$',
      description: '1–256 characters without control characters, e.g. user_42',
    }),
    access_token: Type.Optional(secret('OAuth: the access token')),
    refresh_token: Type.Optional(secret('OAuth: the refresh token (Portico refreshes with it)')),
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'OAuth: when the access token expires (RFC 3339)' }),
    ),
    expires_in: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 315_360_000,
        description: 'OAuth: seconds until the access token expires',
      }),
    ),
    scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 200 })),
    api_key: Type.Optional(secret('API-key providers: the key')),
    username: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        pattern: '^[^:\\u0000-\\u001f]+$',
        description: 'basic-auth providers: the user name (no ":")',
      }),
    ),
    password: Type.Optional(secret('basic-auth providers: the password')),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
        maxProperties: 50,
        description: 'provider facts kept with the account (e.g. Salesforce instance_url)',
      }),
    ),
    verify: Type.Optional(
      Type.Boolean({
        description:
          "check the credential with the provider's user-info request before storing it (default: true when the provider has one)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ImportAccountBody = Static<typeof ImportAccountBody>;

export interface AccountView {
  id: string;
  connection_name: string;
  provider: string;
  identifier: string;
  /** Who the account is at the provider, from its user-info request (a name or e-mail). */
  label: string | null;
  status: string;
  status_reason: string | null;
  scopes: string[];
  token_expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}
